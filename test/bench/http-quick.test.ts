/**
 * `npm run bench:http --quick --only=put4k,get4k` must keep working against all four servers
 * (so the benchmark cannot rot): each starts with its stdout going to a log file, every PUT
 * ETag and GET body is checked without an error, every server logs about one line per request
 * (equal logging work), and `--no-write` leaves bench/RESULTS.md and the stored figures alone.
 * Uses dist/ as built by `npm test`'s pretest (run `npm run build:js` first when run alone).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../integration/harness.js';

const mtime = (p: string) => (existsSync(p) ? statSync(p).mtimeMs : 0);

describe('bench:http --quick', () => {
  it('runs the 4 KiB lanes against strata, s3rver, fs and trivial-hono with checked bytes and equal logging', () => {
    const results = [join(ROOT, 'bench/RESULTS.md'), join(ROOT, 'bench/RESULTS-http.json')];
    const before = results.map(mtime);
    const run = spawnSync(process.execPath, [join(ROOT, 'dist/bench/http.js'), '--quick', '--no-write', '--fresh', '--only=put4k,get4k'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 150_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const out = run.stdout;
    const rows = out.split('\n').filter((l) => /^\| (strata|s3rver|fs|trivial-hono) \| (1|16) \| 4 KiB \| (PUT|GET) \|/.test(l));
    expect(rows).toHaveLength(16);
    for (const r of rows) {
      const cells = r.split('|').map((c) => c.trim());
      // errors column, then server CPU, then log lines per operation.
      const [errors, , logPerOp] = cells.slice(-4, -1);
      expect(errors, r).toBe('0');
      const lines = Number(logPerOp);
      // s3rver logs a second line for each PUT (its default); the others one per request.
      expect(lines, r).toBeGreaterThanOrEqual(0.9);
      expect(lines, r).toBeLessThanOrEqual(cells[1] === 's3rver' ? 2.1 : 1.1);
    }
    expect(out).toMatch(/\| errors, every PUT\/GET cell of every target \| 0 \| strata 0, s3rver 0, fs 0, trivial-hono 0 \| PASS \|/);
    expect(out).toMatch(/\| bytes checked: .*\| 0 wrong \| [\d,]+ MiB checked, 0 wrong responses; LIST 0 wrong results \| PASS \|/);
    expect(out).toMatch(/\| 4 KiB PUT \(durable\), 16 conn, vs the fs peer \| >= 2x \| [\d,]+ vs [\d,]+ ops\/s = [\d.]+x \| (PASS|MISS) \|/);
    expect(out).toMatch(/\| put4k \| .* \| quick \| 1 x 0\.4 s \| strata, s3rver, fs, trivial-hono \|/);
    expect(results.map(mtime)).toEqual(before);
  }, 180_000);
});
