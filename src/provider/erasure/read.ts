/**
 * @module Reading a blob's bytes: systematic, ranged, verified, rebuilt on the fly.
 *
 * A logical range maps to pieces of data cells (geometry.ts). Each piece is one positional
 * read of the whole checksum blocks that hold it, on the fragment's domain; every block's
 * CRC32C is checked before a byte is used, unless the caller checks every byte itself and
 * reads again without that when one fails (ReadContext.endToEnd: the store's reads of object
 * bodies), in which case damage is found by that second read. A piece whose fragment is missing, unreachable or
 * fails a check is rebuilt: the same block range is read from k other fragments of the
 * stripe (data first, then parity) and the wasm codec reconstructs it — only the blocks the
 * range needs, not the whole stripe. The caller is told (onDegraded) so the key is queued
 * for repair. With fewer than k good fragments the read fails with ProviderError 'Io' naming
 * the blob: never wrong bytes.
 */
import { getBytes, ProviderError } from '../provider.js';
import type { ReedSolomon, Shard } from '../../codec/reed-solomon.js';
import type { ResidentStripe } from '../../codec/resident-stripe.js';
import { isDescriptorExhaustion, type DomainSet } from './domains.js';
import { FragmentError, parseTrailer, unframe, unframedLength, unframeRange } from './fragment.js';
import { framedRange, Geometry, TRAILER_BYTES, type Piece } from './geometry.js';
import { nameOf, type BlobMeta } from './lookup.js';
import { giveScratch, takeResidentStripe, takeScratch } from './scratch.js';
import { hasRebuiltStripe, heapCells, residentCells, withRebuiltStripe, type RebuiltCells } from './rebuilt-stripes.js';
import { ScatterSink, viewOf, type ByteSink } from './scatter-sink.js';

export interface ReadContext {
  domains: DomainSet;
  codec(k: number, m: number): ReedSolomon;
  /** A fragment of `meta` was found missing or bad while reading (heal on read). */
  onDamaged(meta: BlobMeta, index: number, domain: string | undefined, why: string): void;
  /** A read had to rebuild from parity. */
  onDegradedRead(meta: BlobMeta): void;
  /**
   * The caller checks every byte it gets against checksums of its own and reads again without
   * this when one fails (Provider.readv's ReadOptions.endToEnd): fragment blocks are then not
   * checked here, and a rebuilt stripe kept for such reads is never used by a checked read
   * (rebuilt-stripes.ts). Missing fragments and failed domains are still rebuilt around and
   * reported.
   */
  endToEnd?: boolean;
}

export function geometryOf(meta: BlobMeta): Geometry {
  if (meta.length === undefined) throw new ProviderError('Io', `${meta.key}: length not resolved`);
  const known = GEOMETRY.get(meta);
  if (known && known.length === meta.length) return known;
  const g = new Geometry(meta.layout === 'striped' ? meta.k : 1, meta.cellSize, meta.length);
  GEOMETRY.set(meta, g);
  return g;
}

const GEOMETRY = new WeakMap<BlobMeta, Geometry>();

/**
 * Reads and verifies cell bytes [from, to) (whole blocks) of fragment `index` of stripe `s`
 * from `domain`. Returns the data of the blocks, starting at in-cell offset `cellStart`, in
 * `into` when given (exactly the data's length; partly written if a block fails its check).
 * Throws ProviderError (domain failure, NotFound) or FragmentError (bad bytes).
 */
export async function readBlocks(
  ctx: ReadContext,
  meta: BlobMeta,
  g: Geometry,
  index: number,
  domain: string,
  s: number,
  from: number,
  to: number,
  into?: Uint8Array
): Promise<{ data: Uint8Array; cellStart: number }> {
  const fr = framedRange(g, s, from, to);
  const child = nameOf(meta, index);
  const range = { start: fr.offset, end: fr.offset + fr.length - 1 };
  const scratch = takeScratch(fr.length);
  const framed = await ctx.domains.readBlob(domain, child, (p) =>
    p.read && scratch ? p.read(child, range, scratch) : getBytes(p, child, range)
  );
  // The child read settled normally: the scratch is ours again (scratch.ts).
  try {
    if (framed.length !== fr.length) throw new FragmentError(`${child}: fragment is short (${framed.length} of ${fr.length} bytes)`);
    const want = unframedLength(fr.length);
    if (into && into.length !== want) throw new RangeError(`readBlocks: into holds ${into.length} bytes, ${want} needed`);
    const data = into ?? new Uint8Array(want);
    unframe(framed, data, meta.generation, index, fr.firstBlock, !ctx.endToEnd);
    return { data, cellStart: fr.cellStart };
  } finally {
    giveScratch(scratch);
  }
}

function why(err: unknown): string {
  return (err as Error)?.message ?? String(err);
}

/** Reads fragment `index`'s blocks holding cell bytes [from, to) of stripe `s` from `domain`,
 * verifies them, and copies [from, to) into `out` at `outOffset`. Throws like readBlocks. */
async function readPiece(
  ctx: ReadContext,
  meta: BlobMeta,
  g: Geometry,
  index: number,
  domain: string,
  s: number,
  from: number,
  to: number,
  out: ByteSink,
  outOffset: number
): Promise<void> {
  const fr = framedRange(g, s, from, to);
  const child = nameOf(meta, index);
  const range = { start: fr.offset, end: fr.offset + fr.length - 1 };
  const scratch = takeScratch(fr.length);
  const framed = await ctx.domains.readBlob(domain, child, (p) =>
    p.read && scratch ? p.read(child, range, scratch) : getBytes(p, child, range)
  );
  // From here the child read has settled normally: the scratch is ours again (scratch.ts).
  try {
    if (framed.length !== fr.length) throw new FragmentError(`${child}: fragment is short (${framed.length} of ${fr.length} bytes)`);
    unframeRange(framed, meta.generation, index, fr.firstBlock, fr.cellStart, from, to, out, outOffset, !ctx.endToEnd);
  } finally {
    giveScratch(scratch);
  }
}

/** A fragment its domain says is gone (NotFound) is dropped from the cached description, so
 * the next reads rebuild at once instead of asking again; repair puts it back. */
function forgetMissing(meta: BlobMeta, index: number, domain: string | undefined, err: unknown): void {
  if (meta.layout === 'striped' && err instanceof ProviderError && err.code === 'NotFound' && meta.fragments[index] === domain)
    meta.fragments[index] = undefined;
}

/** Reports fragment `index` damaged (queued for repair), unless the read failed for want of
 * file descriptors: that says nothing about the fragment. */
function damaged(ctx: ReadContext, meta: BlobMeta, index: number, domain: string | undefined, err: unknown): void {
  if (!isDescriptorExhaustion(err)) ctx.onDamaged(meta, index, domain, why(err));
}

/** The error of a read that found too few readable fragments or copies: 'Unavailable' (503,
 * retry) when any read failed for want of file descriptors, as the bytes may well be intact;
 * else 'Io'. */
function unreadable(message: string, errors: readonly unknown[]): ProviderError {
  const gone = errors.find(isDescriptorExhaustion);
  return new ProviderError(gone !== undefined ? 'Unavailable' : 'Io', message, gone !== undefined ? { cause: gone } : undefined);
}

/** Candidate domains for a replicated read: healthy ones first. */
function copyOrder(ctx: ReadContext, meta: BlobMeta): readonly string[] {
  if (!meta.copies.some((d) => ctx.domains.isFailed(d))) return meta.copies;
  return [...meta.copies].sort((a, b) => Number(ctx.domains.isFailed(a)) - Number(ctx.domains.isFailed(b)));
}

/** Is data cell `cell`'s fragment known to be unreadable before asking (missing from the
 * description, or on a domain marked failed)? */
function knownBad(ctx: ReadContext, meta: BlobMeta, cell: number): boolean {
  const d = meta.fragments[cell];
  return d === undefined || ctx.domains.isFailed(d);
}

/** The k data cells of stripe `s`, rebuilt from k good fragments, where the rebuild left them
 * (the resident stripe it reconstructed in, handed over; else a heap buffer): the caller owns
 * them (rebuilt-stripes.ts). The data cells known to be unreadable are reported damaged (heal
 * on read) and not read. Throws like rebuildRange. */
async function rebuildWholeStripe(ctx: ReadContext, meta: BlobMeta, g: Geometry, s: number): Promise<RebuiltCells> {
  const cl = g.cellLength(s);
  const bad = new Set<number>();
  for (let i = 0; i < meta.k; i++) {
    if (!knownBad(ctx, meta, i)) continue;
    bad.add(i);
    const d = meta.fragments[i];
    ctx.onDamaged(meta, i, d, d ? 'domain failed' : 'missing');
  }
  let kept: RebuiltCells | undefined;
  await withRebuilt(ctx, meta, g, s, 0, cl, bad, false, undefined, (shards, _cellStart, stripe) => {
    for (let i = 0; i < meta.k; i++) {
      const shard = shards[i];
      if (!shard || shard.length !== cl) throw new ProviderError('Io', `${meta.key}: stripe ${s}: data cell ${i} was not rebuilt`);
    }
    if (stripe) {
      kept = residentCells(stripe);
      return true; // the stripe is ours now: no copy out of it
    }
    const heap = heapCells(meta.k * cl, cl);
    for (let i = 0; i < meta.k; i++) heap.into.set(shards[i]!, i * cl);
    kept = heap.cells;
  });
  return kept!;
}

/**
 * A stripe some of whose data cells are known to be unreadable. Part of a `wide` read (one of
 * at least a cell's worth, even if only a little of it falls in this stripe) has the whole stripe rebuilt once and kept for the reads that follow through it
 * (rebuilt-stripes.ts: a large GET comes in spans shorter than a stripe). Otherwise the k sources of the rebuild
 * (the readable data cells, then parity) are read in one round over the block range of all
 * the pieces, instead of reading the data cells first and the parity after; every piece is
 * then copied from the rebuilt range. Throws like rebuildRange.
 */
async function readStripeDegraded(
  ctx: ReadContext,
  meta: BlobMeta,
  g: Geometry,
  s: number,
  pieces: Piece[],
  out: ByteSink,
  outOffsets: number[],
  wide: boolean
): Promise<void> {
  const cl = g.cellLength(s);
  if (wide) {
    // At least a cell's worth: the stripe is rebuilt whole once and the reads after this one
    // through the same stripe copy from it (rebuilt-stripes.ts). A read going through the blob
    // in order (this is its first stripe, or the one before it is kept) has the next stripe
    // rebuilt meanwhile (one ahead), so that stripe's survivors are read while this one is
    // decoded and sent; a read of one stripe elsewhere rebuilds only that one.
    const checked = !ctx.endToEnd;
    const current = withRebuiltStripe(
      ctx.domains,
      meta,
      s,
      checked,
      () => rebuildWholeStripe(ctx, meta, g, s),
      (cells, stride) => pieces.forEach((p, i) => out.set(cells.subarray(p.cell * stride + p.from, p.cell * stride + p.to), outOffsets[i]!))
    );
    const next = s + 1;
    const inOrder = s === 0 || hasRebuiltStripe(meta, s - 1);
    if (inOrder && next < g.stripes && !hasRebuiltStripe(meta, next, checked) && meta.fragments.slice(0, meta.k).some((_, i) => knownBad(ctx, meta, i))) {
      const ahead = withRebuiltStripe(ctx.domains, meta, next, checked, () => rebuildWholeStripe(ctx, meta, g, next), () => undefined);
      ahead.catch(() => undefined); // a failed rebuild is not kept: the read of that stripe tries again and reports it
    }
    await current;
    ctx.onDegradedRead(meta);
    return;
  }
  const bad = new Set<number>();
  for (const p of pieces) {
    if (!knownBad(ctx, meta, p.cell)) continue;
    bad.add(p.cell);
    const d = meta.fragments[p.cell];
    ctx.onDamaged(meta, p.cell, d, d ? 'domain failed' : 'missing');
  }
  const from = Math.min(...pieces.map((p) => p.from));
  const to = Math.max(...pieces.map((p) => p.to));
  await withRebuilt(ctx, meta, g, s, from, to, bad, false, undefined, (shards, cellStart) => {
    pieces.forEach((p, i) => {
      const shard = shards[p.cell]!;
      out.set(shard.subarray(p.from - cellStart, p.to - cellStart), outOffsets[i]);
    });
  });
  ctx.onDegradedRead(meta);
}

/** Reads the pieces of one stripe into `out` (at outOffset + each piece's position); `wide`:
 * they are part of a read of at least a cell's worth (see readStripeDegraded). */
async function readStripe(
  ctx: ReadContext,
  meta: BlobMeta,
  g: Geometry,
  s: number,
  pieces: Piece[],
  out: ByteSink,
  outOffsets: number[],
  wide = false
): Promise<void> {
  // A wide read of a stripe kept rebuilt copies from it, even where its own cells are healthy.
  if (wide && meta.layout === 'striped' && hasRebuiltStripe(meta, s, !ctx.endToEnd)) return readStripeDegraded(ctx, meta, g, s, pieces, out, outOffsets, wide);
  // Fast path of a small read (one piece, healthy domain): no fan-out bookkeeping. Any
  // failure falls through to the general path, which tries the other copies or rebuilds.
  // The fast path's failure, so that the general path does not read the same piece there again
  // (an I/O error can take long, and is judged by a probe of the domain each time).
  let fastFailed: { domain: string; err: unknown } | undefined;
  if (pieces.length === 1) {
    const p = pieces[0]!;
    const domain = meta.layout === 'replicated' ? meta.copies[0] : meta.fragments[p.cell];
    if (domain !== undefined && !ctx.domains.isFailed(domain)) {
      try {
        return await readPiece(ctx, meta, g, meta.layout === 'replicated' ? 0 : p.cell, domain, s, p.from, p.to, out, outOffsets[0]!);
      } catch (err) {
        if (err instanceof ProviderError && err.code === 'Aborted') throw err;
        fastFailed = { domain, err };
      }
    }
  }
  if (meta.layout === 'striped' && pieces.some((p) => knownBad(ctx, meta, p.cell))) {
    await readStripeDegraded(ctx, meta, g, s, pieces, out, outOffsets, wide);
    return;
  }
  const failed: number[] = [];
  const failures: unknown[] = [];
  await Promise.all(
    pieces.map(async (p, i) => {
      if (meta.layout === 'replicated') {
        const copyErrors: unknown[] = [];
        for (const domain of copyOrder(ctx, meta)) {
          if (fastFailed?.domain === domain) {
            damaged(ctx, meta, 0, domain, fastFailed.err);
            copyErrors.push(fastFailed.err);
            continue;
          }
          try {
            await readPiece(ctx, meta, g, 0, domain, s, p.from, p.to, out, outOffsets[i]!);
            return;
          } catch (err) {
            if (err instanceof ProviderError && err.code === 'Aborted') throw err;
            damaged(ctx, meta, 0, domain, err);
            copyErrors.push(err);
          }
        }
        throw unreadable(`${meta.key}: no readable copy on ${meta.copies.join(', ') || 'any domain'}`, copyErrors);
      }
      const domain = meta.fragments[p.cell];
      if (domain !== undefined && domain === fastFailed?.domain) {
        forgetMissing(meta, p.cell, domain, fastFailed.err);
        damaged(ctx, meta, p.cell, domain, fastFailed.err);
        failures.push(fastFailed.err);
      } else if (domain !== undefined && !ctx.domains.isFailed(domain)) {
        try {
          await readPiece(ctx, meta, g, p.cell, domain, s, p.from, p.to, out, outOffsets[i]!);
          return;
        } catch (err) {
          if (err instanceof ProviderError && err.code === 'Aborted') throw err;
          forgetMissing(meta, p.cell, domain, err);
          damaged(ctx, meta, p.cell, domain, err);
          failures.push(err);
        }
      } else ctx.onDamaged(meta, p.cell, domain, domain ? 'domain failed' : 'missing');
      failed.push(i);
    })
  );
  if (failed.length === 0) return;
  const from = Math.min(...failed.map((i) => pieces[i]!.from));
  const to = Math.max(...failed.map((i) => pieces[i]!.to));
  const cells = failed.map((i) => pieces[i]!.cell);
  // Data cells this stripe already read whole over the rebuild's block range are reused as
  // sources instead of being read again.
  const fr = framedRange(g, s, from, to);
  const blockEnd = fr.cellStart + unframedLength(fr.length);
  const seed = new Map<number, Uint8Array>();
  pieces.forEach((p, i) => {
    if (failed.includes(i) || p.from > fr.cellStart || p.to < blockEnd) return;
    const view = viewOf(out, outOffsets[i]! + fr.cellStart - p.from, outOffsets[i]! + blockEnd - p.from);
    if (view) seed.set(p.cell, view);
  });
  await withRebuilt(ctx, meta, g, s, from, to, new Set(cells), false, seed, (shards, cellStart) => {
    for (const i of failed) {
      const p = pieces[i]!;
      const shard = shards[p.cell]!;
      out.set(shard.subarray(p.from - cellStart, p.to - cellStart), outOffsets[i]);
    }
  }).catch((err: unknown) => {
    // Too few fragments: with the first reads' failures counted, it may be for want of descriptors.
    if (err instanceof ProviderError && err.code === 'Io') {
      const again = unreadable(err.message, failures);
      throw again.code === 'Io' ? err : again;
    }
    throw err;
  });
  ctx.onDegradedRead(meta);
}

/**
 * Rebuilds cell bytes [from, to) (whole blocks) of stripe `s` from k good fragments other
 * than `bad`. Returns the shards of `bad` as rebuilt (data ones; with `all` parity ones too)
 * as heap arrays, the other slots null. Throws ProviderError 'Io' naming the blob when fewer
 * than k fragments are good.
 */
export async function rebuildRange(
  ctx: ReadContext,
  meta: BlobMeta,
  g: Geometry,
  s: number,
  from: number,
  to: number,
  bad: ReadonlySet<number>,
  all = false,
  seed?: ReadonlyMap<number, Uint8Array>
): Promise<{ shards: Shard[]; cellStart: number }> {
  let out: { shards: Shard[]; cellStart: number } | undefined;
  await withRebuilt(ctx, meta, g, s, from, to, bad, all, seed, (shards, cellStart) => {
    out = { shards: shards.map((x, i) => (x && bad.has(i) ? x.slice() : null)), cellStart };
  });
  return out!;
}

/**
 * Like rebuildRange, but hands the shards (present and rebuilt; the others null) to `use`,
 * which must copy what it needs before returning: the shards live in a resident stripe
 * (sources unframed straight into it and rebuilt in place, scratch.ts takeResidentStripe;
 * passed to `use` as well) that is released right after, unless `use` returns true: the
 * stripe is then its to release. Heap arrays and the copying codec are used when the
 * resident pool is exhausted (no stripe is passed). Throws like rebuildRange.
 */
async function withRebuilt(
  ctx: ReadContext,
  meta: BlobMeta,
  g: Geometry,
  s: number,
  from: number,
  to: number,
  bad: ReadonlySet<number>,
  all: boolean,
  seed: ReadonlyMap<number, Uint8Array> | undefined,
  use: (shards: Shard[], cellStart: number, stripe: ResidentStripe | undefined) => boolean | void
): Promise<void> {
  const n = meta.k + meta.m;
  const candidates: number[] = [];
  for (let i = 0; i < n; i++) if (!bad.has(i) && !seed?.has(i) && meta.fragments[i] !== undefined) candidates.push(i);
  // Healthy domains first, data before parity (fewer rows to invert for data cells).
  candidates.sort((a, b) => Number(ctx.domains.isFailed(meta.fragments[a]!)) - Number(ctx.domains.isFailed(meta.fragments[b]!)) || a - b);
  const shards: Shard[] = new Array(n).fill(null);
  let good = 0;
  const fr = framedRange(g, s, from, to);
  const cellStart = fr.cellStart;
  const codec = ctx.codec(meta.k, meta.m);
  const stripe = takeResidentStripe(codec, unframedLength(fr.length));
  let handedOver = false;
  try {
    for (const [i, data] of seed ?? []) {
      if (good === meta.k) break;
      if (stripe) stripe.shard(i).set(data);
      shards[i] = stripe ? stripe.shard(i) : data;
      good++;
    }
    let next = 0;
    const failures: { i: number; domain: string | undefined; err: unknown }[] = [];
    while (good < meta.k && next < candidates.length) {
      const batch = candidates.slice(next, next + (meta.k - good));
      next += batch.length;
      const results = await Promise.allSettled(
        batch.map((i) => readBlocks(ctx, meta, g, i, meta.fragments[i]!, s, from, to, stripe?.shard(i)))
      );
      results.forEach((r, j) => {
        const i = batch[j]!;
        if (r.status === 'fulfilled') {
          shards[i] = r.value.data;
          good++;
        } else {
          if (r.reason instanceof ProviderError && r.reason.code === 'Aborted') throw r.reason;
          failures.push({ i, domain: meta.fragments[i], err: r.reason }); // before forgetMissing clears it
          damaged(ctx, meta, i, meta.fragments[i], r.reason);
          forgetMissing(meta, i, meta.fragments[i], r.reason);
        }
      });
    }
    if (good < meta.k) {
      throw unreadable(
        `${meta.key}: stripe ${s} has ${good} good fragments of the ${meta.k} needed (k=${meta.k}, m=${meta.m}); ` +
          `cannot rebuild, refusing to return bytes` +
          (failures.length ? ` (${failures.slice(0, 4).map((f) => `fragment ${f.i} on ${f.domain}: ${why(f.err)}`).join('; ')})` : ''),
        failures.map((f) => f.err)
      );
    }
    if (stripe) {
      const present = shards.map((x) => x !== null);
      for (const i of codec.reconstructResident(stripe, present, { dataOnly: !all })) shards[i] = stripe.shard(i);
    } else if (all) codec.reconstruct(shards);
    else codec.reconstructData(shards);
    handedOver = use(shards, cellStart, stripe) === true && stripe !== undefined;
  } finally {
    if (!handedOver) stripe?.release();
  }
}

/** Groups the pieces of [start, start + length) by stripe, with each piece's output offset. */
function plan(g: Geometry, start: number, length: number): { s: number; pieces: Piece[]; offsets: number[] }[] {
  const out: { s: number; pieces: Piece[]; offsets: number[] }[] = [];
  let off = 0;
  for (const p of g.pieces(start, length)) {
    let last = out[out.length - 1];
    if (!last || last.s !== p.stripe) out.push((last = { s: p.stripe, pieces: [], offsets: [] }));
    last.pieces.push(p);
    last.offsets.push(off);
    off += p.to - p.from;
  }
  return out;
}

/** Stripes read ahead of the consumer by a streaming get: the next is fetched while the
 * current is being sent. */
const READ_AHEAD_STRIPES = 2;

/** The bytes of [start, start + length), whole, into `into` when it is large enough. */
export async function readRange(
  ctx: ReadContext,
  meta: BlobMeta,
  start: number,
  length: number,
  into?: Uint8Array
): Promise<Uint8Array> {
  const out = into && into.length >= length ? into.subarray(0, length) : Buffer.allocUnsafe(length);
  await readInto(ctx, meta, start, length, out);
  return out;
}

/**
 * Scatter read (Provider.readv): fills the targets of `out` in order with the bytes of `meta` from
 * logical byte `start` on, verified and rebuilt exactly as readRange does, copied from the
 * checked blocks (or the rebuilt stripe) straight into the targets with no whole-range
 * buffer in between. Writes only into the targets (partly, when it throws). The caller checks
 * that the blob holds the range. Throws like readRange.
 */
export async function readScatter(ctx: ReadContext, meta: BlobMeta, start: number, out: ScatterSink): Promise<void> {
  if (out.length > 0) await readInto(ctx, meta, start, out.length, out);
}

async function readInto(ctx: ReadContext, meta: BlobMeta, start: number, length: number, out: ByteSink): Promise<void> {
  const g = geometryOf(meta);
  const stripes = plan(g, start, length);
  const wide = length >= g.cellSize;
  if (stripes.length === 1) {
    await readStripe(ctx, meta, g, stripes[0]!.s, stripes[0]!.pieces, out, stripes[0]!.offsets, wide);
    return;
  }
  // A few stripes at a time: a whole-blob read of a large blob must not open k reads for
  // every stripe at once.
  for (let i = 0; i < stripes.length; i += READ_AHEAD_STRIPES * 2) {
    await Promise.all(
      stripes.slice(i, i + READ_AHEAD_STRIPES * 2).map((st) => readStripe(ctx, meta, g, st.s, st.pieces, out, st.offsets, wide))
    );
  }
}

/** Streams [start, start + length) stripe by stripe with READ_AHEAD_STRIPES in flight. */
export async function* streamRange(
  ctx: ReadContext,
  meta: BlobMeta,
  start: number,
  length: number,
  signal?: AbortSignal
): AsyncGenerator<Uint8Array> {
  const g = geometryOf(meta);
  const stripes = plan(g, start, length);
  const wide = length >= g.cellSize;
  const fetch = (i: number): Promise<Uint8Array> => {
    const st = stripes[i]!;
    const last = st.pieces[st.pieces.length - 1]!;
    const size = st.offsets[st.offsets.length - 1]! + last.to - last.from - st.offsets[0]!;
    const out = Buffer.allocUnsafe(size);
    const base = st.offsets[0]!;
    return readStripe(ctx, meta, g, st.s, st.pieces, out, st.offsets.map((o) => o - base), wide).then(() => out);
  };
  const inflight: Promise<Uint8Array>[] = [];
  for (let i = 0; i < Math.min(READ_AHEAD_STRIPES, stripes.length); i++) inflight.push(fetch(i));
  inflight.forEach((p) => p.catch(() => undefined));
  for (let i = 0; i < stripes.length; i++) {
    if (signal?.aborted) throw new ProviderError('Aborted', `${meta.key}: aborted`);
    const bytes = await inflight.shift()!;
    const ahead = i + READ_AHEAD_STRIPES;
    if (ahead < stripes.length) {
      const p = fetch(ahead);
      p.catch(() => undefined);
      inflight.push(p);
    }
    yield bytes;
  }
}

/**
 * The logical length of a write made from a stream of unknown length (its names carry `_`),
 * read from the trailer of the first fragment or copy that has a valid one, and checked
 * against the fragment's listed size. Throws ProviderError 'Io' when none does.
 */
export async function trailerLength(ctx: ReadContext, meta: BlobMeta): Promise<number> {
  const holders =
    meta.layout === 'striped' ? meta.fragments.map((d, i) => [d, i] as const) : meta.copies.map((d) => [d, 0] as const);
  const errors: unknown[] = [];
  for (const [d, i] of holders) {
    if (d === undefined) continue;
    try {
      const child = nameOf(meta, i);
      const bytes = await ctx.domains.readBlob(d, child, (p) =>
        getBytes(p, child, { start: meta.fragmentBytes - TRAILER_BYTES, end: meta.fragmentBytes - 1 })
      );
      const t = parseTrailer(bytes);
      const g = new Geometry(meta.layout === 'striped' ? meta.k : 1, meta.cellSize, t.length);
      if (g.fragmentSize !== meta.fragmentBytes) throw new FragmentError(`${child}: size disagrees with its trailer`);
      return t.length;
    } catch (err) {
      errors.push(err);
    }
  }
  throw unreadable(`${meta.key}: no readable trailer: ${(errors.at(-1) as Error)?.message ?? 'no fragment'}`, errors);
}
