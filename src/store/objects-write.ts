/**
 * @module PutObject: the write pipeline for one body.
 *
 *   admission (pending budget, bucket, key, precondition) -> body streamed once through
 *   the digests -> packed into the next commit (small) or written as a carrier (large) ->
 *   claims verified -> commit (preconditions re-checked atomically) -> acknowledged.
 *
 * Nothing is visible before the commit; a failure at any step leaves no trace except
 * carrier chunks, which are deleted on the way out (best effort; GC reclaims the rest).
 */
import type { BudgetAccount } from './budget.js';
import { stageVersion } from './versions-write.js';
import type { Repository } from './repository.js';
import type { Tx } from './tx.js';
import { abandonChunks, carrierIo, ExactReader, writeCarrier } from './carrier.js';
import { checkDigests, finishDigest, startDigest, type BodyDigests, type ClaimOptions } from './digest.js';
import { openSlabHashing, writeSlabCarrier } from './carrier-slabs.js';
import { sharedHashPool, type HashPool } from '../checksum/hash-pool.js';
import { CHUNK_SIZE, PACK_MAX_BODY, SEGMENT_SIZE } from './layout.js';
import { assertHistoryRoom, maxEntryBytes } from './history-budget.js';
import { checkWrite, type WriteConditions } from './conditions.js';
import { decodeVersions, type ChecksumName, type Location, type ObjectAccess, type ObjectVersion } from './records.js';
import { checkKey } from './validate.js';
import { StoreError } from './errors.js';
import { maskedMd5, newDataKey, newStreamId, streamKey, type BodyStream, type EncryptionRequest, type ObjectEncryption } from './crypto/envelope.js';
import { sealBody, sealedSize, StreamSealer } from './crypto/body-crypto.js';
import { sealedLength } from './crypto/segment-cipher.js';
import { sealVersionChecksums } from './crypto/sealed-checksums.js';
import { resolveLock, type LockRequest } from './object-lock-config.js';

/** S3's single-PUT limit: 5 GiB. */
export const MAX_PUT_BYTES = 5 * 1024 ** 3;

export interface ObjectMetadata {
  contentType?: string;
  /** cache-control, content-disposition, content-encoding, content-language, expires, ... */
  system?: Record<string, string>;
  userMetadata?: Record<string, string>;
  tags?: Record<string, string>;
  /** Owner and canned ACL, when not the defaults (bucket owner, private). */
  access?: ObjectAccess;
  /** The Object Lock the new version gets (resolved at its creation time: object-lock-config.ts). */
  lock?: LockRequest;
}

export interface PutOptions extends ObjectMetadata, ClaimOptions {
  /** Exact body length (Content-Length or x-amz-decoded-content-length). */
  size: number;
  conditions?: WriteConditions;
  signal?: AbortSignal;
  /** Encrypt the body at rest (SSE-S3 / SSE-C) under this request's root key. */
  encryption?: EncryptionRequest;
  /**
   * Where a large plain body is hashed (carrier-slabs.ts): default the process's shared
   * pool (none if STRATA_HASH_THREADS=0), null to hash on this thread.
   */
  hashPool?: HashPool | null;
  /** What the body's memory is reserved from (default the whole pending budget; a request's
   * access-key share: s3/key-share.ts). */
  budget?: BudgetAccount;
}

/** The hash pool `o` asks for: its own, none (null), or the shared one. */
export function hashPoolOf(o: { hashPool?: HashPool | null }): HashPool | undefined {
  return o.hashPool === null ? undefined : (o.hashPool ?? sharedHashPool());
}

export interface PutResult {
  etag: string;
  versionId: string;
  size: number;
  version: ObjectVersion;
}

/** The current live version of a key inside a transaction (undefined: absent, deleted, or a delete marker). */
export async function currentVersion(tx: Tx, bucket: string, key: string): Promise<ObjectVersion | undefined> {
  const raw = await tx.get(bucket, key);
  if (!raw) return undefined;
  const v = decodeVersions(raw, `${bucket}/${key}`)[0];
  return v && !v.deleteMarker ? v : undefined;
}

/**
 * Builds the version a PUT/complete/copy writes. Its id is given when it is staged
 * (versions-write.ts stageVersion), from its position in the commit.
 */
export function makeVersion(
  tx: Tx,
  meta: ObjectMetadata,
  body: { size: number; md5: Uint8Array; partCount?: number; location: Location },
  checksums: ObjectVersion['checksums']
): ObjectVersion {
  const v: ObjectVersion = {
    versionId: '',
    deleteMarker: false,
    size: body.size,
    md5: body.md5,
    partCount: body.partCount ?? 0,
    lastModified: tx.time,
    system: meta.system ?? {},
    userMetadata: meta.userMetadata ?? {},
    tags: meta.tags ?? {},
    location: body.location,
  };
  if (meta.contentType !== undefined) v.contentType = meta.contentType;
  if (checksums) v.checksums = checksums;
  if (meta.access) v.access = meta.access;
  const lock = resolveLock(meta.lock, tx.time);
  if (lock) v.lock = lock;
  return v;
}

/** The stored checksums of a single-part body: the client's algorithm first, else CRC64NVME. */
export function fullObjectChecksums(d: BodyDigests, primary: ChecksumName | undefined): ObjectVersion['checksums'] {
  return { type: 'FULL_OBJECT', primary: primary ?? 'crc64nvme', values: d.values };
}

export async function putObject(
  repo: Repository,
  bucket: string,
  key: string,
  body: AsyncIterable<Uint8Array>,
  opts: PutOptions
): Promise<PutResult> {
  checkKey(key);
  if (!Number.isSafeInteger(opts.size) || opts.size < 0) throw new StoreError('InvalidArgument', `invalid body size ${opts.size}`);
  if (opts.size > MAX_PUT_BYTES) {
    throw new StoreError('EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size', { detail: { MaxSizeAllowed: MAX_PUT_BYTES } });
  }
  const packed = opts.size <= PACK_MAX_BODY;
  const crypt = opts.encryption ? newBodyCrypt(opts.encryption) : undefined;
  // Admission first: nothing is read or written if the budget says no. An encrypted body
  // is held twice for a moment (plaintext and sealed).
  const held = packed ? opts.size + (crypt ? sealedSize(opts.size) : 0) : SEGMENT_SIZE + (crypt ? sealedLength(SEGMENT_SIZE) : 0);
  // A carrier's blobs are written before staging: refuse on an upper bound of its log entry
  // first, so a full history budget never leaves chunks behind (staging checks exactly). Chunks
  // are never smaller than CHUNK_SIZE (layout.ts chunkSizeFor), so this count is at least theirs.
  if (!packed) assertHistoryRoom(repo.state, maxEntryBytes(key, opts, Math.ceil(opts.size / CHUNK_SIZE)));
  const release = (opts.budget ?? repo.budget).reserve(held);
  const reader = new ExactReader(body);
  const inflight = repo.inflight.open();
  let failure: unknown; // a failure that may yet commit keeps the ticket (closeTicket)
  let chunks: Location | undefined;
  try {
    await precheck(repo, bucket, key, opts.conditions);
    const digest = startDigest(opts);
    let bytes: Uint8Array | undefined;
    let hashed: BodyDigests | undefined; // by a worker (carrier-slabs.ts)
    // A carrier's one stream of sealed segments, whichever way it is written.
    const sealer = !packed && crypt ? new StreamSealer(crypt.streamKey, opts.size, SEGMENT_SIZE) : undefined;
    const slabs = packed ? undefined : openSlabHashing(hashPoolOf(opts), opts.budget ?? repo.budget, opts.size, opts, sealer, repo.provider);
    if (slabs) {
      try {
        const out = await writeSlabCarrier(repo.provider, reader, opts.size, slabs, carrierIo(opts), inflight);
        chunks = { kind: 'chunks', chunks: out.refs };
        hashed = out.digests;
      } finally {
        slabs.close();
      }
    } else if (packed) {
      bytes = await reader.read(opts.size);
      if (bytes.length !== opts.size) throw new StoreError('IncompleteBody', `body ended after ${bytes.length} of ${opts.size} bytes`);
      if (!(await reader.atEnd())) throw new StoreError('IncompleteBody', `body is longer than the ${opts.size} bytes announced`);
      digest.update(bytes);
    } else {
      const refs = await writeCarrier(repo.provider, reader, opts.size, (c) => digest.update(c), carrierIo(opts), sealer, inflight);
      chunks = { kind: 'chunks', chunks: refs };
    }
    const { digests: d, primary } = hashed ? checkDigests(hashed, opts) : finishDigest(digest, opts);
    // What is stored: the body itself, or its sealed segments (never the plaintext).
    const stored = bytes && crypt && bytes.length > 0 ? sealBody(crypt.streamKey, bytes) : bytes;
    return await commitPut(repo, bucket, key, opts, d, primary, chunks ? { location: chunks } : { bytes: stored! }, crypt && { crypt });
  } catch (err) {
    failure = err;
    await abandonChunks(repo.provider, reader, chunks?.kind === 'chunks' ? chunks.chunks : [], err);
    throw err;
  } finally {
    repo.closeTicket(inflight, failure);
    release();
  }
}

/** The keys one encrypted body is written with: a fresh data key and one stream. */
export interface BodyCrypt {
  dataKey: Buffer;
  streamKey: Buffer;
  /** The ETag digest to store for a body of plaintext MD5 `md5` (masked for SSE-C). */
  etagDigest(md5: Uint8Array): Uint8Array;
  /** The version's encryption record for a body of `size` bytes. */
  record(size: number): ObjectEncryption;
}

/** Draws a data key and a stream for one body written under `req`. */
export function newBodyCrypt(req: EncryptionRequest): BodyCrypt {
  const { key, envelope } = newDataKey(req);
  const id = newStreamId();
  return {
    dataKey: key,
    streamKey: streamKey(key, id),
    etagDigest: (md5) => (req.mode === 'sse-c' ? maskedMd5(key, md5) : md5),
    record: (size) => ({ ...envelope, streams: [{ id, size }] }),
  };
}

/**
 * Commits a hashed body as the key's new version: the write conditions are checked again
 * inside the commit (StoreError ConditionalRequestConflict when a concurrent write changed
 * the answer), a small body (`bytes`, already sealed when encrypted) is packed into the
 * commit, a carrier (`location`) is referenced as written. An encrypted body records its
 * key envelope and streams (`streams`: several when it was written piece by piece, else
 * the one stream of `crypt`), its ETag digest masked for SSE-C, and SSE-C checksums
 * sealed. Mutates the index through the group commit only.
 */
export async function commitPut(
  repo: Repository,
  bucket: string,
  key: string,
  opts: ObjectMetadata & { conditions?: WriteConditions },
  d: BodyDigests,
  primary: ChecksumName | undefined,
  body: { location: Location } | { bytes: Uint8Array },
  enc?: { crypt: BodyCrypt; streams?: BodyStream[] }
): Promise<PutResult> {
  const md5 = enc ? enc.crypt.etagDigest(d.md5) : d.md5;
  const result = await repo.run(async (tx) => {
    tx.requireBucket(bucket);
    // The current version matters only to a condition (an unversioned put replaces it).
    if (opts.conditions) checkWrite(await currentVersion(tx, bucket, key), opts.conditions, 'ConditionalRequestConflict');
    const location: Location = 'location' in body ? body.location : d.size > 0 ? tx.addBody(body.bytes) : { kind: 'empty' };
    const version = makeVersion(tx, opts, { size: d.size, md5, location }, fullObjectChecksums(d, primary));
    if (enc) version.encryption = enc.streams ? { ...enc.crypt.record(d.size), streams: enc.streams } : enc.crypt.record(d.size);
    // Stored with SSE-C checksum values sealed; answered with them.
    Object.assign(version, stageVersion(tx, bucket, key, enc ? sealVersionChecksums(version, enc.crypt.dataKey) : version));
    return version;
  });
  return { etag: Buffer.from(md5).toString('hex'), versionId: result.versionId, size: d.size, version: result };
}

/** Fails fast, before the body is read: missing bucket, or a precondition already false. */
export async function precheck(repo: Repository, bucket: string, key: string, conditions: WriteConditions | undefined): Promise<void> {
  const b = repo.state.buckets.get(bucket);
  if (!b) throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: bucket } });
  if (!conditions) return;
  const raw = await b.lookup(key);
  const v = raw ? decodeVersions(raw, `${bucket}/${key}`)[0] : undefined;
  checkWrite(v && !v.deleteMarker ? v : undefined, conditions);
}
