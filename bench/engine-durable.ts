/**
 * @module Small durable puts: 4 KiB PutObject calls, each acknowledged only once its commit
 * is durable (that is what putObject's promise means), from one sequential writer and from 16
 * concurrent ones, on both commit paths of the fs provider: commit blobs (a commit blob and an
 * anchor move per batch) and the commit log (one append + fdatasync per batch). Reports
 * throughput, latency, CPU per operation and how the group commit batched them.
 */
import { BUCKET, bodyOf, objectKey, once, openBenchStore, removeDir, tempDir } from './engine-fixture.js';
import { table } from './lib/markdown.js';
import { fmt, median, medianRange, percentile } from './lib/stats.js';

const RUNS = 3;
const OBJECT_BYTES = 4096;
/** Puts before the clock starts: the first ones create the fs provider's directories. */
const WARMUP_PUTS = 32;
/** Writer counts compared: one sequential writer, and a modest concurrent client pool. */
const WRITERS = [1, 16] as const;

interface Sample {
  opsPerSec: number;
  latencies: number[];
  cpuMsPerOp: number;
  commits: number;
  largestBatch: number;
}

/** The two commit paths compared (RepositoryOptions.commitLog). */
const PATHS = [
  { name: 'commit blobs', commitLog: false },
  { name: 'commit log', commitLog: true },
] as const;

async function runOnce(writers: number, perWriter: number, commitLog: boolean): Promise<Sample> {
  const dir = await tempDir('durable');
  const { store } = await openBenchStore(dir, { commitLog });
  try {
    await store.createBucket(BUCKET);
    let next = 0;
    const put = (i: number) => store.putObject(BUCKET, objectKey(i), once(bodyOf(i, OBJECT_BYTES)), { size: OBJECT_BYTES });
    for (let w = 0; w < WARMUP_PUTS; w++) await put(next++);
    const before = { ...store.repo.stats };
    store.repo.stats.largestBatch = 0;
    const latencies: number[] = [];
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: writers }, async () => {
        for (let j = 0; j < perWriter; j++) {
          const s = performance.now();
          await put(next++);
          latencies.push(performance.now() - s);
        }
      })
    );
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const ops = writers * perWriter;
    return {
      opsPerSec: (ops * 1000) / ms,
      latencies,
      cpuMsPerOp: (cpu.user + cpu.system) / 1000 / ops,
      commits: store.repo.stats.commits - before.commits,
      largestBatch: store.repo.stats.largestBatch,
    };
  } finally {
    await store.close();
    await removeDir(dir);
  }
}

/** Measures both writer counts and returns the markdown of this section. */
export async function benchDurable(opts: { quick: boolean; log: (m: string) => void }): Promise<string> {
  const rows: string[][] = [];
  for (const path of PATHS) for (const writers of WRITERS) {
    const perWriter = writers === 1 ? (opts.quick ? 100 : 500) : opts.quick ? 20 : 100;
    const samples: Sample[] = [];
    for (let r = 0; r < RUNS; r++) {
      opts.log(`durable puts (${path.name}): ${writers} writer(s), run ${r + 1}/${RUNS}`);
      samples.push(await runOnce(writers, perWriter, path.commitLog));
    }
    const ops = writers * perWriter;
    const commits = median(samples.map((s) => s.commits));
    rows.push([
      path.name,
      writers === 1 ? '1 (sequential)' : `${writers} concurrent`,
      fmt(ops),
      medianRange(samples.map((s) => s.opsPerSec)),
      medianRange(samples.map((s) => percentile(s.latencies, 50)), 2),
      medianRange(samples.map((s) => percentile(s.latencies, 99)), 2),
      medianRange(samples.map((s) => s.cpuMsPerOp), 3),
      fmt(commits),
      fmt(ops / commits, 1),
      fmt(median(samples.map((s) => s.largestBatch))),
    ]);
  }
  return [
    '### Small durable puts',
    '',
    `4 KiB PutObject on the fs provider, each acknowledged once its commit is durable (commit blobs: ` +
      'the commit blob and the anchor fsynced, renamed, directory fsynced; commit log: one O_DSYNC append ' +
      '(durable when the write returns) on a preallocated segment); ' +
      `median (min–max) of ${RUNS} runs, each on a fresh repository after ${WARMUP_PUTS} warm-up puts. ` +
      'CPU is user + system of the whole process (libuv threads included) per operation.',
    '',
    table(
      ['Commit path', 'Writers', 'Puts', 'ops/s', 'p50 ms', 'p99 ms', 'CPU ms/op', 'Commits', 'Puts/commit', 'Largest batch'],
      rows,
      ['l']
    ),
  ].join('\n');
}
