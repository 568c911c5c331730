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
    // No phase failed; a phase is at most "not available" while its module has not landed.
    expect(out).not.toMatch(/FAILED|error:|probe failed/);
    // Restores: the append lane goes back to write 99 (deleting the 199 keys written after it,
    // the deleted 300th excluded), then forward to 199 and 299 (100 keys each).
    expect(out).toMatch(/to write 99: \+0 \/ -199 .*to write 199: \+100 \/ -0 .*to write 299: \+100 \/ -0/);
    expect(out).toMatch(/to write 99: \+1 \/ -0 .*to write 199: \+1 \/ -0 .*to write 299: \+1 \/ -0/);
    // Verify: the CLI found the repository sound, and the final state is every write's result.
    expect(out).toMatch(/strata verify: sound: .*live values byte-exact 1 \/ 1, missing 0, unreadable 0, wrong 0, unexpected 0/);
    expect(out).toMatch(/strata verify: sound: .*live values byte-exact 300 \/ 300, missing 0, unreadable 0, wrong 0, unexpected 0/);
    // The reopen row measured a cold walk of every log entry (300 writes + the delete).
    expect(out).toMatch(/\| reopen \|.*walk: 301 entries/);
    const unavailable = /not available: (src\/store\/\S+) is not in this tree/g;
    const missing = new Set([...out.matchAll(unavailable)].map((m) => m[1]));
    if (missing.size === 0) expect(run.status, run.stderr).toBe(0);
    else expect(run.status).toBe(1);
  }, 270_000);
});
