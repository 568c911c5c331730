/**
 * @module `strata expire [--bucket B]`: drops now the history older than each bucket's window
 * (store/expiry.ts), instead of waiting for the server's expiry worker.
 *
 * On a stopped repository it runs in this process (the server-wide default window given by
 * --retention / STRATA_RETENTION, as the server would use it); while a server holds the
 * repository (or with --endpoint) it asks that server to run it (POST /_strata/admin/v1/expire)
 * and follows its progress (GET) until the run ends. Progress lines go to stderr after every
 * committed batch, the totals to stdout. Where it acts: admin-target.ts. Exit codes: 0 done,
 * 1 refused or failed (no such bucket, the run failed), 2 bad command line, or the repository
 * or server cannot be used.
 */
import { adminRequest } from '../admin/client.js';
import { adminExpireLocal } from '../admin/expire.js';
import { UsageError, type ParsedArgs } from './args.js';
import type { Verb } from './verb.js';
import { defineOption, resolveOptions, type OptionDef } from '../server/options.js';
import { stringType } from '../server/option-types.js';
import { openTarget, reportFailure, TARGET_NOTES, TARGET_OPTIONS, type Target, type TargetOptions } from './admin-target.js';
import { RETENTION_OPTION, retentionStoreOptions, type RetentionOption } from './retention-option.js';
import type { ExpiryReport } from '../store/expiry.js';
import type { ExpiryStatus } from '../server/expiry-worker.js';
import { StoreError } from '../store/errors.js';

interface ExpireCliOptions extends TargetOptions, RetentionOption {
  bucket?: string;
}

/** Between two progress polls of a server's run: often enough to read along, cheap for the server. */
const POLL_MS = 500;

const OPTIONS: OptionDef<ExpireCliOptions>[] = [
  ...(TARGET_OPTIONS as OptionDef<ExpireCliOptions>[]),
  RETENTION_OPTION as OptionDef<ExpireCliOptions>,
  defineOption<ExpireCliOptions, 'bucket'>({ name: 'bucket', key: 'bucket', type: stringType({ maxLength: 63, placeholder: '<bucket>' }), help: 'only this bucket', from: { env: false, file: false } }),
];

/** Starts the server's run and follows it to its end. Throws a StoreError-like error for a failed run. */
async function remoteRun(t: Target & { remote: NonNullable<Target['remote']> }, bucket: string | undefined, progress: (l: string) => void): Promise<ExpiryReport> {
  const started = (await adminRequest(t.remote, 'POST', ['expire'], bucket !== undefined ? { bucket } : {})) as ExpiryStatus;
  const since = started.last?.finished;
  let shown = '';
  for (;;) {
    const s = (await adminRequest(t.remote, 'GET', ['expire'])) as ExpiryStatus;
    if (s.current) {
      const line = `${s.current.examined} entries examined, ${s.current.expired} expired (${s.current.bytes} bytes)${s.current.at ? `, at bucket ${s.current.at}` : ''}`;
      if (line !== shown) progress((shown = line));
    }
    if (!s.running && s.last && s.last.finished !== since) {
      if (s.last.error) throw new StoreError(s.last.error.code as never, s.last.error.message);
      return s.last.report!;
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

export const expireVerb: Verb = {
  name: 'expire',
  summary: 'expire history older than its window now',
  synopsis: '[--bucket B] [options]',
  description: `Drops the history no read inside a bucket's window can reach any more (older than the window:
superseded and permanently deleted versions, replaced null versions, unversioned deletes), in every
bucket or only --bucket, through ordinary commits. What S3 lists (noncurrent versions, delete
markers) stays until S3 deletes it; locked versions stay. The server runs this every
--expiry-interval; this verb runs it now. Bodies are freed by strata gc afterwards.`,
  options: OPTIONS as readonly OptionDef<never>[],
  notes: `${TARGET_NOTES}

exit codes: 0 done, 1 refused or failed (no such bucket), 2 bad command line, or the repository or
server cannot be used.`,
  run: (args, env) => runExpire(args, env),
};

async function runExpire(args: ParsedArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const o = resolveOptions(OPTIONS, { flags: args.flags, env }) as ExpireCliOptions;
  const progress = (l: string) => process.stderr.write(`expire: ${l}\n`);
  let t: Target | undefined;
  try {
    t = await openTarget(o, env, progress, retentionStoreOptions(o));
    progress(`expiring history of ${o.bucket ?? 'every bucket'} (${t.where})`);
    const r = t.store
      ? await adminExpireLocal(t.store, o.bucket !== undefined ? { bucket: o.bucket } : {}, (p) => {
          if (!p.bucketDone) progress(`${p.examined} entries examined, ${p.expired} expired (${p.bytes} bytes), at bucket ${p.bucket}`);
        })
      : await remoteRun(t as Target & { remote: NonNullable<Target['remote']> }, o.bucket, progress);
    if (o.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
    else process.stdout.write(`expired ${r.expired} of ${r.examined} history entries (${r.bytes} bytes) in ${r.buckets} bucket(s), ${r.skipped} changed meanwhile and kept, in ${(r.ms / 1000).toFixed(1)} s\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    return reportFailure('expire', err, t?.where);
  } finally {
    await t?.close();
  }
}
