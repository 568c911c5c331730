/**
 * @module The last few whole stripes a degraded read rebuilt, so that the reads that follow
 * through the same stripe copy from them instead of rebuilding it again.
 *
 * A large GET reads a blob in spans (the store reads 1 MiB at a time) and a stripe holds
 * k cells (2.5 MiB at (10,4) with 256 KiB cells), so each stripe is touched by several spans.
 * Rebuilt per span, a degraded stripe was read from k fragments, checked and reconstructed
 * once per span that touched it (~2.5 times at (10,4)); rebuilt whole once and kept here, it
 * is read, checked and reconstructed once.
 *
 * An entry holds the k data cells of one stripe of one write (keyed by its BlobMeta object:
 * a later write of the key has another), verified and rebuilt exactly as a read does it, so a
 * reader copying from it gets the bytes it would have rebuilt itself. Concurrent readers of a
 * stripe being rebuilt wait for that one rebuild. A failed rebuild is not kept (the next read
 * tries again). Buffers of evicted entries are reused once no reader holds them.
 *
 * An entry rebuilt for a reader that checks the bytes itself (ReadContext.endToEnd: its sources'
 * block CRCs were not checked) is marked unchecked: only such readers use it. A checked reader
 * rebuilds the stripe from checked sources, and that evicts the unchecked entry of the stripe,
 * which may hold what a damaged source made of it.
 */
import type { BlobMeta } from './lookup.js';

/** Entries kept, process-wide: the stripe being read, the one read ahead and two behind
 * (each k * cellLength bytes, 2.5 MiB at (10,4) with 256 KiB cells: ~10 MiB in all). */
export const MAX_REBUILT_STRIPES = 4;

interface Entry {
  meta: BlobMeta;
  stripe: number;
  /** Rebuilt from sources whose block CRCs were checked (see the module doc). */
  checked: boolean;
  buf: Uint8Array;
  ready: Promise<void>;
  users: number;
  evicted: boolean;
  recycled: boolean;
}

/** Least recently used first. */
const entries: Entry[] = [];
/** Idle buffers of evicted entries (at most MAX_REBUILT_STRIPES). */
const idle: Uint8Array[] = [];

function takeBuffer(n: number): Uint8Array {
  const i = idle.findIndex((b) => b.length >= n);
  if (i < 0) return Buffer.allocUnsafe(n);
  return idle.splice(i, 1)[0]!;
}

function evict(e: Entry): void {
  e.evicted = true;
  const i = entries.indexOf(e);
  if (i >= 0) entries.splice(i, 1);
  recycle(e);
}

/** An evicted entry's buffer goes back once no reader (nor its builder) holds it. */
function recycle(e: Entry): void {
  if (!e.evicted || e.users !== 0 || e.recycled) return;
  e.recycled = true;
  if (idle.length < MAX_REBUILT_STRIPES) idle.push(e.buf);
}

/** Is stripe `stripe` of `meta` kept (or being rebuilt), for a reader that wants it `checked`
 * (else any entry will do)? */
export function hasRebuiltStripe(meta: BlobMeta, stripe: number, checked = false): boolean {
  return entries.some((x) => x.meta === meta && x.stripe === stripe && (x.checked || !checked));
}

/**
 * Hands `use` the k data cells of stripe `stripe` of `meta` (cell i at bytes
 * [i * cellLength, (i + 1) * cellLength) of `bytes` long), from the cache or rebuilt by
 * `build`, which must fill every byte of the buffer it is given before resolving (and write
 * into it only synchronously, from its own continuation). `use` must copy what it needs
 * before returning. Errors of `build` reject (and are not cached). `checked`: the reader
 * wants a stripe rebuilt from checked sources, and `build` checks them (module doc).
 */
export async function withRebuiltStripe(
  meta: BlobMeta,
  stripe: number,
  bytes: number,
  checked: boolean,
  build: (into: Uint8Array) => Promise<void>,
  use: (cells: Uint8Array) => void
): Promise<void> {
  let e = entries.find((x) => x.meta === meta && x.stripe === stripe && x.buf.length >= bytes && (x.checked || !checked));
  if (e) {
    entries.splice(entries.indexOf(e), 1);
    entries.push(e);
  } else {
    // A checked rebuild supersedes an unchecked one of the same stripe.
    if (checked) for (const x of entries.filter((x) => x.meta === meta && x.stripe === stripe)) evict(x);
    const buf = takeBuffer(bytes);
    const entry: Entry = { meta, stripe, checked, buf, ready: Promise.resolve(), users: 0, evicted: false, recycled: false };
    entry.ready = build(buf.subarray(0, bytes));
    entry.ready.catch(() => {
      if (!entry.evicted) evict(entry);
    });
    entries.push((e = entry));
    while (entries.length > MAX_REBUILT_STRIPES) evict(entries[0]!);
  }
  e.users++;
  try {
    await e.ready;
    use(e.buf.subarray(0, bytes));
  } finally {
    e.users--;
    recycle(e);
  }
}
