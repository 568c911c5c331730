/**
 * `node dist/bench/erasure-ab.js` must keep working (so the comparison cannot rot): this build
 * against itself at (2,1) with small objects, degraded and healthy, and on rounds of 4 KiB GETs
 * (--small) at (2,1) and over the fs provider, prints both builds' rows and the paired ratio,
 * and refuses to run without --base or to empty domains of an fs directory. The figures are not checked (a
 * shared machine). Uses dist/ as built by `npm test`'s pretest.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../integration/harness.js';
import { runBenchScript } from './run-script.js';

const run = (args: string[]) => runBenchScript('erasure-ab.js', args, 120_000);

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

  for (const ec of ['2+1', 'fs']) {
    it(`compares two builds on paired rounds of small GETs (${ec})`, async () => {
      const r = await run([`--base=${join(ROOT, 'dist')}`, `--ec=${ec}`, '--small', '--n=2', '--seconds=0.3', '--keys=8']);
      expect(r.code, r.stderr.slice(-3000)).toBe(0);
      expect(r.stdout).toContain(`4 KiB GET, 16 connections over 16 x 8 keys, ${ec === 'fs' ? 'fs' : 'ec 2+1'}`);
      expect(r.stdout).toMatch(/\| base \| [\d,]+ \([\d,]+–[\d,]+\) \| \d+\.\d{3} \(\d+\.\d{3}–\d+\.\d{3}\) \|/);
      expect(r.stdout).toMatch(/\| this build \| [\d,]+ \([\d,]+–[\d,]+\) \| \d+\.\d{3} \(/);
      expect(r.stdout).toMatch(/base CPU per GET \/ this build's: median \d+\.\d{3} \(/);
    }, 120_000);
  }

  it('refuses an fs comparison of degraded GETs', async () => {
    const r = await run([`--base=${join(ROOT, 'dist')}`, '--ec=fs']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('--ec=fs: with --small or --healthy');
  });

  it('refuses to run without --base', async () => {
    const r = await run([]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('--base=');
  });
});
