/**
 * @module `strata lifecycle run`: carry out the buckets' S3 lifecycle rules now (expire
 * objects, remove noncurrent versions and expired delete markers, abort old multipart
 * uploads) instead of waiting for the server's next scheduled pass.
 *
 *   strata lifecycle run [--bucket B] [--data DIR | --endpoint URL] [--json]
 *
 * Where it acts: admin-target.ts (a stopped repository directly; a running server through
 * POST /_strata/admin/v1/lifecycle/run). Progress goes to stderr, the report to stdout.
 * Exit codes: 0 done, 1 refused (no such bucket), 2 bad command line, or the repository or
 * server cannot be used.
 */
import { adminRequest } from '../admin/client.js';
import { runLifecycle, type LifecycleReport } from '../store/lifecycle.js';
import { UsageError, type ParsedArgs } from './args.js';
import type { Verb } from './verb.js';
import { defineOption, resolveOptions, type OptionDef } from '../server/options.js';
import { stringType } from '../server/option-types.js';
import { openTarget, reportFailure, TARGET_NOTES, TARGET_OPTIONS, type Target, type TargetOptions } from './admin-target.js';

interface LifecycleCliOptions extends TargetOptions {
  bucket?: string;
}

const OPTIONS: OptionDef<LifecycleCliOptions>[] = [
  ...(TARGET_OPTIONS as OptionDef<LifecycleCliOptions>[]),
  defineOption<LifecycleCliOptions, 'bucket'>({
    name: 'bucket',
    key: 'bucket',
    type: stringType({ maxLength: 63, placeholder: '<name>' }),
    help: 'only this bucket',
    from: { env: false, file: false },
  }),
];

function summary(r: LifecycleReport): string {
  return (
    `lifecycle: ${r.buckets} bucket(s) with rules, ${r.examined} examined: ${r.expired} expired, ` +
    `${r.versionsRemoved} noncurrent version(s) removed, ${r.markersRemoved} delete marker(s) removed, ` +
    `${r.uploadsAborted} upload(s) aborted, ${r.skippedLocked} kept by object lock (${r.ms} ms)`
  );
}

export const lifecycleVerb: Verb = {
  name: 'lifecycle',
  summary: "carry out the buckets' S3 lifecycle rules now",
  synopsis: 'run [--bucket B] [options]',
  description: `Runs every bucket's lifecycle configuration (PutBucketLifecycleConfiguration) once: expires
current objects (a delete marker in versioned buckets), removes noncurrent versions and expired delete
markers, aborts old incomplete multipart uploads. Versions under Object Lock are kept. The server does
the same every --lifecycle-interval (default 1h). STRATA_LIFECYCLE_DAY_MS (debug) sets the length of a
rule day in ms.`,
  options: OPTIONS as readonly OptionDef<never>[],
  positionals: { name: 'run', min: 1, max: 1 },
  notes: `${TARGET_NOTES}

exit codes: 0 done, 1 refused (no such bucket), 2 bad command line, or the repository or server
cannot be used.`,
  run: async (args: ParsedArgs, env: NodeJS.ProcessEnv): Promise<number> => {
    if (args.positionals[0] !== 'run') throw new UsageError(`unknown lifecycle action ${JSON.stringify(args.positionals[0])} (expected: run)`);
    const o = resolveOptions(OPTIONS, { flags: args.flags, env }) as LifecycleCliOptions;
    const progress = (l: string) => process.stderr.write(`lifecycle: ${l}\n`);
    let t: Target | undefined;
    try {
      t = await openTarget(o, env, progress);
      let r: LifecycleReport;
      if (t.store) {
        r = await runLifecycle(t.store.repo, {
          ...(o.bucket !== undefined && { bucket: o.bucket }),
          onProgress: (p) => progress(`${p.bucket}: ${p.examined} examined`),
        });
      } else {
        r = (await adminRequest(t.remote, 'POST', ['lifecycle', 'run'], o.bucket !== undefined ? { bucket: o.bucket } : {})) as LifecycleReport;
      }
      process.stdout.write(o.json ? `${JSON.stringify(r, null, 2)}\n` : `${summary(r)}\n`);
      return 0;
    } catch (err) {
      if (err instanceof UsageError) throw err;
      return reportFailure('lifecycle', err, t?.where);
    } finally {
      await t?.close();
    }
  },
};
