/**
 * @module The last few whole stripes a degraded read rebuilt, so that the reads that follow
 * through the same stripe copy from them instead of rebuilding it again.
 *
 * A large GET reads a blob in spans (the store reads 2 MiB at a time) and a stripe holds
 * k cells (2.5 MiB at (10,4) with 256 KiB cells), so a stripe is touched by two spans or more.
 * Rebuilt per span, a degraded stripe was read from k fragments, checked and reconstructed
 * once per span that touched it (~2.5 times at (10,4)); rebuilt whole once and kept here, it
 * is read, checked and reconstructed once.
 *
 * An entry holds the k data cells of one stripe of one write (keyed by its BlobMeta object:
 * a later write of the key has another), verified and rebuilt exactly as a read does it, so a
 * reader copying from it gets the bytes it would have rebuilt itself. Concurrent readers of a
 * stripe being rebuilt wait for that one rebuild. A failed rebuild is not kept (the next read
 * tries again). The cells stay where the rebuild left them: in the resident stripe (wasm
 * memory) it was reconstructed in, whose ownership the rebuild hands over, or in a heap buffer
 * when the resident pool had no room. An evicted entry gives its memory back once no reader
 * holds it (the region to its arena, the heap buffer to a small pool of its own).
 *
 * A provider that closes drops the entries of its blobs (dropRebuiltStripes), so their memory
 * does not outlive it.
 *
 * An entry rebuilt for a reader that checks the bytes itself (ReadContext.endToEnd: its sources'
 * block CRCs were not checked) is marked unchecked: only such readers use it. A checked reader
 * rebuilds the stripe from checked sources, and that evicts the unchecked entry of the stripe,
 * which may hold what a damaged source made of it.
 */
import type { ResidentStripe } from '../../codec/resident-stripe.js';
import type { BlobMeta } from './lookup.js';

/** Entries kept, process-wide: the stripe being read, the one read ahead and two behind
 * (each k + m resident shards, 3.5 MiB at (10,4) with 256 KiB cells: ~14 MiB in all). */
export const MAX_REBUILT_STRIPES = 4;

/** The k data cells of a rebuilt stripe: cell i at [i * stride, i * stride + cell length) of
 * bytes(). */
export interface RebuiltCells {
  /** The memory holding them (derived again on each use: a resident region's view is). */
  bytes(): Uint8Array;
  stride: number;
  /** Gives the memory back; called once, when no reader holds the cells any more. */
  release(): void;
}

interface Entry {
  /** What the entry belongs to (the provider's domain set): dropRebuiltStripes(owner). */
  owner: object;
  meta: BlobMeta;
  stripe: number;
  /** Rebuilt from sources whose block CRCs were checked (see the module doc). */
  checked: boolean;
  /** Set once the rebuild succeeded. */
  cells: RebuiltCells | undefined;
  ready: Promise<void>;
  users: number;
  evicted: boolean;
  released: boolean;
}

/** Least recently used first. */
const entries: Entry[] = [];
/** Idle heap buffers of released entries (at most MAX_REBUILT_STRIPES). */
const idle: Uint8Array[] = [];

/** Cells kept in a heap buffer of at least `bytes` (pooled), cell i at i * `stride`: the caller
 * fills `into` before handing `cells` back from its rebuild. */
export function heapCells(bytes: number, stride: number): { into: Uint8Array; cells: RebuiltCells } {
  const i = idle.findIndex((b) => b.length >= bytes);
  const buf = i < 0 ? Buffer.allocUnsafe(bytes) : idle.splice(i, 1)[0]!;
  return {
    into: buf.subarray(0, bytes),
    cells: {
      bytes: () => buf,
      stride,
      release: () => void (idle.length < MAX_REBUILT_STRIPES && idle.push(buf)),
    },
  };
}

/** Cells kept where they were rebuilt: the data shards of resident `stripe`, which the
 * caller hands over (released with the entry). */
export function residentCells(stripe: ResidentStripe): RebuiltCells {
  return { bytes: () => stripe.bytes, stride: stripe.stride, release: () => stripe.release() };
}

function evict(e: Entry): void {
  e.evicted = true;
  const i = entries.indexOf(e);
  if (i >= 0) entries.splice(i, 1);
  releaseIfIdle(e);
}

/** An evicted entry's memory goes back once no reader (nor its builder) holds it. */
function releaseIfIdle(e: Entry): void {
  if (!e.evicted || e.users !== 0 || e.released || !e.cells) return;
  e.released = true;
  e.cells.release();
}

/** Evicts every entry of `owner`; each gives its memory back once no reader holds it. */
export function dropRebuiltStripes(owner: object): void {
  for (const e of entries.filter((x) => x.owner === owner)) evict(e);
}

/** Is stripe `stripe` of `meta` kept (or being rebuilt), for a reader that wants it `checked`
 * (else any entry will do)? */
export function hasRebuiltStripe(meta: BlobMeta, stripe: number, checked = false): boolean {
  return entries.some((x) => x.meta === meta && x.stripe === stripe && (x.checked || !checked));
}

/**
 * Hands `use` the k data cells of stripe `stripe` of `meta` (cell i at [i * stride, i * stride
 * + cell length) of `cells`), from the cache or rebuilt by `build`, which resolves with where
 * it left them (heapCells or residentCells) and hands them over. `use` must copy what it needs
 * before returning. Errors of `build` reject (and are not cached). `checked`: the reader wants
 * a stripe rebuilt from checked sources, and `build` checks them (module doc). `owner`: what
 * the entry belongs to (dropRebuiltStripes).
 */
export async function withRebuiltStripe(
  owner: object,
  meta: BlobMeta,
  stripe: number,
  checked: boolean,
  build: () => Promise<RebuiltCells>,
  use: (cells: Uint8Array, stride: number) => void
): Promise<void> {
  let e = entries.find((x) => x.meta === meta && x.stripe === stripe && (x.checked || !checked));
  if (e) {
    entries.splice(entries.indexOf(e), 1);
    entries.push(e);
  } else {
    // A checked rebuild supersedes an unchecked one of the same stripe.
    if (checked) for (const x of entries.filter((x) => x.meta === meta && x.stripe === stripe)) evict(x);
    const entry: Entry = { owner, meta, stripe, checked, cells: undefined, ready: Promise.resolve(), users: 0, evicted: false, released: false };
    entry.ready = build().then((cells) => {
      entry.cells = cells;
      releaseIfIdle(entry); // evicted while it was being built, and nobody waits for it
    });
    entry.ready.catch(() => {
      if (!entry.evicted) evict(entry);
    });
    entries.push((e = entry));
    while (entries.length > MAX_REBUILT_STRIPES) evict(entries[0]!);
  }
  e.users++;
  try {
    await e.ready;
    use(e.cells!.bytes(), e.cells!.stride);
  } finally {
    e.users--;
    releaseIfIdle(e);
  }
}
