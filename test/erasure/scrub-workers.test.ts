/**
 * The server's erasure maintenance workers against the stand-in maintenance surface
 * (scrub-fake.ts): the repair worker drains heal-on-read's queue (retrying what a retry may
 * cure, dropping what vanished), the background scrub schedules, resumes and is preempted, and
 * the metrics carry the contract's names. The real provider: scrub-real*.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { RepairWorker } from '../../src/provider/erasure/repair-worker.js';
import { ScrubWorker, erasureMetricLines, preemptBackgroundScrub } from '../../src/server/scrub-worker.js';
import { loadCursor, loadLastPass } from '../../src/provider/erasure/scrub-cursor.js';
import { ProviderError } from '../../src/provider/provider.js';
import { Logger } from '../../src/server/log.js';
import { fakeWith } from './scrub-fake.js';

function memLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = { info: (m: string, f?: object) => lines.push(`info ${m} ${JSON.stringify(f ?? {})}`), warn: (m: string, f?: object) => lines.push(`warn ${m} ${JSON.stringify(f ?? {})}`), error: (m: string) => lines.push(`error ${m}`) };
  return { log: log as unknown as Logger, lines };
}

describe('repair worker', () => {
  it('repairs queued keys, drops vanished ones, retries retryable failures, gives up on others', async () => {
    const p = await fakeWith(10);
    const { log, lines } = memLog();
    p.damage.set('b/00001', ['missing', 'ok', 'ok', 'ok', 'ok', 'ok']);
    p.damage.set('b/00002', ['ok', 'corrupt', 'ok', 'ok', 'missing', 'ok']);
    p.damage.set('b/00003', ['missing', 'missing', 'missing', 'ok', 'ok', 'ok']);
    p.queue.push('b/00001', 'b/00002', 'b/00003', 'gone', 'b/00001');
    p.failures.set('b/00004', new ProviderError('Unavailable', 'domain d3 timed out'));
    p.failures.set('b/00005', new ProviderError('Io', 'broken'));
    p.queue.push('b/00004', 'b/00005');
    const w = new RepairWorker(p, log, { rateBytesPerSec: 1e9 });
    await w.drain();
    expect(p.damage.has('b/00001')).toBe(false);
    expect(p.damage.has('b/00002')).toBe(false);
    expect(w.stats).toMatchObject({ repaired: 2, repairedFragments: 3, lost: 1, failed: 1 });
    expect(w.pending).toBe(1); // b/00004 waits for its retry
    expect(lines.some((l) => l.startsWith('warn erasure.repair_lost') && l.includes('b/00003'))).toBe(true);
    expect(lines.some((l) => l.startsWith('warn erasure.repair_failed') && l.includes('b/00005'))).toBe(true);
    p.failures.delete('b/00004');
    p.damage.set('b/00004', ['ok', 'ok', 'ok', 'ok', 'ok', 'missing']);
    await w.drain(); // not due yet
    expect(p.damage.has('b/00004')).toBe(true);
    await w.stop();
  });
});

describe('background scrub', () => {
  it('a pass repairs, records its end, and feeds the metrics', async () => {
    const p = await fakeWith(20);
    p.damage.set('b/00007', ['ok', 'missing', 'ok', 'ok', 'ok', 'ok']);
    const { log, lines } = memLog();
    const w = new ScrubWorker(p, log, { intervalMs: 3_600_000 });
    const r = await w.pass();
    expect(r?.repairedFragments).toBe(1);
    expect(w.stats.passes).toBe(1);
    expect((await loadLastPass(p))?.repair).toBe(true);
    expect(lines.some((l) => l.startsWith('info scrub.pass'))).toBe(true);
    const text = erasureMetricLines(p, w).join('\n');
    for (const name of ['fragments_verified_total', 'fragments_damaged_total', 'fragments_repaired_total', 'repair_bytes_total', 'degraded_reads_total', 'degraded_blobs', 'scrub_passes_total', 'lost_blobs']) {
      expect(text).toMatch(new RegExp(`^strata_erasure_${name} \\d+$`, 'm'));
    }
    expect(text).toMatch(/^strata_erasure_fragments_verified_total 120$/m);
    expect(text).toMatch(/^strata_erasure_fragments_repaired_total 1$/m);
    await w.stop();
  });

  it('an interrupted pass resumes soon after start; an admin preemption saves the cursor', async () => {
    const p = await fakeWith(200);
    p.delay = () => 10; // 200 blobs, 4 at a time: about half a second per pass
    const { log } = memLog();
    const w = new ScrubWorker(p, log, { intervalMs: 3_600_000, rateBytesPerSec: 1e9 });
    const running = w.pass();
    await new Promise((r) => setTimeout(r, 100));
    await preemptBackgroundScrub(p);
    const r = await running;
    expect(r?.complete).toBe(false);
    const cursor = await loadCursor(p);
    expect(cursor?.repair).toBe(true);
    await w.stop();

    // A new worker (a restart) with a short interval picks the cursor up and finishes.
    const w2 = new ScrubWorker(p, log, { intervalMs: 50, rateBytesPerSec: 1e9 });
    await w2.start();
    const t0 = Date.now();
    while (w2.stats.passes === 0 && Date.now() - t0 < 10_000) await new Promise((res) => setTimeout(res, 20));
    await w2.stop();
    expect(w2.stats.passes).toBeGreaterThanOrEqual(1);
    expect(await loadCursor(p)).toBeUndefined();
  });
});
