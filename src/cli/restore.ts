/**
 * @module `strata restore BUCKET --to TIME [--prefix P] [--dry-run]`: brings a bucket (or the
 * keys under a prefix) back to what it was at TIME, as new writes (store/restore.ts): the
 * restore is itself history and can be undone by restoring to a time before it.
 *
 * TIME is RFC 3339 or a duration before now, resolved ONCE when the command starts and
 * printed: re-run with that exact time to resume an interrupted restore (it is idempotent:
 * keys already restored are left alone). Progress lines go to stderr after every commit (and,
 * through a server, after every bounded request), the summary to stdout; a dry run lists the
 * changes it would make (the first 1000) and writes nothing.
 * Where it acts: admin-target.ts. Exit codes: 0 done, 1 refused (no such bucket, a time
 * outside the history window), 2 bad command line, or the repository or server cannot be used.
 */
import { adminRequest } from '../admin/client.js';
import { adminRestore, type AdminRestoreRequest, type AdminRestoreResult } from '../admin/history.js';
import { UsageError, type ParsedArgs } from './args.js';
import type { Verb } from './verb.js';
import { defineOption, resolveOptions, type OptionDef } from '../server/options.js';
import { booleanType, stringType } from '../server/option-types.js';
import { openTarget, parseCliTime, reportFailure, TARGET_NOTES, TARGET_OPTIONS, type Target, type TargetOptions } from './admin-target.js';
import { formatTime } from '../store/time-text.js';
import type { RestoreChange, RestoreProgress } from '../store/restore.js';

interface RestoreCliOptions extends TargetOptions {
  to?: string;
  prefix?: string;
  dryRun?: boolean;
}

const once = { env: false, file: false } as const;
const opt = <K extends keyof RestoreCliOptions & string>(def: Parameters<typeof defineOption<RestoreCliOptions, K>>[0]) => defineOption<RestoreCliOptions, K>(def);

/** Changes a dry run prints (the store lists at most 1000 per request). */
const MAX_PRINTED_CHANGES = 1000;

const OPTIONS: OptionDef<RestoreCliOptions>[] = [
  ...(TARGET_OPTIONS as OptionDef<RestoreCliOptions>[]),
  opt({ name: 'to', key: 'to', type: stringType({ maxLength: 64, placeholder: '<time>' }), help: 'the time to restore to (required)', from: once }),
  opt({ name: 'prefix', key: 'prefix', type: stringType({ maxLength: 1024, placeholder: '<prefix>' }), help: 'only keys starting with this', from: once }),
  opt({ name: 'dry-run', key: 'dryRun', type: booleanType(), help: 'report what would change, write nothing', from: once }),
];

type Totals = Omit<AdminRestoreResult, 'next' | 'last'>;

/** Runs the restore through the target: one local call, or bounded requests until done. */
async function restore(t: Target, req: AdminRestoreRequest, onProgress: (p: RestoreProgress) => void): Promise<Totals> {
  if (t.store) return adminRestore(t.store, req, { onProgress });
  const totals: Totals = { bucket: req.bucket, to: req.to, prefix: req.prefix ?? '', dryRun: req.dryRun === true, scanned: 0, restored: 0, deleted: 0, unchanged: 0, commits: 0, changes: [] };
  let after: string | undefined;
  for (;;) {
    const { bucket, ...body } = req;
    const r = (await adminRequest(t.remote, 'POST', ['buckets', bucket, 'restore'], { ...body, ...(after !== undefined ? { after } : {}) })) as AdminRestoreResult;
    for (const k of ['scanned', 'restored', 'deleted', 'unchanged', 'commits'] as const) totals[k] += r[k];
    totals.changes.push(...r.changes.slice(0, MAX_PRINTED_CHANGES - totals.changes.length));
    onProgress({ scanned: totals.scanned, restored: totals.restored, deleted: totals.deleted, unchanged: totals.unchanged, commits: totals.commits, ...(r.last !== undefined ? { last: r.last } : {}) });
    if (r.next === undefined) return totals;
    after = r.next;
  }
}

function describeChange(c: RestoreChange): string {
  return c.action === 'restore' ? `restore  ${c.key}  (version ${c.from}${c.versionId ? ` -> ${c.versionId}` : ''})` : `delete   ${c.key}${c.versionId ? `  (marker ${c.versionId})` : ''}`;
}

export const restoreVerb: Verb = {
  name: 'restore',
  summary: 'restore a bucket or a prefix to a past time',
  synopsis: 'BUCKET --to TIME [options]',
  description: `Brings BUCKET (or the keys under --prefix) back to what it was at TIME, as new writes: each key
that differs gets a new version equal to its version then (same body, nothing copied), or is deleted
if it did not exist then; other keys are not touched. The restore is itself history (restore to a time
before it to undo it). TIME is an RFC 3339 time or a duration before now (90m, 2d); it is printed
once resolved: re-run with it to resume an interrupted restore.`,
  options: OPTIONS as readonly OptionDef<never>[],
  positionals: { name: 'BUCKET', min: 1, max: 1 },
  notes: `${TARGET_NOTES}

exit codes: 0 restored (or dry run reported), 1 refused (no such bucket, a time outside the history
window), 2 bad command line, or the repository or server cannot be used.`,
  run: (args, env) => runRestore(args, env),
};

async function runRestore(args: ParsedArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const o = resolveOptions(OPTIONS, { flags: args.flags, env }) as RestoreCliOptions;
  const [bucket] = args.positionals as [string];
  if (o.to === undefined) throw new UsageError('--to TIME is required (an RFC 3339 time, or a duration before now such as 2h)');
  const to = formatTime(parseCliTime('to', o.to, Date.now()));
  const progress = (l: string) => process.stderr.write(`restore: ${l}\n`);
  let t: Target | undefined;
  try {
    t = await openTarget(o, env, progress);
    progress(`${o.dryRun ? 'dry run: ' : ''}restoring ${bucket}${o.prefix ? ` (keys under ${o.prefix})` : ''} to ${to} (${t.where})`);
    const started = performance.now();
    const r = await restore(t, { bucket, to, ...(o.prefix !== undefined ? { prefix: o.prefix } : {}), ...(o.dryRun ? { dryRun: true } : {}) }, (p) =>
      progress(`${p.scanned} keys examined, ${p.restored} restored, ${p.deleted} deleted, ${p.unchanged} unchanged, ${p.commits} commits${p.last !== undefined ? ` (at ${p.last})` : ''}`)
    );
    progress(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    if (o.json) {
      process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
      return 0;
    }
    const verb = o.dryRun ? 'would restore' : 'restored';
    const out = [`${bucket}${o.prefix ? ` (under ${o.prefix})` : ''} ${o.dryRun ? 'as it would be restored' : 'restored'} to ${to}:`];
    out.push(`  ${r.scanned} keys examined: ${r.restored} ${verb}, ${r.deleted} ${o.dryRun ? 'would delete' : 'deleted'}, ${r.unchanged} unchanged${o.dryRun ? '' : `, ${r.commits} commits`}`);
    if (o.dryRun) {
      out.push(...r.changes.map((c) => `  ${describeChange(c)}`));
      const listed = r.changes.length;
      if (listed < r.restored + r.deleted) out.push(`  (${r.restored + r.deleted - listed} more changes not listed)`);
    }
    process.stdout.write(`${out.join('\n')}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    return reportFailure('restore', err, t?.where);
  } finally {
    await t?.close();
  }
}
