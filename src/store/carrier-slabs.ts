/**
 * @module Carriers written with the body hashed on a worker thread (checksum/hash-pool.ts),
 * so that receiving, hashing and writing a large body overlap instead of taking turns on
 * the main thread.
 *
 * The body is read into *slabs*: buffers laid out exactly as the chunk blob
 * stores them, {@link SLAB_SEGMENTS} entries of [24-byte entry header][segment]. The main
 * thread copies the body into a slab (its only pass over the bytes) and transfers it to
 * the worker, which absorbs the segments into the body's digests (MD5, CRC64NVME, the
 * claimed algorithms) and hands it back with each segment's CRC32C; the main thread then
 * writes the entry headers into the gaps and hands the slab to the provider as one write.
 * While the worker hashes slab i, the main thread is already filling the next slabs
 * ({@link SLAB_LOOKAHEAD}) and the provider writing slab i-1. An encrypted body takes the
 * same path with every digest on the worker: the main thread seals each segment as it is read
 * (AES-GCM, node:crypto) and the provider gets the sealed segments, framed as writeCarrier
 * frames them, while the worker hashes the plaintext slab and hands it back to the pool.
 *
 * Memory: at most {@link SLABS_HELD} slabs per upload (read ahead, hashing, handed over,
 * being written), charged to the pending budget by the caller
 * ({@link openSlabHashing}) before the first byte is read; slabs the provider has written
 * wait for the next upload in a small process-wide pool ({@link SLAB_POOL_SLABS}). The
 * chunk blobs are the same bytes, same layout, as writeCarrier's (carrier.ts).
 */
import type { InflightTicket } from './inflight-blobs.js';
import type { Provider } from '../provider/provider.js';
import { ENTRY_HEADER_SIZE, PackStream } from '../pack/stream-writer.js';
import { SEGMENT_SIZE, chunkKey, chunkSizeFor } from './layout.js';
import type { ChunkRef, ChecksumName } from './records.js';
import { createFastHasher } from '../checksum/native.js';
import type { Hasher } from '../checksum/hasher.js';
import { StoreError } from './errors.js';
import type { CarrierIo, ExactReader } from './carrier.js';
import type { BodyDigests, ClaimOptions } from './digest.js';
import { digestAlgorithms } from './digest.js';
import { HashWorkerError, type HashPool, type RemoteHasher } from '../checksum/hash-pool.js';
import type { BudgetAccount } from './budget.js';
import type { StreamSealer } from './crypto/body-crypto.js';
import { sealedLength } from './crypto/segment-cipher.js';
import { fastCrc32c } from '../checksum/native-crc32c.js';

/** Segments per slab: 4 x 256 KiB, so one provider write carries 1 MiB (not 24 B then 256 KiB) and a worker message 1 MiB of hashing. */
export const SLAB_SEGMENTS = 4;
/** Bytes of a full slab. */
export const SLAB_BYTES = SLAB_SEGMENTS * (ENTRY_HEADER_SIZE + SEGMENT_SIZE);
/** Sealed segments made from one full slab of an encrypted body, framed (held until written). */
const SEALED_SLAB_BYTES = SLAB_SEGMENTS * (ENTRY_HEADER_SIZE + sealedLength(SEGMENT_SIZE));
/** Slabs read from the body ahead of the one handed to the provider (being filled or hashed). */
export const SLAB_LOOKAHEAD = 2;
/**
 * Slabs one upload holds at most: the lookahead, the one handed to the provider, the one the
 * provider is still writing, and the last slab of the chunk before (its put may still be
 * writing it while the next chunk starts: CHUNK_PUTS_IN_FLIGHT). Fresh memory each: a slab
 * handed to a provider may be kept by it until its put resolves, so it is never written again.
 */
export const SLABS_HELD = SLAB_LOOKAHEAD + 3;
/** Pending-budget bytes an upload on this path holds in all (instead of one segment). */
export const SLAB_WORKING_BYTES = SLABS_HELD * SLAB_BYTES;
/** The same for an encrypted body: its slabs, and the sealed segments made from them. */
export const SEALED_SLAB_WORKING_BYTES = SLABS_HELD * (SLAB_BYTES + SEALED_SLAB_BYTES);
/** Share of the pending budget past which a body does without worker hashing's slabs. */
export const SLAB_BUDGET_SHARE = 0.5;
/**
 * Chunk blobs of one body being put at once: the next chunk is read and written while the one
 * before it finishes (its final flush, rename and directory sync; with erasure, those of all
 * k + m fragments), instead of the body waiting for each. Two, so an upload holds at most one
 * more chunk put's provider memory (erasure stripe buffers) than before.
 */
export const CHUNK_PUTS_IN_FLIGHT = 2;

/**
 * Bodies at least this long are hashed on a worker: below it, the posting and the
 * answers cost more than hashing in place (1 MiB of MD5 is ~1.2 ms here).
 */
export const SLAB_MIN_BYTES = 1024 * 1024;

/**
 * Idle full slabs kept for reuse, process-wide (16 x ~1 MiB): a slab the provider says it
 * has written (PutOptions.released) goes back here instead of to the garbage collector, so
 * steady uploads allocate (and page-fault) no new slab memory. Beyond it, left to the GC.
 */
export const SLAB_POOL_SLABS = 16;
const idleSlabs: Uint8Array[] = [];

/** A slab of `bytes` bytes, contents undefined, over an ArrayBuffer of its own (transferable). */
function takeSlab(bytes: number): Uint8Array {
  return (bytes === SLAB_BYTES ? idleSlabs.pop() : undefined) ?? Buffer.allocUnsafeSlow(bytes);
}

/** Takes back a full slab nothing references any more (its write completed). */
function giveSlab(slab: Uint8Array): void {
  if (slab.length === SLAB_BYTES && slab.byteOffset === 0 && slab.buffer.byteLength === SLAB_BYTES && idleSlabs.length < SLAB_POOL_SLABS) idleSlabs.push(slab);
}

/** Full slabs idle in the pool now (tests, diagnostics). */
export function idleSlabCount(): number {
  return idleSlabs.length;
}

/**
 * Algorithms hashed on the main thread while a slab is filled, before it is handed to the
 * worker: CRC64NVME (every body's), so the two threads share the hashing (the worker keeps
 * MD5, the segments' CRC32C and any claimed algorithm: about 15 of the 19 ms an 8 MiB body
 * takes here, the main thread 4 beside receiving and writing) instead of the worker
 * carrying all of it. Not for a provider whose writes cost the main thread CPU of their own
 * (Provider.cpuBoundWrites: erasure), whose main thread is the busier one already.
 */
const MAIN_THREAD_ALGORITHMS: readonly ChecksumName[] = ['crc64nvme'];

/** A worker job and the budget it holds, for one body. */
export interface SlabHashing {
  hasher: RemoteHasher;
  /** The hashers run on the main thread ({@link MAIN_THREAD_ALGORITHMS}), by algorithm. */
  local: Map<ChecksumName, Hasher>;
  /** An encrypted body's sealer: its segments are stored sealed (writeSlabCarrier). */
  sealer?: StreamSealer;
  /** Frees the job (if still open) and the reservation. Idempotent. */
  close(): void;
}

/**
 * A worker job hashing a body of `size` bytes written under `o`, with its working memory
 * reserved from `budget`; undefined when the body is too small, no pool is given, the pool
 * is full, or the budget cannot spare {@link SLAB_WORKING_BYTES} (less the one segment the
 * caller reserved at admission) within {@link SLAB_BUDGET_SHARE} of its limit now (the caller then
 * writes the body as before, hashing in place within its own smaller reservation). With
 * `budget` is what the request reserves from: the pending budget, or its access key's share
 * of it (store/budget.ts BudgetShares), whose own SLAB_BUDGET_SHARE then applies too. With
 * `sealer` (an encrypted body) the reservation also covers the sealed segments
 * ({@link SEALED_SLAB_WORKING_BYTES}), and every digest runs on the worker: the main thread
 * seals and frames the segments instead. Never throws.
 */
export function openSlabHashing(
  pool: HashPool | undefined,
  budget: BudgetAccount,
  size: number,
  o: ClaimOptions,
  sealer?: StreamSealer,
  provider?: Pick<Provider, 'cpuBoundWrites'>
): SlabHashing | undefined {
  if (!pool || size < SLAB_MIN_BYTES) return undefined;
  // The caller already holds one segment for the body (carrier admission): the rest, if
  // the budget stays at most half used (short of it the body is hashed in place: not a
  // refusal, and the other half stays for writes that cannot do without).
  const working = sealer ? SEALED_SLAB_WORKING_BYTES : SLAB_WORKING_BYTES;
  const release = budget.tryReserve(working - SEGMENT_SIZE, SLAB_BUDGET_SHARE);
  if (!release) return undefined;
  const local = new Map<ChecksumName, Hasher>();
  if (!sealer && !provider?.cpuBoundWrites) for (const a of MAIN_THREAD_ALGORITHMS) local.set(a, createFastHasher(a));
  const hasher = pool.open(digestAlgorithms(o).filter((a) => !local.has(a as ChecksumName)));
  if (!hasher) {
    release();
    return undefined;
  }
  return {
    hasher,
    local,
    ...(sealer ? { sealer } : {}),
    close: () => {
      hasher.abort();
      release();
    },
  };
}

/**
 * Writes the pack entry headers of `bytes`, laid out as entries (a header's room, then a body
 * of `lengths[i]` bytes, for each), in place; `crc` gives each body's CRC32C.
 */
function frameInPlace(pack: PackStream, bytes: Uint8Array, lengths: readonly number[], crc: (body: Uint8Array, i: number) => number): void {
  for (let i = 0, at = 0; i < lengths.length; i++) {
    const n = lengths[i]!;
    bytes.set(pack.entryHeader(n, crc(bytes.subarray(at + ENTRY_HEADER_SIZE, at + ENTRY_HEADER_SIZE + n), i)), at);
    at += ENTRY_HEADER_SIZE + n;
  }
}

interface Slab {
  lengths: number[];
  /** An encrypted body's segments of this slab, sealed and laid out as their pack entries (an
   * entry header's room, then the sealed segment, for each): what is stored instead of the slab,
   * in one provider write. The headers are written once the entries are framed. */
  sealed?: Uint8Array;
  /** The slab back from the worker (transferred there and back) with its segments' CRC32C. */
  hashed: Promise<{ crcs: number[]; bytes: Uint8Array }>;
}

/**
 * Streams exactly `size` bytes of `reader` into chunk blobs (same blobs as writeCarrier)
 * with `hashing` computing the digests (its worker job, and its main-thread hashers as each
 * slab is filled), and returns the refs and the body's digests. With the hashing's `sealer`
 * (an encrypted body), each segment is sealed on the main thread as it is
 * read and the sealed segments are stored, framed as writeCarrier frames them; the plaintext
 * slab only goes to the worker and back, never to the provider.
 * Throws StoreError 'IncompleteBody' (short or long body), 'Io' when the hash worker dies
 * (the request then fails as a 500 and nothing is committed), what the body stream throws,
 * or the provider's error; chunk blobs already written are deleted (best effort) and the
 * job aborted before the error propagates.
 */
export async function writeSlabCarrier(
  provider: Provider,
  reader: ExactReader,
  size: number,
  hashing: SlabHashing,
  io: CarrierIo = {},
  inflight?: InflightTicket
): Promise<{ refs: ChunkRef[]; digests: BodyDigests }> {
  const { hasher, local, sealer } = hashing;
  const refs: ChunkRef[] = [];
  let bodyError: unknown;
  // The body's errors and the worker's (not I/O ones) are kept, to be rethrown as such.
  const settled = async <T>(p: Promise<T>): Promise<T> => {
    try {
      return await p;
    } catch (err) {
      bodyError = err;
      throw err;
    }
  };
  // Slabs handed to the provider; one it says it has written goes back to the pool (once).
  const handed = new WeakSet<Uint8Array>();
  const released = (chunk: Uint8Array) => {
    if (handed.delete(chunk)) giveSlab(chunk);
  };
  // The slab being filled from the body, chained after the one before it (one reader).
  let filling: Promise<Slab> | undefined;
  const fill = async (lengths: number[], got: number): Promise<Slab> => {
    let total = 0;
    for (const n of lengths) total += ENTRY_HEADER_SIZE + n;
    // Uninitialised (fresh or reused) and its own ArrayBuffer (transferable): every byte is
    // written before it is hashed or stored (segments by the reader, headers once the CRCs
    // are back).
    const bytes = takeSlab(total);
    const spans: number[] = [];
    let sealedTotal = 0;
    if (sealer) for (const n of lengths) sealedTotal += ENTRY_HEADER_SIZE + sealedLength(n);
    // Fresh each time: handed to the provider, which may hold it until its put resolves.
    const sealed = sealer ? Buffer.allocUnsafeSlow(sealedTotal) : undefined;
    for (let i = 0, at = 0, sealedAt = 0; i < lengths.length; i++) {
      const n = lengths[i]!;
      const read = await reader.readInto(bytes.subarray(at + ENTRY_HEADER_SIZE, at + ENTRY_HEADER_SIZE + n));
      if (read !== n) throw new StoreError('IncompleteBody', `body ended after ${got + read} of ${size} bytes`);
      spans.push(at + ENTRY_HEADER_SIZE, n);
      const segment = bytes.subarray(at + ENTRY_HEADER_SIZE, at + ENTRY_HEADER_SIZE + n);
      for (const h of local.values()) h.update(segment);
      // Sealed before the slab leaves for the worker (slabs are filled in body order, so the
      // sealer sees the segments in order).
      if (sealed) {
        const end = sealedAt + ENTRY_HEADER_SIZE + sealedLength(n);
        sealer!.sealInto(segment, sealed.subarray(sealedAt + ENTRY_HEADER_SIZE, end));
        sealedAt = end;
      }
      got += n;
      at += ENTRY_HEADER_SIZE + n;
    }
    // A sealed slab's CRCs would be of the plaintext: the stored (sealed) entries get theirs as they are framed.
    const hashed = hasher.hash(bytes, spans, { crcs: !sealed }).catch((err: unknown) => {
      throw err instanceof HashWorkerError ? new StoreError('Io', `hashing the body failed: ${err.message}`, { cause: err }) : err;
    });
    hashed.catch(() => undefined); // awaited in order by the writer; a failure surfaces there
    return sealed ? { lengths, hashed, sealed } : { lengths, hashed };
  };
  // Every slab of the body in order: [chunk index, segment lengths].
  const plan: [number, number[]][] = [];
  const chunkSize = chunkSizeFor(provider.capabilities.chunkBytes);
  for (let off = 0, chunk = 0; off < size; off += chunkSize, chunk++) {
    const n = Math.min(chunkSize, size - off);
    for (let s = 0; s * SEGMENT_SIZE < n; s += SLAB_SEGMENTS) {
      const lengths: number[] = [];
      for (let k = s; k < s + SLAB_SEGMENTS && k * SEGMENT_SIZE < n; k++) lengths.push(Math.min(SEGMENT_SIZE, n - k * SEGMENT_SIZE));
      plan.push([chunk, lengths]);
    }
  }
  let next = 0; // the next slab of `plan` to hand out
  let dispatched = 0; // body bytes of the slabs started so far
  const start = (i: number): Promise<Slab> => {
    const got = dispatched;
    dispatched += plan[i]![1].reduce((a, b) => a + b, 0);
    const prev = filling;
    const p = (prev ?? Promise.resolve()).then(() => fill(plan[i]![1], got));
    p.catch(() => undefined);
    return p;
  };
  // Slab i, with slabs up to i + SLAB_LOOKAHEAD started behind it: reading runs ahead of
  // hashing, which runs ahead of writing, and a worker that gets the CPU late finds
  // several slabs waiting instead of one.
  const started: Promise<Slab>[] = [];
  let startedUpTo = 0; // plan index of the next slab to start
  const take = async (): Promise<Slab> => {
    while (startedUpTo < plan.length && startedUpTo <= next + SLAB_LOOKAHEAD) started.push((filling = start(startedUpTo++)));
    next++;
    return started.shift()!;
  };
  // Chunk puts in flight, in body order (at most CHUNK_PUTS_IN_FLIGHT), and every key started.
  const puts: Promise<void>[] = [];
  const keys: string[] = [];
  // The first failure of any chunk put ends the body at once (not after the next chunk is
  // framed), and cuts the put still running.
  const cut = new AbortController();
  const signal = io.signal;
  const putSignal = signal ? AbortSignal.any([signal, cut.signal]) : cut.signal;
  let failNow!: (err: unknown) => void;
  const failed = new Promise<never>((_, reject) => (failNow = reject));
  failed.catch(() => undefined);
  try {
    for (let chunk = 0, done = 0; done < size; chunk++) {
      const n = Math.min(chunkSize, size - done);
      const lengths: number[] = [];
      for (let off = 0; off < n; off += SEGMENT_SIZE) lengths.push(Math.min(SEGMENT_SIZE, n - off));
      const pack = new PackStream(sealer ? lengths.map(sealedLength) : lengths);
      const key = chunkKey();
      inflight?.add(key); // before the write starts: GC must not sweep it (inflight-blobs.ts)
      if (puts.length >= CHUNK_PUTS_IN_FLIGHT) await puts[puts.length - CHUNK_PUTS_IN_FLIGHT];
      keys.push(key);
      let handedAll!: () => void;
      const framed = new Promise<void>((r) => (handedAll = r));
      async function* frames(): AsyncGenerator<Uint8Array> {
        yield pack.header();
        while (next < plan.length && plan[next]![0] === chunk) {
          const slab = await settled(take());
          if (slab.sealed) {
            // The sealed segments go out, framed in place, in one write while the worker hashes
            // the plaintext; the plaintext slab comes back to the pool once hashed (never to
            // the provider). The entries' CRCs are of the stored (sealed) bytes.
            const out = slab.sealed;
            frameInPlace(pack, out, slab.lengths.map(sealedLength), (body) => fastCrc32c(body, 0));
            yield out;
            giveSlab((await settled(slab.hashed)).bytes);
            continue;
          }
          const { crcs, bytes } = await settled(slab.hashed);
          frameInPlace(pack, bytes, slab.lengths, (_, i) => crcs[i]!);
          handed.add(bytes);
          yield bytes;
        }
        yield* pack.finish();
        handedAll(); // the provider asked past the last frame: the next chunk may start
      }
      const index = chunk;
      const put = provider
        .put(key, frames(), { contentLength: pack.size, ifNoneMatch: '*', released, bulk: true, signal: putSignal, ...(io.owner !== undefined ? { owner: io.owner } : {}) })
        .then(() => {
          refs[index] = { blob: key, size: n, segment: SEGMENT_SIZE, tag: pack.tag };
        });
      put.catch(failNow); // also awaited below (or by the next-but-one chunk)
      puts.push(put);
      // The next chunk is read while this one's put finishes (its flush, rename and directory
      // sync): once every frame of it is handed over, or at once if this put or one before fails.
      await Promise.race([framed, put, failed]);
      done += n;
    }
    await Promise.all(puts);
    if (!(await reader.atEnd())) throw new StoreError('IncompleteBody', `body is longer than the ${size} bytes announced`);
    let values: Awaited<ReturnType<RemoteHasher['digest']>>;
    try {
      values = await hasher.digest();
    } catch (err) {
      throw err instanceof HashWorkerError ? new StoreError('Io', `hashing the body failed: ${err.message}`, { cause: err }) : err;
    }
    const { md5, ...rest } = values;
    if (!md5) throw new StoreError('Io', 'the hash worker returned no MD5');
    for (const [a, h] of local) rest[a] = h.digest();
    return { refs, digests: { size, md5, values: rest as Partial<Record<ChecksumName, Uint8Array>> } };
  } catch (err) {
    // What failed first: later errors (the aborted hash job, the cut put) are its echoes.
    const failure = bodyError ?? err;
    cut.abort(failure); // a chunk put still running stops taking bytes
    hasher.abort();
    // A slab still being read from the body settles within one slab (or the body deadline).
    await filling?.catch(() => undefined);
    await reader.cancel().catch(() => undefined);
    // Every put started has settled (a finished one wrote its blob, a failed one nothing)
    // before the blobs are deleted, so none lands after its delete.
    await Promise.allSettled(puts);
    await Promise.all(keys.map((key) => provider.delete(key).catch(() => undefined)));
    throw failure;
  }
}
