/**
 * @module Cold reads: how many provider requests one GET costs on a freshly opened Store
 * (new provider, new block cache). A packed body should be exactly one ranged read of its
 * pack entry (entry header + body); a carrier one ranged read per chunk blob.
 *
 * The object index is either the replayed commit tail (in memory after open) or, after a
 * checkpoint, a run on the provider, whose block a cold lookup must read first.
 */
import { ENTRY_HEADER_SIZE } from '../src/pack/stream-writer.js';
import { CHUNK_SIZE, SEGMENT_SIZE } from '../src/store/layout.js';
import { BUCKET, bodyOf, objectKey, once, openBenchStore, removeDir, tempDir, type BenchStore } from './engine-fixture.js';
import { TARGETS } from './engine-targets.js';
import type { RequestCounts } from './lib/counting-provider.js';
import { table } from './lib/markdown.js';
import { fmt } from './lib/stats.js';

/** Packed objects written in one batch, and their size. */
const PACKED_OBJECTS = 64;
const PACKED_BYTES = 4096;
/** The carrier object: larger than PACK_MAX_BODY, so its body goes to chunk blobs. */
const CARRIER_BYTES = 3 * 1024 * 1024;
const CARRIER_KEY = 'carrier/3MiB';
/** Object read cold (any packed one) and its neighbour in the same index block. */
const PROBE = 17;
const NEIGHBOUR = 18;

interface Probe {
  what: string;
  counts: RequestCounts;
  classes: string;
  /** Exact bytes (and, for packed bodies, gets) expected, when the case has a target. */
  expect?: { gets?: number; bytes: number };
}

async function write(dir: string): Promise<void> {
  const { store } = await openBenchStore(dir);
  try {
    await store.createBucket(BUCKET);
    await Promise.all(
      Array.from({ length: PACKED_OBJECTS }, (_, i) =>
        store.putObject(BUCKET, objectKey(i), once(bodyOf(i, PACKED_BYTES)), { size: PACKED_BYTES })
      )
    );
    await store.putObject(BUCKET, CARRIER_KEY, once(bodyOf(1, CARRIER_BYTES)), { size: CARRIER_BYTES });
  } finally {
    await store.close();
  }
}

/** GETs `key` to the end on `store` and returns what it cost; fails if the bytes are wrong. */
async function probe(
  open: BenchStore,
  key: string,
  expected: Uint8Array,
  what: string,
  expect?: Probe['expect']
): Promise<Probe> {
  open.counter.reset();
  const res = await open.store.getObject(BUCKET, key);
  const chunks: Uint8Array[] = [];
  for await (const c of res.body) chunks.push(c);
  if (Buffer.compare(Buffer.concat(chunks), expected) !== 0) throw new Error(`cold read of ${key} returned wrong bytes`);
  const snap = open.counter.snapshot();
  const classes = Object.entries(snap.byClass)
    .filter(([, c]) => c.gets > 0)
    .map(([name, c]) => `${name}: ${c.gets} (${fmt(c.bytesGot)} B)`)
    .join(', ');
  return { what, counts: snap.total, classes, ...(expect ? { expect } : {}) };
}

/** Measures cold GETs and returns the markdown of this section. */
export async function benchColdRead(opts: { log: (m: string) => void }): Promise<string> {
  const dir = await tempDir('cold');
  const probes: Probe[] = [];
  const openCosts: string[] = [];
  const packedExpect = { gets: 1, bytes: ENTRY_HEADER_SIZE + PACKED_BYTES };
  // Every segment entry (header + data) read once, nothing more; how many requests that
  // takes is the engine's choice (read spans, or one streamed get per chunk blob).
  const carrierExpect = { bytes: CARRIER_BYTES + Math.ceil(CARRIER_BYTES / SEGMENT_SIZE) * ENTRY_HEADER_SIZE };
  try {
    opts.log('cold read: writing 64 packed objects and one 3 MiB carrier');
    await write(dir);
    for (const phase of ['tail', 'run'] as const) {
      const open = await openBenchStore(dir);
      try {
        const o = open.counter.snapshot().total;
        openCosts.push(`${phase === 'tail' ? 'commit tail' : 'after checkpoint'}: ${o.gets} gets (${fmt(o.bytesGot)} B), ${o.lists} lists`);
        if (phase === 'tail') {
          probes.push(await probe(open, objectKey(PROBE), bodyOf(PROBE, PACKED_BYTES), 'packed 4 KiB, index in the replayed commit tail', packedExpect));
          probes.push(await probe(open, CARRIER_KEY, bodyOf(1, CARRIER_BYTES), 'carrier 3 MiB, whole body', carrierExpect));
          await open.store.checkpoint();
        } else {
          probes.push(await probe(open, objectKey(PROBE), bodyOf(PROBE, PACKED_BYTES), 'packed 4 KiB, index in a run (cold block)', packedExpect));
          probes.push(await probe(open, objectKey(NEIGHBOUR), bodyOf(NEIGHBOUR, PACKED_BYTES), 'packed 4 KiB, index in a run (block cached)', packedExpect));
        }
      } finally {
        await open.store.close();
      }
    }
  } finally {
    await removeDir(dir);
  }
  const rows = probes.map((p) => {
    const c = p.counts;
    const e = p.expect;
    const ok = e ? (e.gets === undefined || (c.gets === e.gets && c.rangedGets === e.gets)) && c.bytesGot === e.bytes : undefined;
    const want = e ? (e.gets === undefined ? `${fmt(e.bytes)} B in all` : `${e.gets} ranged get of ${fmt(e.bytes)} B`) : '—';
    return [
      p.what,
      fmt(c.gets),
      fmt(c.rangedGets),
      fmt(c.bytesGot),
      p.classes,
      want,
      ok === undefined ? '—' : ok ? 'PASS' : 'MISS',
    ];
  });
  return [
    '### Cold read',
    '',
    `A fresh Store and provider (empty block cache) GETs one object; requests counted at the provider from just after open. ` +
      `Target: ${TARGETS.coldReadGets.name} = exactly one ranged read of entry header (${ENTRY_HEADER_SIZE} B) + body; ` +
      `a carrier (chunk blobs of up to ${CHUNK_SIZE / 2 ** 20} MiB of ${SEGMENT_SIZE / 1024} KiB segments) reads each segment ` +
      'entry once; the number of requests it takes is reported.',
    '',
    table(['Case', 'Gets', 'Ranged', 'Bytes got', 'By class', 'Target', 'Result'], rows, ['l', 'r', 'r', 'r', 'l', 'l', 'l']),
    '',
    `Cost of Store.open itself: ${openCosts.join('; ')}.`,
  ].join('\n');
}
