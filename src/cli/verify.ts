/**
 * @module `strata verify [dir|url]`: checks every commit, root, run and pack checksum of a
 * repository, prints progress on stderr and a summary on stdout, and exits non-zero on
 * damage (1) or when the repository cannot be read at all (2).
 */
import { openLocation } from '../store/open.js';
import { verifyRepository } from '../store/verify.js';

export async function verifyCommand(args: string[]): Promise<number> {
  const location = args.find((a) => !a.startsWith('-')) ?? process.env.STRATA_DATA_DIR ?? './data';
  const json = args.includes('--json');
  const { provider, release } = await openLocation(location);
  const started = Date.now();
  let lastPrint = 0;
  try {
    const report = await verifyRepository(provider, (p) => {
      const now = Date.now();
      if (now - lastPrint < 500 && p.done !== p.total) return;
      lastPrint = now;
      process.stderr.write(`verify: ${p.phase} ${p.done}/${p.total} (${(p.bytes / 2 ** 20).toFixed(1)} MiB read)\n`);
    });
    if (json) {
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } else {
      const lines = [
        `repository  ${location}`,
        `anchor      sequence ${report.anchorSeq}, root at ${report.rootSeq}, ${report.commitsInChain} commits replayed`,
        `checked     ${report.blobs} pack blobs, ${report.runs} runs (${report.runEntries} index entries), ${(report.bytes / 2 ** 20).toFixed(1)} MiB in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        report.ok ? 'result      OK' : `result      DAMAGED: ${report.problems.length} problem(s)`,
        ...report.problems.map((p) => `  ${p.code.padEnd(14)} ${p.blob}: ${p.message}`),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    return report.ok ? 0 : 1;
  } finally {
    await release();
  }
}
