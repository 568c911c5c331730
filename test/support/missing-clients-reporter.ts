/**
 * @module A vitest reporter, beside the default one, that ends the run with the suites skipped
 * because an external client is missing (test/support/clients.ts) and the command that
 * installs each. The default reporter only counts skipped tests; this says why and what to do.
 */
import type { Reporter, TestModule } from 'vitest/node';

/**
 * The lines to print for `modules`: one per (test file, missing client), in file order; empty
 * when nothing was skipped for a missing client. Pure.
 */
export function missingClientLines(modules: ReadonlyArray<TestModule>): string[] {
  const lines: string[] = [];
  for (const m of modules) {
    const reasons = new Set<string>();
    for (const t of m.children.allTests('skipped')) {
      const why = t.meta().missingClient;
      if (why) reasons.add(why);
    }
    for (const why of reasons) lines.push(`  ${m.relativeModuleId}: ${why}`);
  }
  return lines;
}

export default class MissingClientsReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const lines = missingClientLines(modules);
    if (lines.length === 0) return;
    process.stdout.write(
      [
        '',
        ` Skipped ${lines.length} suite(s): a client they drive is not installed ` +
          '(STRATA_REQUIRE_CLIENTS=1 makes this a failure)',
        ...lines,
        '',
      ].join('\n') + '\n'
    );
  }
}
