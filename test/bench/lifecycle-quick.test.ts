/**
 * `npm run bench:lifecycle --quick` must keep working (so the benchmark cannot rot): the two
 * smallest quick lanes (300 serial PUTs, overwrite and append) run their whole lifecycle in
 * child processes, and the report shows each phase's figures, the restores doing exactly what
 * the sampled points require, `strata verify` sound and every live value byte-exact.
 * Uses dist/ as built by `npm test`'s pretest (run `npm run build:js` first when run alone).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../integration/harness.js';

describe('bench:lifecycle --quick', () => {
  it('takes 300-write lanes through write, delete, reopen, restore, expire, GC and verify', () => {
    const run = spawnSync(process.execPath, [join(ROOT, 'dist/bench/lifecycle.js'), '--quick', '--no-write', '--only=300-overwrite,300-append'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 240_000,
    });
    const out = run.stdout;
    expect(out, run.stderr).toContain('### 300 overwrite');
    expect(out).toContain('### 300 append');
    // No phase failed (a PUT failing beside a GC pass is a finding of the GC table, not checked here).
    expect(out).not.toMatch(/error:|probe failed|not available:/);
    // Restores: the append lane goes back to write 99 (deleting the 199 keys written after it,
    // the deleted 300th excluded), then forward to 199 and 299 (100 keys each).
    expect(out).toMatch(/to write 99: \+0 \/ -199 .*to write 199: \+100 \/ -0 .*to write 299: \+100 \/ -0/);
    expect(out).toMatch(/to write 99: \+1 \/ -0 .*to write 199: \+1 \/ -0 .*to write 299: \+1 \/ -0/);
    // Verify: the CLI found the repository sound, and the final state is every write's result.
    expect(out).toMatch(/strata verify: sound: .*live values byte-exact 1 \/ 1, missing 0, unreadable 0, wrong 0, unexpected 0/);
    expect(out).toMatch(/strata verify: sound: .*live values byte-exact 300 \/ 300, missing 0, unreadable 0, wrong 0, unexpected 0/);
    // The reopen row measured a cold walk of every log entry (300 writes + the delete), and
    // every sampled point read back as of its time.
    expect(out).toMatch(/\| reopen \|.*points read as of their time: exact, exact, exact; walk: 301 entries/);
    // Expiry with retention 0 left one entry per live key (the tombstones of the rest stay
    // until compaction) and made the points unreadable; GC then freed blobs.
    expect(out).toMatch(/\| expire \|.*303 of 304 entries expired.*points read as of their time: refused, refused, refused; walk: 1 entries( \(\+\d+ tombstones\))? in/);
    expect(out).toMatch(/\| expire \|.*400 of 700 entries expired.*points read as of their time: refused, refused, refused; walk: 300 entries( \(\+\d+ tombstones\))? in/);
    expect(out).toMatch(/\| gc \|.*freed [1-9]\d* blobs/);
    // Measured at rest, the commit log segment GC leaves is cut to what it holds (300
    // small commits at most), not listed at its 4 MiB preallocation: the counting wrapper the
    // bench opens the repository through passes the segment's seal on.
    const logLeft = [...out.matchAll(/left: [^|]*?log (\d+) blobs ([\d.,]+) (KiB|MiB)/g)];
    expect(logLeft.length).toBe(2); // the GC rows, one per lane
    for (const m of logLeft) expect(m[3] === 'KiB' || Number(m[2]) < 1, m[0]).toBe(true);
    expect(out).toMatch(/Full lifecycle completes: 300 overwrite \| completed/);
    expect(out).toMatch(/Full lifecycle completes: 300 append \| completed/);
    // The accounted history bytes (history budget) equal the walk's recount of the log, after
    // every phase: writes, delete, restores, expiry (tombstones are not history), GC.
    const accounted = [...out.matchAll(/\| ([\d.,]+ [KM]iB) \(log walked: ([\d.,]+ [KM]iB)\)/g)];
    expect(accounted.length).toBeGreaterThanOrEqual(10);
    for (const m of accounted) expect(m[1]).toBe(m[2]);
    expect(run.status, run.stderr).toBe(0);
  }, 270_000);
});
