/**
 * @module `strata verify [DIR|URL]`: checks every commit, root, run and pack checksum of a
 * repository (store/verify.ts) and names the objects damage reaches. Read-only: takes no
 * lock, creates nothing, and may run beside the server (it checks the state as of the anchor
 * it reads first). Progress on stderr, a summary on stdout; exit 0 when sound, 1 on damage,
 * 2 when the repository cannot be read at all.
 */
import { findOption, type OptionDef } from '../server/options.js';
import { booleanType } from '../server/option-types.js';
import { resolveOptions } from '../server/options.js';
import { SERVER_OPTIONS } from '../server/config.js';
import { UsageError } from './args.js';
import { erasureConfigFileOption, erasureOption, erasureSetupForVerb } from '../server/erasure-option.js';
import type { Verb } from './verb.js';

/** Interval between progress lines on stderr, ms. */
const PROGRESS_MS = 500;

interface VerifyArgs {
  data?: string;
  erasure?: string;
  configFile?: string;
  json?: boolean;
}

const OPTIONS = [
  findOption(SERVER_OPTIONS, 'data')!,
  erasureOption<VerifyArgs>(),
  erasureConfigFileOption<VerifyArgs>(),
  { name: 'json', key: 'json', type: booleanType(), help: 'print the report as JSON on stdout' },
] as unknown as readonly OptionDef<never>[];

export const verifyVerb: Verb = {
  name: 'verify',
  summary: 'check a repository end to end (read-only)',
  synopsis: '[options] [DIR|URL]',
  description: `Checks the anchor, the hash chain of commits, every pack entry's CRC, every index run
block, and that every body the index refers to exists; names the bucket/key of objects that
damage reaches. Read-only: takes no lock and writes nothing, so it may run beside the server.`,
  options: OPTIONS,
  positionals: { name: 'DIR|URL', max: 1 },
  notes:
    'exit codes: 0 sound, 1 damage found, 2 bad command line or the repository cannot be read.',
  async run(args, env) {
    if (args.positionals.length && args.flags.has('data'))
      throw new UsageError('give the repository once: as DIR|URL or with --data');
    const opts = resolveOptions(OPTIONS as readonly OptionDef<VerifyArgs>[], {
      flags: args.flags,
      env,
    }) as VerifyArgs;
    const location = args.positionals[0] ?? opts.data ?? './data';
    const erasure = await erasureSetupForVerb({ ...opts, data: location });
    const { openReadOnly, NotARepositoryError } = await import('../store/open-read-only.js');
    const { verifyRepository } = await import('../store/verify.js');
    let repo;
    try {
      repo = await openReadOnly(location, erasure);
    } catch (err) {
      if (!(err instanceof NotARepositoryError)) throw Object.assign(err as Error, { exitCode: 2 });
      process.stderr.write(`strata verify: ${err.message}\n`);
      return 2;
    }
    const started = Date.now();
    let lastPrint = 0;
    try {
      if (repo.liveOwner) {
        process.stderr.write(
          `verify: the repository is served by pid ${repo.liveOwner.pid}: checking the state as of the anchor read now\n`
        );
      }
      const report = await verifyRepository(repo.provider, (p) => {
        const now = Date.now();
        if (now - lastPrint < PROGRESS_MS && p.done !== p.total) return;
        lastPrint = now;
        process.stderr.write(
          `verify: ${p.phase} ${p.done}/${p.total} (${(p.bytes / 2 ** 20).toFixed(1)} MiB read)\n`
        );
      });
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      } else {
        const lines = [
          `repository  ${location}`,
          `anchor      sequence ${report.anchorSeq}, root at ${report.rootSeq}, ${report.commitsInChain} commits replayed`,
          `checked     ${report.blobs} pack blobs, ${report.runs} runs (${report.runEntries} index entries), ${(report.bytes / 2 ** 20).toFixed(1)} MiB in ${((Date.now() - started) / 1000).toFixed(1)} s`,
          report.ok
            ? 'result      OK'
            : `result      DAMAGED: ${report.problems.length} problem(s)`,
        ];
        if (report.garbage.length > 0)
          lines.push(
            `garbage     ${report.garbage.length} unreadable blob(s) nothing reaches (uncommitted writes' leftovers; strata gc deletes them)`
          );
        for (const p of report.problems) {
          lines.push(`  ${p.code.padEnd(14)} ${p.blob}: ${p.message}`);
          if (p.affects)
            lines.push(
              `  ${''.padEnd(14)} affects ${p.affects.join(', ')}${p.affectsMore ? ` and ${p.affectsMore} more` : ''}`
            );
        }
        process.stdout.write(`${lines.join('\n')}\n`);
      }
      return report.ok ? 0 : 1;
    } finally {
      await repo.close();
    }
  },
};
