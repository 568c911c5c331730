/**
 * @module Rebuilding fragments onto domains: the repair half of heal-on-read and checkBlob,
 * and the replacement step of a write that lost a domain midway.
 *
 * Striped: stripe by stripe, the cells are read from k good fragments (whole cells,
 * verified), the missing ones reconstructed with the codec, framed and streamed to the
 * target domains: memory stays at a few stripes whatever the blob size. Replicated: a good
 * copy is read whole (replicated blobs are small), verified block by block, and written.
 */
import { ProviderError, getBytes } from '../provider.js';
import { FragmentSink } from './sink.js';
import { encodeHeader, encodeTrailer, frameCell, keyHash, parseHeader, parseTrailer, unframe } from './fragment.js';
import { BLOCK_BYTES, framedLength, HEADER_BYTES, TRAILER_BYTES } from './geometry.js';
import { nameOf, type BlobMeta } from './lookup.js';
import { geometryOf, rebuildRange, type ReadContext } from './read.js';

/** Queue bound of one fragment being written, in stripes' worth of that fragment's cells. */
export const SINK_STRIPES = 1;

export interface RebuildResult {
  index: number;
  domain: string;
  ok: boolean;
  bytes: number;
  error?: string;
}

/**
 * Writes fragment `indices[j]` of striped `meta` to domain `targets[j]`, rebuilt from the
 * other fragments (the ones in `indices` are not read). Resolves per fragment; throws
 * ProviderError 'Io' only when the blob cannot be rebuilt at all (fewer than k good).
 * Does not update `meta`.
 */
export async function rebuildFragments(
  ctx: ReadContext,
  meta: BlobMeta,
  indices: number[],
  targets: string[]
): Promise<RebuildResult[]> {
  const g = geometryOf(meta);
  const hash = keyHash(meta.key);
  const sinks = indices.map(
    (index, j) =>
      new FragmentSink(ctx.domains, targets[j]!, nameOf(meta, index), g.fragmentSize, SINK_STRIPES * framedLength(meta.cellSize))
  );
  const folds = indices.map(() => 0);
  const bad = new Set(indices);
  try {
    indices.forEach((index, j) =>
      sinks[j]!.push(encodeHeader({ layout: 'striped', k: meta.k, m: meta.m, index, cellSize: meta.cellSize, length: meta.length, generation: meta.generation, keyHash: hash }))
    );
    for (let s = 0; s < g.stripes; s++) {
      if (sinks.every((x) => x.failed)) break;
      const cl = g.cellLength(s);
      const { shards } = await rebuildRange(ctx, meta, g, s, 0, cl, bad, true);
      indices.forEach((index, j) => {
        const framed = new Uint8Array(framedLength(cl));
        folds[j] = frameCell(shards[index]!, framed, meta.generation, index, g.firstBlock(s), folds[j]!);
        sinks[j]!.push(framed);
      });
      await Promise.all(sinks.map((x) => x.drained()));
    }
    indices.forEach((_, j) => sinks[j]!.push(encodeTrailer({ length: g.length, blockCount: g.blockCount, fold: folds[j]! })));
    sinks.forEach((x) => x.end());
  } catch (err) {
    for (const x of sinks) x.fail(err);
    await Promise.allSettled(sinks.map((x) => x.done));
    throw err;
  }
  const settled = await Promise.allSettled(sinks.map((x) => x.done));
  return settled.map((r, j) => ({
    index: indices[j]!,
    domain: targets[j]!,
    ok: r.status === 'fulfilled',
    bytes: r.status === 'fulfilled' ? g.fragmentSize : 0,
    error: r.status === 'rejected' ? String((r.reason as Error)?.message ?? r.reason) : undefined,
  }));
}

/** Builds a replicated copy: header, framed cells (k = 1), trailer. */
export function buildCopy(key: string, generation: number, cellSize: number, bytes: Uint8Array): Uint8Array {
  const length = bytes.length;
  const cells = Math.ceil(length / cellSize);
  let size = HEADER_BYTES + TRAILER_BYTES;
  for (let c = 0; c < cells; c++) size += framedLength(Math.min(cellSize, length - c * cellSize));
  const out = new Uint8Array(size);
  out.set(encodeHeader({ layout: 'replicated', k: 1, m: 0, index: 0, cellSize, length, generation, keyHash: keyHash(key) }));
  let o = HEADER_BYTES;
  let fold = 0;
  const blocksPerCell = Math.ceil(cellSize / BLOCK_BYTES);
  for (let c = 0; c < cells; c++) {
    const cell = bytes.subarray(c * cellSize, Math.min(length, (c + 1) * cellSize));
    const n = framedLength(cell.length);
    fold = frameCell(cell, out.subarray(o, o + n), generation, 0, c * blocksPerCell, fold);
    o += n;
  }
  const blockCount = cells === 0 ? 0 : (cells - 1) * blocksPerCell + Math.ceil((length - (cells - 1) * cellSize) / BLOCK_BYTES);
  out.set(encodeTrailer({ length, blockCount, fold }), o);
  return out;
}

/**
 * Reads one replicated copy from `domain` whole and checks it (header, every block, trailer).
 * Returns the copy's bytes as stored. Throws ProviderError / FragmentError.
 */
export async function readCopy(ctx: ReadContext, meta: BlobMeta, domain: string): Promise<Uint8Array> {
  const child = nameOf(meta, 0);
  const copy = await ctx.domains.readBlob(domain, child, (p) => getBytes(p, child));
  verifyFragment(meta, 0, copy);
  return copy;
}

/**
 * Checks a whole fragment (or replicated copy) against its name: header fields, size, every
 * block's CRC, trailer. Throws FragmentError (or ProviderError 'Io') on the first problem.
 */
export function verifyFragment(meta: BlobMeta, index: number, bytes: Uint8Array): void {
  const g = geometryOf(meta);
  if (bytes.length !== g.fragmentSize)
    throw new ProviderError('Io', `${meta.key}: fragment ${index} is ${bytes.length} bytes, expected ${g.fragmentSize}`);
  const h = parseHeader(bytes.subarray(0, HEADER_BYTES));
  const expectK = meta.layout === 'striped' ? meta.k : 1;
  const expectM = meta.layout === 'striped' ? meta.m : 0;
  if (h.layout !== meta.layout || h.k !== expectK || h.m !== expectM || h.index !== index || h.cellSize !== meta.cellSize || h.generation !== meta.generation)
    throw new ProviderError('Io', `${meta.key}: fragment ${index} header does not match its name`);
  if (h.length !== undefined && h.length !== g.length)
    throw new ProviderError('Io', `${meta.key}: fragment ${index} header length ${h.length} is not ${g.length}`);
  const kh = keyHash(meta.key);
  if (!h.keyHash.every((b, i) => b === kh[i])) throw new ProviderError('Io', `${meta.key}: fragment ${index} belongs to another key`);
  for (let s = 0; s < g.stripes; s++) {
    const off = g.sectionOffset(s);
    const n = framedLength(g.cellLength(s));
    unframe(bytes.subarray(off, off + n), null, meta.generation, index, g.firstBlock(s));
  }
  const t = parseTrailer(bytes.subarray(g.trailerOffset));
  if (t.length !== g.length || t.blockCount !== g.blockCount)
    throw new ProviderError('Io', `${meta.key}: fragment ${index} trailer says ${t.length} bytes in ${t.blockCount} blocks`);
}
