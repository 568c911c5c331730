/**
 * 100,000 empty multipart uploads (the attack of issue 8 §1: before the uploads keyspace each
 * cost ~25 KiB of RAM for the life of the process and was rewritten by every checkpoint).
 *
 * A child process (uploads-scale-worker.ts, run with --expose-gc) creates them through the
 * Store API and checkpoints. Asserted:
 *   - its heap after the checkpoint is within HEAP_SLACK of what it was before the first
 *     upload, and its RSS within RSS_SLACK (the overlay budget, 8 MiB here, plus the block
 *     cache, 8 MiB, plus allocator slack): no memory per upload once checkpointed;
 *   - the root does not grow with uploads (it names runs), and a checkpoint after one upload
 *     ended and one began writes a run of a handful of entries, not the 100,000 again;
 *   - this test's own process (a fresh one) reopens the directory and pages the uploads: every
 *     upload exactly once, in order, with prefix and delimiter too; `verify` is clean.
 * The figures are printed (console) for the report.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleEntry } from '../soak/bundle.js';
import { openStore } from '../../src/store/open.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { verifyRepository } from '../../src/store/verify.js';
import { compareKeys } from '../../src/store/index/compare.js';
import { tempDir } from './helpers.js';

const N = 100_000;
const MiB = 1024 * 1024;
/** Heap growth allowed after the checkpoint: 100,000 uploads held in memory would be >= 25 MiB even at 250 bytes each. */
const HEAP_SLACK = 8 * MiB;
/** RSS growth allowed: overlay budget (8 MiB) + block cache (8 MiB) + V8/allocator slack. */
const RSS_SLACK = 96 * MiB;
/** A root names at most 2 * maxRuns uploads runs (~200 bytes each) per bucket, whatever the uploads. */
const ROOT_MAX_BYTES = 8192;

interface Report {
  count: number;
  createMs: number;
  commits: number;
  checkpoints: number;
  compactions: number;
  baseline: { rss: number; heapUsed: number };
  after: { rss: number; heapUsed: number };
  peakRss: number;
  first: { rootBytes: number; uploadRuns: { key: string; bytes: number; entries: number }[]; uploadCount: number };
  second: { rootBytes: number; uploadCount: number; newRuns: { key: string; bytes: number; entries: number }[] };
  abortedId: string;
}

let dir: string;
let report: Report;
const temps: (() => void)[] = [];

beforeAll(async () => {
  const t = tempDir('uploads-scale');
  temps.push(t.cleanup);
  dir = `${t.dir}/repo`;
  const worker = await bundleEntry(fileURLToPath(new URL('./uploads-scale-worker.ts', import.meta.url)), 'uploads-scale');
  try {
    const r = spawnSync(process.execPath, ['--expose-gc', worker.path, dir, String(N)], { encoding: 'utf8', timeout: 240_000 });
    if (r.status !== 0) throw new Error(`worker failed (${r.status} ${r.signal}): ${r.stderr}`);
    report = JSON.parse(r.stdout.trim().split('\n').pop()!) as Report;
  } finally {
    await worker.remove();
  }
  const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
  console.log(
    [
      `${N} uploads created in ${report.createMs} ms (${report.commits} commits, ${report.checkpoints} checkpoints, ${report.compactions} compactions)`,
      `RSS ${mib(report.baseline.rss)} before, peak ${mib(report.peakRss)}, ${mib(report.after.rss)} after checkpoint; heap ${mib(report.baseline.heapUsed)} -> ${mib(report.after.heapUsed)}`,
      `root ${report.first.rootBytes} B naming ${report.first.uploadRuns.length} uploads runs of ${mib(report.first.uploadRuns.reduce((n, r) => n + r.bytes, 0))} (${report.first.uploadRuns.reduce((n, r) => n + r.entries, 0)} entries)`,
      `next checkpoint (1 upload ended, 1 begun): root ${report.second.rootBytes} B, new runs ${JSON.stringify(report.second.newRuns.map((r) => ({ bytes: r.bytes, entries: r.entries })))}`,
    ].join('\n')
  );
}, 300_000);
afterAll(() => {
  for (const c of temps.splice(0)) c();
});

describe(`${N} empty multipart uploads`, () => {
  it('hold no memory once checkpointed', () => {
    expect(report.count).toBe(N);
    expect(report.first.uploadCount).toBe(N);
    expect(report.after.heapUsed - report.baseline.heapUsed).toBeLessThan(HEAP_SLACK);
    expect(report.after.rss - report.baseline.rss).toBeLessThan(RSS_SLACK);
  });

  it('do not grow the root, and an untouched upload is not written again', () => {
    expect(report.first.rootBytes).toBeLessThan(ROOT_MAX_BYTES);
    expect(report.second.rootBytes).toBeLessThan(ROOT_MAX_BYTES);
    expect(report.second.uploadCount).toBe(N);
    // The second checkpoint writes one run with its changes: the ended upload (record and
    // queue entry deleted) and the new one (record and queue entry). Compaction, when due,
    // merges only runs of similar size (runs.ts), so the large runs of untouched uploads stay.
    const total = report.first.uploadRuns.reduce((n, r) => n + r.bytes, 0);
    expect(report.second.newRuns).toEqual([{ key: expect.any(String), bytes: expect.any(Number), entries: 4 }]);
    expect(report.second.newRuns[0]!.bytes).toBeLessThan(4096);
    expect(total).toBeGreaterThan(1000 * 4096);
  });

  it('reopen in a fresh process and page exactly once each, in order, also with prefix and delimiter', async () => {
    const store = await openStore(dir);
    try {
      const seen = new Set<string>();
      let prev: { key: string; initiated: number; uploadId: string } | undefined;
      let keyMarker: string | undefined;
      let uploadIdMarker: string | undefined;
      let pages = 0;
      for (;;) {
        const r = await store.listMultipartUploads('scale', { ...(keyMarker ? { keyMarker } : {}), ...(uploadIdMarker ? { uploadIdMarker } : {}) });
        pages++;
        for (const u of r.uploads) {
          expect(seen.has(u.uploadId)).toBe(false);
          seen.add(u.uploadId);
          if (prev) expect(compareKeys(prev.key, u.key) < 0 || (prev.key === u.key && prev.initiated <= u.initiated)).toBe(true);
          prev = u;
        }
        if (!r.isTruncated) break;
        keyMarker = r.nextKeyMarker;
        uploadIdMarker = r.nextUploadIdMarker;
      }
      expect(seen.size).toBe(N); // one aborted, one created
      expect(seen.has(report.abortedId)).toBe(false);
      expect(pages).toBe(N / 1000);
      const top = await store.listMultipartUploads('scale', { delimiter: '/' });
      expect(top.commonPrefixes).toEqual(['k/']);
      const mid = await store.listMultipartUploads('scale', { prefix: 'k/', delimiter: '/' });
      expect(mid.commonPrefixes).toHaveLength(100);
      expect(mid.uploads.map((u) => u.key)).toEqual(['k/new']);
      const one = await store.listMultipartUploads('scale', { prefix: 'k/42/', maxUploads: 1000 });
      expect(one.uploads).toHaveLength(N / 100);
      expect(one.isTruncated).toBe(false);
    } finally {
      await store.close();
    }
    const provider = await createFsProvider({ dir });
    try {
      expect((await verifyRepository(provider)).problems).toEqual([]);
    } finally {
      await provider.close();
    }
  });
});
