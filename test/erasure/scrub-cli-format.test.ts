/**
 * What `strata scrub` and `strata domains` print and exit with, from reports (no repository):
 * exit codes by outcome, the progress line, the summary's damage-by-domain and lost keys, the
 * domains table, and the admin rate parser against malformed and hostile input.
 */
import { describe, expect, it } from 'vitest';
import { progressText, scrubExitCode, scrubSummary } from '../../src/cli/scrub.js';
import { domainsTable } from '../../src/cli/domains.js';
import { parseRate, erasureOf } from '../../src/admin/scrub.js';
import { emptyTotals } from '../../src/provider/erasure/scrub-cursor.js';
import type { ScrubReport } from '../../src/provider/erasure/scrub.js';
import { MemoryProvider } from '../../src/provider/memory/index.js';
import { resolveConfig } from '../../src/server/config.js';

const report = (over: Partial<ScrubReport> = {}): ScrubReport => ({ ...emptyTotals(), repair: false, complete: true, resumedBlobs: 0, resumedBytes: 0, startedAt: 0, ms: 1000, ...over });

describe('strata scrub output', () => {
  it('exit codes: clean 0, lost 1, degraded 3, stopped 4 (lost wins)', () => {
    expect(scrubExitCode(report())).toBe(0);
    expect(scrubExitCode(report({ lostCount: 1, lost: ['x'] }))).toBe(1);
    expect(scrubExitCode(report({ unrepairedBlobs: 2 }))).toBe(3);
    expect(scrubExitCode(report({ errorCount: 1 }))).toBe(3);
    expect(scrubExitCode(report({ complete: false }))).toBe(4);
    expect(scrubExitCode(report({ complete: false, lostCount: 1 }))).toBe(1);
  });

  it('the summary names damaged domains and lost keys; progress shows rate and ETA', () => {
    const s = scrubSummary(report({ blobs: 10, damagedBlobs: 2, damagedByDomain: { d3: 2, d1: 1 }, lost: ['chunks/abc'], lostCount: 3, unrepairedBlobs: 1 }), 'repository /x');
    expect(s).toMatch(/domain d1 +1 damaged/);
    expect(s.indexOf('domain d1')).toBeLessThan(s.indexOf('domain d3'));
    expect(s).toContain('  chunks/abc');
    expect(s).toContain('... and 2 more');
    expect(s).toContain('(run with --repair)');
    const line = progressText({ phase: 'scrub', blobs: 5, bytes: 5 * 2 ** 20, totalBlobs: 10, totalBytes: 10 * 2 ** 20, bytesPerSec: 2 ** 20, etaMs: 5000, damagedBlobs: 1, repairedFragments: 0, lostCount: 0 });
    expect(line).toBe('5/10 blobs, 5.0 MiB/10.0 MiB at 1.0 MiB/s, ETA 5s; damaged 1, lost 0');
    // Sized from the last pass, not counted: marked as an estimate.
    const about = progressText({ phase: 'scrub', blobs: 5, bytes: 5 * 2 ** 20, totalBlobs: 10, totalBytes: 10 * 2 ** 20, estimated: true, bytesPerSec: 2 ** 20, damagedBlobs: 0, repairedFragments: 0, lostCount: 0 });
    expect(about).toBe('5/~10 blobs, 5.0 MiB/~10.0 MiB at 1.0 MiB/s');
  });

  it('a missing-only repair says so and counts what it did not read as unchecked, apart from verified', () => {
    const s = scrubSummary(report({ repair: true, missingOnly: true, blobs: 3, fragments: { verified: 12, missing: 3, corrupt: 0, unreachable: 0, unchecked: 3 } }), 'repository /x');
    expect(s).toContain('with repair of missing fragments only');
    expect(s).toContain('12 fragments in');
    expect(s).toMatch(/^unchecked +3 fragments not read by this missing-only repair/m);
    expect(scrubSummary(report({ repair: true }), 'repository /x')).not.toContain('unchecked');
  });

  it('the domains table shows every domain with labels, state and usage', () => {
    const t = domainsTable({
      k: 4,
      m: 2,
      domains: [
        { id: 'd1', labels: { zone: 'a' }, state: 'ok', blobs: 12, bytes: 3 * 2 ** 20 },
        { id: 'd2', labels: {}, state: 'failed', error: 'timed out after 10000 ms' },
      ],
    });
    expect(t).toMatch(/^d1 +zone=a +ok +12 +3\.0 MiB$/m);
    expect(t).toMatch(/^d2 +- +FAILED: timed out after 10000 ms +\? +\?$/m);
    expect(t).toContain('erasure 4+2 over 2 domains; 1 FAILED');
  });
});

describe('admin scrub arguments', () => {
  it('parses rates and refuses malformed, tiny, negative and huge ones', () => {
    expect(parseRate('50MiB')).toBe(50 * 2 ** 20);
    expect(parseRate('1KiB')).toBe(1024);
    for (const bad of ['', 'fast', '-5MiB', '10', '1.5', '9'.repeat(40), '1e9', '50 MiBps', '\u0000']) expect(() => parseRate(bad), bad).toThrow(/rate/);
  });

  it('refuses a repository not on the erasure provider', () => {
    expect(() => erasureOf(new MemoryProvider())).toThrow(/not erasure-coded/);
  });
});

describe('server scrub options', () => {
  it('--scrub-interval (0 = off) and --scrub-rate parse from flags and env; nonsense is refused', () => {
    expect(resolveConfig(['--scrub-interval', '0', '--scrub-rate', '10MiB'], {})).toMatchObject({ scrubInterval: 0, scrubRate: 10 * 2 ** 20 });
    expect(resolveConfig([], { STRATA_SCRUB_INTERVAL: '12h', STRATA_SCRUB_RATE: '1GiB' })).toMatchObject({ scrubInterval: 12 * 3_600_000, scrubRate: 2 ** 30 });
    for (const bad of [['--scrub-interval', '91d'], ['--scrub-interval', 'daily'], ['--scrub-interval', '-1h'], ['--scrub-rate', '100'], ['--scrub-rate', 'fast'], ['--scrub-rate', '0']]) {
      expect(() => resolveConfig(bad, {}), bad.join(' ')).toThrow(/scrub/);
    }
  });
});
