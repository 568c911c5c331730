/**
 * `node dist/bench/erasure-ab.js` must keep working (so the comparison cannot rot): this build
 * against itself at (2,1) with small objects, degraded and healthy, prints both builds' rows
 * and the paired ratio, and refuses to run without --base. The figures are not checked (a
 * shared machine). Uses dist/ as built by `npm test`'s pretest.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../integration/harness.js';

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist/bench/erasure-ab.js'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('bench erasure-ab', () => {
  for (const mode of [[], ['--healthy']]) {
    it(`compares two builds on paired ${mode.length ? 'healthy' : 'degraded'} GETs`, async () => {
      const r = await run([`--base=${join(ROOT, 'dist')}`, '--ec=2+1', '--n=2', '--mib=4', ...mode]);
      expect(r.code, r.stderr.slice(-3000)).toBe(0);
      expect(r.stdout).toContain(mode.length ? '4 MiB GET (one object), ec 2+1' : '4 MiB degraded GET (m = 1 domains emptied');
      expect(r.stdout).toMatch(/\| base \| [\d,]+ \| [\d,]+ \([\d,]+–[\d,]+\) \| [\d,]+ \|/);
      expect(r.stdout).toMatch(/\| this build \| [\d,]+ \| [\d,]+ \([\d,]+–[\d,]+\) \| [\d,]+ \|/);
      expect(r.stdout).toMatch(/base time \/ this build's time: median \d+\.\d{3} \(/);
    }, 120_000);
  }

  it('refuses to run without --base', async () => {
    const r = await run([]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('--base=');
  });
});
