/**
 * `npm run bench:erasure --quick` must keep working (so the benchmark cannot rot): the fs and
 * (4,2) lanes run end to end with 8 MiB objects and 8 MiB per domain for the repair, and the
 * report shows every table, each measured figure, byte-exact reads (healthy, degraded, after repair) and a clean
 * `strata verify` and scrub after the repair. Performance rows may MISS on a shared machine;
 * they are not checked here.
 * Uses dist/ as built by `npm test`'s pretest (run `npm run build:js` first when run alone).
 */
import { describe, expect, it } from 'vitest';
import { runBenchScript } from './run-script.js';

const runBench = (args: string[]) => runBenchScript('erasure.js', args, 240_000);

describe('bench:erasure --quick', () => {
  it('measures the fs and (4,2) lanes end to end and checks what it measured', async () => {
    const run = await runBench(['--quick', '--no-write', '--lanes=fs,4+2', '--repair-mib=8', '--big-mib=8']);
    expect(run.code, run.stderr.slice(-3000)).toBe(0);
    const out = run.stdout;
    for (const heading of ['### Targets (issue 11)', '### 8 MiB PUT and GET, one client', '### 4 KiB PUT and GET, 16 connections', '### Scrub and repair', 'quoted, not measured here'])
      expect(out).toContain(heading);
    // Every lane measured every operation (a figure, not n/a).
    for (const row of [/\| fs \| PUT \| 1 \| 2 \| [\d,]+ /, /\| ec 4\+2 \| PUT \| 1 \| 2 \| [\d,]+ /, /\| ec 4\+2 \| GET \| 1 \| 2 \| [\d,]+ /, /\| ec 4\+2 \| degraded GET \| 1 \| 2 \| [\d,]+ /])
      expect(out).toMatch(row);
    expect(out).toMatch(/\| ec 4\+2 \| PUT \| 1 \| \d+ \| [\d,]+ \([\d,]+–[\d,]+\) \| [\d.]+ \| [\d.]+ \| 0 \|/);
    expect(out).toMatch(/\| ec 4\+2 \| repair one wiped domain \(--missing-only\) \| [\d,]+ \| [\d,]+ \|/);
    // Correctness rows must all pass.
    const exact = out.split('\n').filter((l) => l.startsWith('| byte-exact'));
    expect(exact.length).toBe(5);
    for (const l of exact) expect(l).toMatch(/PASS \|$/);
    expect(out).toMatch(/\| after repair, ec 4\+2: verify clean, scrub finds no damage \| clean \| verify exit 0, 0 damaged \| PASS \|/);
  }, 240_000);

  it('--only runs the lanes and phases it names, keeps every target row, and refuses unknown names', async () => {
    const run = await runBench(['--quick', '--no-write', '--only=4+2,degraded', '--big-mib=8']);
    expect(run.code, run.stderr.slice(-3000)).toBe(0);
    const out = run.stdout;
    expect(out).toContain('Partial run (`--only=4+2,degraded`)');
    expect(out).toMatch(/\| 8 MiB degraded GET, ec 4\+2, m domains wiped \| >= 250 MiB\/s \| [\d,]+ MiB\/s \| (PASS|MISS) \|/);
    expect(out).toMatch(/\| byte-exact: 8 MiB degraded GET, ec 4\+2 \| equal \| equal \| PASS \|/);
    for (const row of ['8 MiB PUT, (10,4), 1 client', '8 MiB degraded GET, ec 10+4, m domains wiped', 'repair one lost domain, ec 4+2', '4 KiB PUT, ec 4+2 vs fs, 16 conn', 'after repair, ec 10+4: verify clean, scrub finds no damage'])
      expect(out).toContain(`| ${row} | `);
    expect(out.split('\n').filter((l) => l.includes('| not run | n/a |')).length).toBe(11);
    expect(out).not.toMatch(/\| (fs|ec 4\+2) \| PUT \|/);
    const bad = await runBench(['--quick', '--no-write', '--only=5+3']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("--only: unknown '5+3'");
  }, 120_000);
});
