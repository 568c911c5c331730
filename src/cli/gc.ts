/**
 * @module `strata gc`: one garbage-collection pass — frees the blobs nothing reaches any more
 * (after the grace), cleans sparse packs — or, with --dry-run, reports exactly what a pass
 * would free now and changes nothing.
 *
 *   strata gc [--data DIR|URL] [--dry-run] [--grace DUR] [--clean-below F] [--json]
 *
 * On a stopped repository it acts directly (its directory lock; an S3 URL with --offline);
 * while a server holds the repository it goes through that server's admin API
 * (POST /_strata/admin/v1/gc; admin-target.ts). Progress lines on stderr (local only: the admin
 * API answers once the pass is done), the report on stdout. Exit codes: 0 done, 1 refused (a bad
 * grace), 2 bad command line, or the repository or server cannot be used (a mark that cannot read
 * everything frees nothing and exits 2).
 */
import { adminRequest } from '../admin/client.js';
import { adminGc, type AdminGcRequest, type AdminGcResult } from '../admin/gc.js';
import type { ParsedArgs } from './args.js';
import type { Verb } from './verb.js';
import { defineOption, resolveOptions, type OptionDef } from '../server/options.js';
import { booleanType, durationType, formatDuration, stringType } from '../server/option-types.js';
import { openTarget, reportFailure, TARGET_NOTES, TARGET_OPTIONS, type Target, type TargetOptions } from './admin-target.js';
import { DEFAULT_GRACE_MS } from '../store/gc.js';
import { UsageError } from './args.js';

interface GcCliOptions extends TargetOptions {
  dryRun?: boolean;
  grace: number;
  cleanBelow?: string;
}

/** Interval between progress lines on stderr, ms. */
const PROGRESS_MS = 500;
/** How long `strata gc` waits for a server's pass: a full mark of a large repository, not 30 s. */
const REMOTE_TIMEOUT_MS = 6 * 60 * 60 * 1000;

const once = { env: false, file: false } as const;
const opt = <K extends keyof GcCliOptions & string>(def: Parameters<typeof defineOption<GcCliOptions, K>>[0]) => defineOption<GcCliOptions, K>(def);

const OPTIONS: OptionDef<GcCliOptions>[] = [
  ...(TARGET_OPTIONS as OptionDef<GcCliOptions>[]),
  opt({ name: 'dry-run', key: 'dryRun', type: booleanType(), help: 'report what would be freed; change nothing', from: once }),
  opt({ name: 'grace', key: 'grace', type: durationType(), default: DEFAULT_GRACE_MS, help: 'free only what stayed unreachable (and old) this long', from: once }),
  opt({ name: 'clean-below', key: 'cleanBelow', type: stringType({ maxLength: 16, placeholder: '<fraction>' }), help: 'clean packs less live than this (default 0.6; 0 = never)', from: once }),
];

const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;

function summary(r: AdminGcResult, where: string): string {
  const secs = Math.max(r.ms, 1) / 1000;
  return [
    `gc of ${where}${r.dryRun ? ' (dry run: nothing changed)' : ''}, grace ${r.grace}, anchor at ${r.anchorSeq}`,
    `examined     ${r.examinedBlobs} blobs, ${mib(r.examinedBytes)} (${Math.round(r.examinedBlobs / secs)} blobs/s, ${mib(r.examinedBytes / secs)}/s); ${r.liveBlobs} live`,
    `unreachable  ${r.unreachableBlobs} blobs, ${mib(r.unreachableBytes)}`,
    `${r.dryRun ? 'would free ' : 'freed      '}  ${r.freedBlobs} blobs, ${r.freedBytes} bytes (${mib(r.freedBytes)})`,
    `kept         ${r.pendingBlobs} unreachable blobs for a later pass (inside the grace)`,
    `cleaned      ${r.cleanedPacks} packs, ${mib(r.movedBytes)} of live bodies moved`,
    ...(r.deferredPacks ? [`deferred     ${r.deferredPacks} sparse packs to a later pass (their referrers would not fit this one)`] : []),
    ...(r.errors ? [`errors       ${r.errors} (left for a later pass)`] : []),
    `took         ${secs.toFixed(1)} s`,
  ].join('\n');
}

export const gcVerb: Verb = {
  name: 'gc',
  summary: 'free what nothing reaches any more (garbage collection)',
  synopsis: '[options]',
  description: `Marks every blob the repository reaches from its anchor (every bucket and fork, every version
and retained point, every upload in progress), cleans packs whose live fraction is below
--clean-below, and deletes what stayed unreachable for --grace (default ${formatDuration(DEFAULT_GRACE_MS)}): a pass notes what
it finds unreachable, a later pass past the grace deletes it. --dry-run reports exactly what a pass
would free now and changes nothing.`,
  options: OPTIONS as readonly OptionDef<never>[],
  notes: `${TARGET_NOTES}

exit codes: 0 done, 1 refused (a bad grace or threshold), 2 bad command line, or the repository or
server cannot be used (nothing is freed when the mark cannot read everything).`,
  run: (args, env) => runGcVerb(args, env),
};

async function runGcVerb(args: ParsedArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const o = resolveOptions(OPTIONS, { flags: args.flags, env }) as GcCliOptions;
  let cleanBelow: number | undefined;
  if (o.cleanBelow !== undefined) {
    cleanBelow = Number(o.cleanBelow);
    if (!(o.cleanBelow.trim() !== '' && cleanBelow >= 0 && cleanBelow <= 1)) throw new UsageError(`--clean-below: ${JSON.stringify(o.cleanBelow)} is not a fraction within 0..1`);
  }
  const req: AdminGcRequest = { dryRun: o.dryRun === true, grace: formatDuration(o.grace), ...(cleanBelow !== undefined ? { cleanBelow } : {}) };
  const progress = (l: string) => process.stderr.write(`gc: ${l}\n`);
  let t: Target | undefined;
  try {
    t = await openTarget(o, env, progress);
    let last = 0;
    const r = t.store
      ? await adminGc(t.store, req, (p) => {
          const now = Date.now();
          if (now - last < PROGRESS_MS) return;
          last = now;
          if (p.phase === 'mark') progress(`mark: ${p.bucketsDone}/${p.buckets} buckets, ${p.entries} index entries, ${p.live} live blobs`);
          else if (p.phase === 'clean') progress(`clean: ${p.packsDone}/${p.packs} packs, ${mib(p.movedBytes)} moved`);
          else progress(`sweep: ${p.examined} blobs examined, ${p.unreachable} unreachable, ${p.freed} freed (${mib(p.freedBytes)})`);
        })
      : ((await adminRequest(t.remote, 'POST', ['gc'], req, REMOTE_TIMEOUT_MS)) as AdminGcResult);
    process.stdout.write(o.json ? `${JSON.stringify(r, null, 2)}\n` : `${summary(r, t.where)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    return reportFailure('gc', err, t?.where);
  } finally {
    await t?.close();
  }
}
