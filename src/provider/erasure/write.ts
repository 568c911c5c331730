/**
 * @module Writing one blob: striped (k data + m parity cells per stripe, streamed) or
 * replicated (m + 1 whole copies).
 *
 * Striped: the body is pulled one stripe at a time into a reused buffer, the m parity cells
 * are computed by the wasm codec, and each of the k + m cells is framed and queued to its
 * fragment's child put (sink.ts): memory stays at the stripe plus SINK_STRIPES queued cells
 * per fragment, whatever the blob size. Domains already known failed are placed around at
 * the start; a domain that fails midway is dropped, and once the body is in, its fragment is
 * rebuilt onto a replacement domain (placement with the used and failed ones excluded)
 * before the put is acknowledged. Replicated: the copy is built in memory (these blobs are
 * below the stripe threshold) and put on m + 1 domains, a failed one replaced by the next.
 *
 * Acknowledgement: every fragment (copy) durable, or with degradedWrites at least k
 * fragments (one copy); otherwise what was written is deleted and the put fails with
 * ProviderError 'Unavailable' saying how many domains were healthy.
 */
import { mayStillLand, ProviderError } from '../provider.js';
import { DomainTimeout } from './domains.js';
import { ByteSource } from './byte-source.js';
import { encodeHeader, encodeTrailer, frameCell, keyHash, sealFramed } from './fragment.js';
import { readFramedStripe } from './framed-stripe.js';
import { BLOCK_BYTES, framedLength, Geometry } from './geometry.js';
import { nameOf, type BlobMeta } from './lookup.js';
import type { ReadContext } from './read.js';
import { buildCopy, rebuildFragments, SINK_STRIPES } from './rebuild.js';
import { FragmentSink } from './sink.js';
import { releaseCell, takeStripeBuffer } from './stripe-buffers.js';
import { replacementTargets } from './replace.js';
import type { ErasureConfig } from './types.js';

export interface WriteContext extends ReadContext {
  config: ErasureConfig;
  /** Domain ids for fragments 0..count-1 of `key`, excluded ones replaced (placeFragments);
   * throws PlacementError when too few. */
  place(key: string, count: number, exclude?: ReadonlySet<string>): string[];
  /** Every domain id in rendezvous order for `key`. */
  rank(key: string): string[];
}

/** The outcome of a write: the new blob's meta, and whether it is short of full redundancy. */
export interface Written {
  meta: BlobMeta;
  degraded: boolean;
}

/** Places up to `count` fragments, as many as the healthy eligible domains allow (>= min). */
function placeUpTo(ctx: WriteContext, key: string, count: number, min: number, exclude: ReadonlySet<string>): string[] {
  let lastErr: unknown;
  for (let c = count; c >= min; c--) {
    try {
      return ctx.place(key, c, exclude);
    } catch (err) {
      lastErr = err;
    }
  }
  throw lastErr;
}

function unavailable(key: string, need: number, what: string, ctx: WriteContext, cause?: unknown, mayLand = false): ProviderError {
  const failed = [...ctx.domains.failedIds()];
  return new ProviderError(
    'Unavailable',
    `${key}: cannot write: ${what} (needs ${need} healthy eligible domains` +
      `${failed.length ? `; failed: ${failed.join(', ')}` : ''}` +
      `${ctx.config.degradedWrites ? '' : '; degradedWrites is off'})` +
      (mayLand ? '; a copy may still land (left running past the domain timeout, or not removed)' : '') +
      (cause ? `: ${(cause as Error)?.message ?? cause}` : ''),
    { cause, mayLand }
  );
}

/** Deletes what a failed write left (best effort: a failed domain keeps its leftover until
 * the next delete or check of the key finds it). Resolves false if a delete failed. */
async function discard(ctx: WriteContext, items: { domain: string; child: string }[]): Promise<boolean> {
  const results = await Promise.allSettled(items.map((i) => ctx.domains.call(i.domain, `delete ${i.child}`, (p) => p.delete(i.child))));
  return results.every((r) => r.status === 'fulfilled');
}

/**
 * Writes a striped blob from `source` (whose first `head` bytes are already read into
 * `head`). `length` is the announced length, undefined for a stream of unknown length.
 * Throws the body's errors (LengthMismatch, Aborted, Io) leaving nothing behind, or
 * 'Unavailable' (see module doc).
 */
export async function writeStriped(
  ctx: WriteContext,
  key: string,
  generation: number,
  head: Uint8Array,
  source: ByteSource,
  length: number | undefined,
  /** The put's PutOptions.bulk, passed on to the fragments' puts. */
  bulk = false
): Promise<Written> {
  const { k, m, cellSize } = ctx.config;
  const n = k + m;
  const failedNow = ctx.domains.failedIds();
  let placed: (string | undefined)[];
  try {
    placed = ctx.config.degradedWrites ? placeUpTo(ctx, key, n, k, failedNow) : ctx.place(key, n, failedNow);
  } catch (err) {
    await source.cancel();
    throw unavailable(key, ctx.config.degradedWrites ? k : n, `too few domains for ${k}+${m}`, ctx, err);
  }
  while (placed.length < n) placed.push(undefined);
  const meta: BlobMeta = {
    key, layout: 'striped', k, m, cellSize, length, generation, lastModified: new Date(),
    fragments: [...placed], copies: [], fragmentBytes: 0, sized: length !== undefined,
  };
  const known = length === undefined ? undefined : new Geometry(k, cellSize, length);
  const highWater = SINK_STRIPES * framedLength(cellSize);
  const sinks = placed.map((d, i) =>
    d === undefined
      ? undefined
      : new FragmentSink(ctx.domains, d, nameOf(meta, i), known?.fragmentSize, highWater, releaseCell, bulk)
  );
  const hash = keyHash(key);
  const folds = new Array<number>(n).fill(0);
  // A stream of unknown length (or one whose first bytes were read to choose the layout) is
  // read a stripe at a time into stripeBuf, encoded, then framed; a known length is read
  // straight into its framing instead (framed-stripe.ts) and needs neither buffer.
  const inPlace = known !== undefined && head.length === 0;
  const stripeBuf = new Uint8Array(inPlace ? 0 : k * cellSize);
  const parity = Array.from({ length: inPlace ? 0 : m }, () => new Uint8Array(cellSize));
  const codec = ctx.codec(k, m);
  let total = 0;
  let stripes = 0;
  let lastCell = 0;
  try {
    sinks.forEach((x, i) =>
      x?.push(encodeHeader({ layout: 'striped', k, m, index: i, cellSize, length, generation, keyHash: hash }))
    );
    let headLeft = head;
    // Known length: each stripe is read straight into its framed layout (framed-stripe.ts).
    for (let s = 0; inPlace && s < known.stripes; s++) {
      const st = await readFramedStripe(source, codec, known, s, n, key);
      const firstBlock = s * Math.ceil(cellSize / BLOCK_BYTES);
      for (let i = 0; i < n; i++) {
        const sink = sinks[i];
        if (!sink || sink.failed) continue;
        const framed = st.buf.subarray(i * st.framedCell, (i + 1) * st.framedCell);
        folds[i] = sealFramed(framed, generation, i, firstBlock, folds[i]!);
        st.owner.hold(framed);
        sink.push(framed);
      }
      st.owner.seal();
      total += st.bytes;
      stripes++;
      lastCell = st.cellLength;
      const live = sinks.filter((x) => x && !x.failed).length;
      if (live < k) throw unavailable(key, k, `only ${live} fragments still being written`, ctx);
      await Promise.all(sinks.map((x) => x?.drained()));
    }
    if (inPlace) {
      // The body must end here (the checked body also proves it when it can).
      if ((await source.fill(new Uint8Array(1), 0, 1)) !== 0)
        throw new ProviderError('LengthMismatch', `${key}: body is longer than contentLength ${length}`);
    }
    for (; !inPlace; ) {
      let got = Math.min(headLeft.length, stripeBuf.length);
      stripeBuf.set(headLeft.subarray(0, got));
      headLeft = headLeft.subarray(got);
      if (got < stripeBuf.length) got += await source.fill(stripeBuf, got, stripeBuf.length - got);
      if (got === 0) break;
      const cl = got === stripeBuf.length ? cellSize : Math.ceil(got / k);
      stripeBuf.fill(0, got, k * cl);
      const shards = [
        ...Array.from({ length: k }, (_, i) => stripeBuf.subarray(i * cl, (i + 1) * cl)),
        ...parity.map((p) => p.subarray(0, cl)),
      ];
      if (m > 0) codec.encode(shards);
      const firstBlock = stripes * Math.ceil(cellSize / BLOCK_BYTES);
      const fl = framedLength(cl);
      // One buffer per stripe, not k + m, reused once written (stripe-buffers.ts); not
      // zero-filled (zeroing cost ~10 % of a (10,4) put's CPU): frameCell writes every byte
      // of each region it frames, and the region of a fragment not being written is never pushed.
      const owner = takeStripeBuffer(fl * n);
      for (let i = 0; i < n; i++) {
        const sink = sinks[i];
        if (!sink || sink.failed) continue;
        const framed = owner.buf.subarray(i * fl, (i + 1) * fl);
        folds[i] = frameCell(shards[i]!, framed, generation, i, firstBlock, folds[i]!);
        owner.hold(framed);
        sink.push(framed);
      }
      owner.seal();
      total += got;
      stripes++;
      lastCell = cl;
      const live = sinks.filter((x) => x && !x.failed).length;
      if (live < k) throw unavailable(key, k, `only ${live} fragments still being written`, ctx);
      await Promise.all(sinks.map((x) => x?.drained()));
      if (got < stripeBuf.length) break;
    }
    if (length !== undefined && total !== length)
      throw new ProviderError('LengthMismatch', `${key}: body has ${total} bytes, contentLength says ${length}`);
    const g = new Geometry(k, cellSize, total);
    if (g.stripes !== stripes || g.lastCell !== lastCell) throw new ProviderError('Io', `${key}: stripe accounting error`);
    sinks.forEach((x, i) => x?.push(encodeTrailer({ length: total, blockCount: g.blockCount, fold: folds[i]! })));
    sinks.forEach((x) => x?.end());
  } catch (err) {
    for (const x of sinks) x?.fail(err);
    await Promise.allSettled(sinks.map((x) => x?.done));
    await source.cancel().catch(() => undefined);
    throw err;
  }
  const settled = await Promise.allSettled(sinks.map((x) => x?.done ?? Promise.reject(new Error('not placed'))));
  const ok: number[] = [];
  settled.forEach((r, i) => (r.status === 'fulfilled' ? ok.push(i) : (meta.fragments[i] = undefined)));
  const written = ok.map((i) => ({ domain: placed[i]!, child: nameOf(meta, i) }));
  if (ok.length < k) {
    await discard(ctx, written);
    throw unavailable(key, n, `only ${ok.length} of ${n} fragments were stored`, ctx);
  }
  meta.lastModified = new Date();
  meta.length = total;
  meta.fragmentBytes = (settled[ok[0]!] as PromiseFulfilledResult<{ size: number }>).value.size;
  const missing = [...Array(n).keys()].filter((i) => meta.fragments[i] === undefined);
  if (missing.length === 0) return { meta, degraded: false };
  // Replacement: rebuild the lost fragments onto other eligible domains before acknowledging.
  let replaced = 0;
  if (meta.length !== undefined) {
    try {
      const lost = new Set(missing.map((i) => placed[i]).filter((d): d is string => !!d));
      const exclude = new Set([...lost, ...ctx.domains.failedIds()]);
      const holding = new Set(ok.map((i) => placed[i]!));
      const targets = replacementTargets(ctx, key, n, missing, holding, exclude);
      const idx = [...targets.keys()];
      if (idx.length) {
        const results = await rebuildFragments(ctx, meta, idx, idx.map((i) => targets.get(i)!));
        for (const r of results) if (r.ok) (meta.fragments[r.index] = r.domain), replaced++;
      }
    } catch {
      // the rebuild failed: judged below
    }
  }
  if (replaced === missing.length) return { meta, degraded: false };
  if (ctx.config.degradedWrites) return { meta, degraded: true };
  await discard(ctx, [
    ...written,
    ...meta.fragments.flatMap((d, i) => (d && !ok.includes(i) ? [{ domain: d, child: nameOf(meta, i) }] : [])),
  ]);
  throw unavailable(key, n, `${missing.length - replaced} fragments could not be placed`, ctx);
}

/**
 * Writes a replicated blob of `bytes` (m + 1 copies; see module doc for acknowledgement).
 * Throws ProviderError 'Unavailable' when too few copies were stored.
 */
export async function writeReplicated(
  ctx: WriteContext,
  key: string,
  generation: number,
  bytes: Uint8Array,
  signal?: AbortSignal
): Promise<Written> {
  const { m, cellSize } = ctx.config;
  const want = m + 1;
  const meta: BlobMeta = {
    key, layout: 'replicated', k: 1, m: 0, cellSize, length: bytes.length, generation,
    lastModified: new Date(), fragments: [], copies: [], fragmentBytes: 0, sized: true,
  };
  const child = nameOf(meta, 0);
  const copy = buildCopy(key, generation, cellSize, bytes);
  meta.fragmentBytes = copy.length;
  const tried = new Set<string>();
  /** Domains whose failed put may have left (or may still leave) a copy. */
  const mayBeLeft = new Set<string>();
  let lastErr: unknown;
  let mayLand = false;
  while (meta.copies.length < want) {
    let targets: string[];
    try {
      const exclude = new Set([...[...tried].filter((d) => !meta.copies.includes(d)), ...ctx.domains.failedIds()]);
      const full = placeUpTo(ctx, key, want, 1, exclude);
      targets = full.filter((d) => !meta.copies.includes(d) && !tried.has(d));
      if (targets.length === 0) targets = ctx.rank(key).filter((d) => !tried.has(d) && !exclude.has(d)).slice(0, want - meta.copies.length);
    } catch (err) {
      lastErr ??= err;
      break;
    }
    if (targets.length === 0) break;
    targets.forEach((t) => tried.add(t));
    const results = await Promise.allSettled(
      targets.map((d) =>
        ctx.domains.call(d, `put ${child}`, (p, { signal: sig }) =>
          p.put(child, copy, { contentLength: copy.length, signal: signal ? AbortSignal.any([signal, sig]) : sig })
        )
      )
    );
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') meta.copies.push(targets[i]!);
      else {
        lastErr = r.reason;
        // The child's put was not answered in time and is still running, or the child says
        // its write may still be applied (an S3 request that went unanswered): it may land
        // later, where discard() below cannot reach it.
        if (r.reason instanceof DomainTimeout || mayStillLand(r.reason)) {
          mayLand = true;
          mayBeLeft.add(targets[i]!);
        }
      }
    });
    if (signal?.aborted) break;
  }
  // A failed write removes its copies: those stored, whose removal must succeed (a copy left
  // may be read as the newest one later, whatever a read-back says now: the failure then says
  // so, mayLand), and, best effort, those a child may have left in place although its put
  // failed (marked mayLand: an fs child whose directory sync failed after the rename, an S3
  // child left unanswered, a copy running past the timeout). A child that failed otherwise
  // left nothing, and its domain is not asked again.
  const leftovers = async (): Promise<void> => {
    const stored = discard(ctx, meta.copies.map((d) => ({ domain: d, child })));
    const maybe = discard(ctx, [...mayBeLeft].map((d) => ({ domain: d, child })));
    if (!(await stored)) mayLand = true;
    await maybe;
  };
  if (signal?.aborted) {
    await leftovers();
    throw new ProviderError('Aborted', `${key}: aborted`, { cause: signal.reason, mayLand });
  }
  if (meta.copies.length === want) return { meta, degraded: false };
  if (meta.copies.length >= 1 && ctx.config.degradedWrites) return { meta, degraded: true };
  await leftovers();
  throw unavailable(key, want, `only ${meta.copies.length} of ${want} copies were stored`, ctx, lastErr, mayLand);
}
