/**
 * @module Write amplification of small workloads: backend bytes written (every commit,
 * anchor, root, run and chunk blob the workload causes, counted at the provider) divided
 * by plaintext bytes. Counters start after the bucket exists; no checkpoint is forced at
 * the end. Each lane runs RUNS times on a fresh fs repository, on both commit paths side by
 * side (the commit log, the default, and commit blobs); medians are reported.
 */
import type { RepositoryStats } from '../src/store/repository.js';
import { BUCKET, bodyOf, filesystemOf, objectKey, once, openBenchStore, removeDir, tempDir } from './engine-fixture.js';
import { TARGETS, ceiling, verdict, type Target } from './engine-targets.js';
import type { CountSnapshot } from './lib/counting-provider.js';
import { table } from './lib/markdown.js';
import { fmt, median, medianRange } from './lib/stats.js';

/** Samples per lane (the figure is the median). */
const RUNS = 3;
/** Concurrent puts per batch in the batched lanes (rs3 publishes 64 objects together). */
const BATCH = 64;
/** Blob classes shown in the breakdown, in this order; anything else is "other". */
const CLASSES = ['commits', 'log', 'anchor', 'roots', 'runs', 'chunks'] as const;
/** The two commit paths compared (RepositoryOptions.commitLog): the default first. */
const PATHS = [
  { name: 'commit log', commitLog: true },
  { name: 'commit blobs', commitLog: false },
] as const;

interface Lane {
  target: Target;
  objectBytes: number;
  /** Sequential puts (each awaited) when `batches` is 0. */
  objects: number;
  batches: number;
}

interface Sample {
  counts: CountSnapshot;
  stats: RepositoryStats;
  ms: number;
}

function lanes(quick: boolean): Lane[] {
  const q = (full: number, small: number) => (quick ? small : full);
  return [
    { target: TARGETS.ampSequential512, objectBytes: 512, objects: q(2000, 200), batches: 0 },
    { target: TARGETS.amp4KiBBatch, objectBytes: 4096, objects: 0, batches: q(64, 8) },
    { target: TARGETS.amp256KiBBatch, objectBytes: 256 * 1024, objects: 0, batches: q(16, 2) },
    { target: TARGETS.emptyBatch, objectBytes: 0, objects: 0, batches: q(64, 8) },
  ];
}

const objectsOf = (lane: Lane) => (lane.batches > 0 ? lane.batches * BATCH : lane.objects);

async function runLane(lane: Lane, commitLog: boolean): Promise<Sample> {
  const dir = await tempDir('amp');
  const { store, counter } = await openBenchStore(dir, { commitLog });
  try {
    await store.createBucket(BUCKET);
    counter.reset();
    const put = (i: number) => store.putObject(BUCKET, objectKey(i), once(bodyOf(i, lane.objectBytes)), { size: lane.objectBytes });
    const t0 = performance.now();
    if (lane.batches === 0) {
      for (let i = 0; i < lane.objects; i++) await put(i);
    } else {
      for (let b = 0; b < lane.batches; b++) {
        await Promise.all(Array.from({ length: BATCH }, (_, j) => put(b * BATCH + j)));
      }
    }
    const ms = performance.now() - t0;
    return { counts: counter.snapshot(), stats: { ...store.repo.stats }, ms };
  } finally {
    await store.close();
    await removeDir(dir);
  }
}

/** The lane's figure: amplification (x), or bytes per object for empty bodies. */
function figure(lane: Lane, s: Sample): number {
  const n = objectsOf(lane);
  return lane.objectBytes === 0 ? s.counts.total.bytesPut / n : s.counts.total.bytesPut / (n * lane.objectBytes);
}

function classBytes(s: Sample, name: string): number {
  if (name !== 'other') return s.counts.byClass[name]?.bytesPut ?? 0;
  let n = 0;
  for (const [c, v] of Object.entries(s.counts.byClass)) if (!(CLASSES as readonly string[]).includes(c)) n += v.bytesPut;
  return n;
}

/** Measures every lane and returns the markdown of this section. */
export async function benchAmplification(opts: { quick: boolean; log: (m: string) => void }): Promise<string> {
  const rows: string[][] = [];
  const breakdown: string[][] = [];
  for (const lane of lanes(opts.quick)) for (const path of PATHS) {
    const samples: Sample[] = [];
    for (let r = 0; r < RUNS; r++) {
      opts.log(`amplification: ${lane.target.name} (${path.name}), run ${r + 1}/${RUNS}`);
      samples.push(await runLane(lane, path.commitLog));
    }
    const n = objectsOf(lane);
    const figs = samples.map((s) => figure(lane, s));
    const digits = lane.objectBytes === 0 ? 1 : 4;
    const m = median(figs);
    rows.push([
      lane.target.name,
      path.name,
      fmt(n),
      fmt(median(samples.map((s) => s.counts.total.bytesPut))),
      `${medianRange(figs, digits)}${lane.target.unit === 'x' ? 'x' : ''}`,
      ceiling(lane.target, lane.objectBytes === 0 ? 0 : 2),
      lane.target.rs3,
      verdict(lane.target, m),
    ]);
    const perObject = (f: (s: Sample) => number, digits = 1) => fmt(median(samples.map(f)) / n, digits);
    breakdown.push([
      lane.target.name,
      path.name,
      ...[...CLASSES, 'other'].map((c) => perObject((s) => classBytes(s, c))),
      perObject((s) => s.counts.total.bytesPut - n * lane.objectBytes),
      perObject((s) => s.counts.total.puts, 3),
      fmt(median(samples.map((s) => s.stats.commits))),
      fmt(median(samples.map((s) => s.stats.checkpoints))),
      fmt(median(samples.map((s) => (n * 1000) / s.ms))),
    ]);
  }
  return [
    '### Write amplification',
    '',
    `Backend bytes written (counted at the provider) / plaintext bytes, median (min–max) of ${RUNS} runs, ` +
      `each on a fresh fs repository (${filesystemOf(process.env.BENCH_TMPDIR ?? '/tmp')}); ${BATCH} concurrent puts per batch; ` +
      'keys of 32 B; counters start after the bucket exists; no final checkpoint. The fs provider adds a ' +
      '32 B header per blob file, not counted here (it is not backend traffic on S3), nor are the zeros it writes ' +
      'ahead of its log appends (src/provider/fs/log-segment.ts: so that an append overwrites allocated blocks; at most ' +
      'about the log bytes again on the local disk, and what the last fill left past the written end is cut off at the seal).',
    '',
    table(['Workload', 'Commit path', 'Objects', 'Bytes written', 'Amplification', 'Target', 'rs3 (quoted)', 'Result'], rows, ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'l']),
    '',
    'Where the bytes go, per object (medians). "overhead" is everything beyond the plaintext.',
    '',
    table(
      ['Workload', 'Commit path', 'commits/', 'log/', 'anchor', 'roots/', 'runs/', 'chunks/', 'other', 'overhead', 'puts/object', 'commits', 'checkpoints', 'objects/s'],
      breakdown,
      ['l', 'l']
    ),
  ].join('\n');
}
