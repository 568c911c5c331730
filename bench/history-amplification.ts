/**
 * @module The write-amplification section of `bench:history`: bytes written to the repository
 * per overwrite of a 4 KiB object in a versioned bucket, against the same overwrite in a bucket
 * that never enabled versioning (issue 9: "metadata bytes added per versioned overwrite").
 *
 * Measured at the store level, not over HTTP: a CountingProvider between the Store and the fs
 * provider counts every byte put (commit blobs with their packed bodies, roots, runs, anchor),
 * from after the key's first write to after a forced checkpoint that flushes what the
 * overwrites left in the overlays (object index and version log) into runs, so the figure
 * includes what the history costs once it is at rest. Also the growth of the data directory
 * over the same span (what stays on disk; nothing is reclaimed before issue 10's GC).
 *
 * Lanes: one key overwritten sequentially (one commit per overwrite: the worst case), and 64
 * keys overwritten 64 at a time (group commits), each unversioned, Enabled and Suspended.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BUCKET, filesystemOf, once, openBenchStore, removeDir, tempDir } from './engine-fixture.js';
import type { CountSnapshot } from './lib/counting-provider.js';
import { table } from './lib/markdown.js';
import { fmt, median, medianRange } from './lib/stats.js';

const BODY_BYTES = 4096;
/** Samples per lane (the figure is the median). */
const RUNS = 3;
/** Keys overwritten together in the batched lanes. */
const BATCH = 64;
/** Blob classes in the breakdown. */
const CLASSES = ['commits', 'roots', 'runs', 'anchor'] as const;

type Mode = 'never enabled' | 'Enabled' | 'Suspended';
const MODES: Mode[] = ['never enabled', 'Enabled', 'Suspended'];

interface Lane {
  mode: Mode;
  /** Keys overwritten per round (1: sequential). */
  keys: number;
  rounds: number;
}

interface Sample {
  counts: CountSnapshot;
  dirBytes: number;
  ms: number;
}

const opsOf = (l: Lane) => l.keys * l.rounds;

function lanes(quick: boolean): Lane[] {
  const out: Lane[] = [];
  for (const mode of MODES) out.push({ mode, keys: 1, rounds: quick ? 100 : 500 });
  for (const mode of MODES) out.push({ mode, keys: BATCH, rounds: quick ? 4 : 16 });
  return out;
}

/** Bytes of every file under `dir`. */
async function dirBytes(dir: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) n += await dirBytes(p);
    else if (e.isFile()) n += (await stat(p)).size;
  }
  return n;
}

function bodyOf(seed: number): Uint8Array {
  const b = new Uint8Array(BODY_BYTES);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < BODY_BYTES; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    b[i] = x & 0xff;
  }
  return b;
}

async function runLane(lane: Lane): Promise<Sample> {
  const dir = await tempDir('history-amp');
  const { store, counter } = await openBenchStore(dir);
  try {
    await store.createBucket(BUCKET);
    if (lane.mode !== 'never enabled') await store.putVersioning(BUCKET, lane.mode);
    const key = (k: number) => `amp/${String(k).padStart(4, '0')}`;
    const put = (k: number, seed: number) => store.putObject(BUCKET, key(k), once(bodyOf(seed)), { size: BODY_BYTES });
    // Each key exists before the measured overwrites; then everything so far is checkpointed.
    await Promise.all(Array.from({ length: lane.keys }, (_, k) => put(k, k)));
    await store.repo.checkpoint();
    const before = await dirBytes(dir);
    counter.reset();
    const t0 = performance.now();
    for (let r = 1; r <= lane.rounds; r++) {
      if (lane.keys === 1) await put(0, r);
      else await Promise.all(Array.from({ length: lane.keys }, (_, k) => put(k, r * lane.keys + k)));
    }
    const ms = performance.now() - t0;
    await store.repo.checkpoint();
    return { counts: counter.snapshot(), dirBytes: (await dirBytes(dir)) - before, ms };
  } finally {
    await store.close();
    await removeDir(dir);
  }
}

/** Measures every lane; the markdown of this section. */
export async function benchAmplification(o: { quick: boolean; log: (m: string) => void }): Promise<string> {
  const results = new Map<Lane, Sample[]>();
  const all = lanes(o.quick);
  for (let run = 0; run < RUNS; run++) {
    // Lanes interleaved across runs, so machine noise hits all of them.
    for (const lane of all) {
      o.log(`amplification: ${lane.mode}, ${lane.keys === 1 ? 'sequential' : `${lane.keys} at a time`}, run ${run + 1}/${RUNS}`);
      results.set(lane, [...(results.get(lane) ?? []), await runLane(lane)]);
    }
  }
  const perOp = (lane: Lane, f: (s: Sample) => number) => results.get(lane)!.map((s) => f(s) / opsOf(lane));
  const meta = (lane: Lane) => perOp(lane, (s) => s.counts.total.bytesPut - opsOf(lane) * BODY_BYTES);
  const rows: string[][] = [];
  const breakdown: string[][] = [];
  for (const lane of all) {
    const base = all.find((l) => l.keys === lane.keys && l.mode === 'never enabled')!;
    const added = median(meta(lane)) - median(meta(base));
    const name = `${lane.mode}, ${lane.keys === 1 ? 'one key, sequential' : `${lane.keys} keys, ${lane.keys} at a time`}`;
    rows.push([
      name,
      fmt(opsOf(lane)),
      medianRange(perOp(lane, (s) => s.counts.total.bytesPut)),
      medianRange(meta(lane)),
      lane.mode === 'never enabled' ? '—' : `${added >= 0 ? '+' : ''}${fmt(added)}`,
      `${fmt(median(perOp(lane, (s) => s.counts.total.bytesPut)) / BODY_BYTES, 3)}x`,
      medianRange(perOp(lane, (s) => s.dirBytes)),
      fmt(median(results.get(lane)!.map((s) => (opsOf(lane) * 1000) / s.ms))),
    ]);
    breakdown.push([name, ...CLASSES.map((c) => fmt(median(perOp(lane, (s) => s.counts.byClass[c]?.bytesPut ?? 0)))), fmt(median(perOp(lane, (s) => s.counts.total.puts)), 3)]);
  }
  return [
    '### Write amplification of versioned overwrites (store level)',
    '',
    `Bytes written to the repository per overwrite of a ${BODY_BYTES / 1024} KiB object, counted at the provider (a CountingProvider over the fs provider on ${filesystemOf(process.env.BENCH_TMPDIR ?? '/tmp')}), ` +
      `from after each key's first write to after a forced checkpoint that flushes the overwrites' index and version-log entries into runs; median (min–max) of ${RUNS} runs, lanes interleaved. ` +
      '"Metadata" is bytes written minus the 4 KiB body; "added by versioning" is that minus the never-enabled lane of the same shape. ' +
      'Every write is recorded in the version log whatever the versioning state (history for point-in-time reads), so the never-enabled lane pays for its log entry too. ' +
      '"Directory growth" is the data directory after minus before (fs provider, 32 B file headers included). Measured through the Store API, not HTTP: the bytes are the same, and HTTP adds none.',
    o.quick ? '\n**Quick run: few overwrites, not for publication.**' : '',
    '',
    table(['Lane', 'Overwrites', 'Bytes written / op', 'Metadata / op', 'Added by versioning', 'Amplification', 'Directory growth / op', 'ops/s'], rows, ['l']),
    '',
    'Where the bytes go, per overwrite (medians):',
    '',
    table(['Lane', 'commits/', 'roots/', 'runs/', 'anchor', 'puts/op'], breakdown, ['l']),
  ].join('\n');
}
