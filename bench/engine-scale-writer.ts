/**
 * @module Child process of the scale run: writes `--objects` objects of `--size` bytes into
 * a new repository at `--dir`, `--batch` concurrent puts at a time (await all, repeat), then
 * closes without a checkpoint. Runs alone in its process so that its peak RSS is its own.
 * Prints one `RESULT {json}` line (ScaleWriterResult) on stdout; progress goes to stderr.
 */
import { BUCKET, RESULT_MARK, argValue, bodyOf, objectKey, once, openBenchStore, peakRssMiB } from './engine-fixture.js';
import type { CountSnapshot } from './lib/counting-provider.js';
import type { RepositoryStats } from '../src/store/repository.js';
import { mallocHeapBytes, sampleMemory, type MemoryPeaks } from './lib/memory-sampler.js';

export interface ScaleWriterResult {
  objects: number;
  objectBytes: number;
  batch: number;
  elapsedMs: number;
  counts: CountSnapshot;
  stats: RepositoryStats;
  /** Runs the bucket has at the end, and commits after the last checkpoint (the replay tail). */
  runs: number;
  tailCommits: number;
  peakRssMiB: number;
  /** Heap in use at the end (after the last batch, before close), MiB. */
  heapUsedMiB: number;
  /** Whether commits went to the commit log ('on') or to commit blobs ('off'). */
  commitLog: string;
  /** Peaks by kind over the workload, sampled every 100 ms (rss, heap, external, buffers). */
  memory: MemoryPeaks;
}

/** Progress lines: one per this many objects. */
const PROGRESS_EVERY = 100_000;

const dir = argValue('dir');
const objects = Number(argValue('objects'));
const objectBytes = Number(argValue('size'));
const batch = Number(argValue('batch'));
const commitLog = argValue('commit-log') ?? 'on';
if (!dir || !(objects > 0) || !(objectBytes >= 0) || !(batch > 0) || !['on', 'off'].includes(commitLog)) {
  throw new Error('usage: engine-scale-writer --dir=DIR --objects=N --size=BYTES --batch=N [--commit-log=on|off]');
}

const { store, counter } = await openBenchStore(dir, { commitLog: commitLog === 'on' });
await store.createBucket(BUCKET);
counter.reset();
const sampler = sampleMemory();
const t0 = performance.now();
for (let start = 0; start < objects; start += batch) {
  const end = Math.min(objects, start + batch);
  const puts: Promise<unknown>[] = [];
  for (let i = start; i < end; i++) {
    puts.push(store.putObject(BUCKET, objectKey(i), once(bodyOf(i, objectBytes)), { size: objectBytes }));
  }
  await Promise.all(puts);
  if (Math.floor(end / PROGRESS_EVERY) > Math.floor(start / PROGRESS_EVERY)) {
    const s = ((performance.now() - t0) / 1000).toFixed(1);
    const m = process.memoryUsage();
    const mib = (n: number) => (n / 2 ** 20).toFixed(0);
    process.stderr.write(
      `  writer: ${end} objects, ${s} s, rss ${mib(m.rss)} MiB (heap ${mib(m.heapUsed)}/${mib(m.heapTotal)}, external ${mib(m.external)}, buffers ${mib(m.arrayBuffers)}, malloc heap ${mib(mallocHeapBytes())})\n`
    );
  }
}
const elapsedMs = performance.now() - t0;
const memory = sampler.stop();
const result: ScaleWriterResult = {
  objects,
  objectBytes,
  batch,
  elapsedMs,
  counts: counter.snapshot(),
  stats: { ...store.repo.stats },
  runs: store.repo.state.buckets.get(BUCKET)?.runs.length ?? 0,
  tailCommits: store.repo.seq - store.repo.rootSeq,
  peakRssMiB: 0,
  heapUsedMiB: process.memoryUsage().heapUsed / 2 ** 20,
  commitLog,
  memory,
};
await store.close();
result.peakRssMiB = peakRssMiB();
process.stdout.write(`${RESULT_MARK}${JSON.stringify(result)}\n`);
