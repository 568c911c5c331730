/**
 * @module Envelope encryption of object bodies: per-object data keys, wrapped by the key
 * that owns the object, and the per-stream keys segments are sealed with.
 *
 *   root key   SSE-S3: a key the server derives from its master key (never stored);
 *              SSE-C:  the customer's key, sent with each request (never stored).
 *   wrap key   HKDF-SHA256(root, salt = 16 random bytes per object, "strata/sse/wrap/v1/<mode>")
 *   data key   32 random bytes per object (per multipart upload), stored only wrapped:
 *              AES-256-GCM(wrap key, zero nonce, data key) — each wrap key seals exactly one
 *              data key, so the fixed nonce is never reused, and the tag makes a wrong
 *              root key fail to unwrap instead of yielding a wrong data key.
 *   stream key HKDF-SHA256(data key, salt = the stream's 16-byte random id, "strata/sse/segment/v1")
 *              one per body stream: a single PUT is one stream, each multipart part another.
 *
 * So the repository holds only salts, wrapped keys and stream ids: nothing that opens a
 * body without the master key (SSE-S3) or the customer's key (SSE-C). For SSE-C the
 * customer key is not stored in any form; the wrapped data key's tag is what tells a wrong
 * key from the right one.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { ByteReader, ByteWriter } from '../binary.js';
import { StoreError } from '../errors.js';

export type SseMode = 'sse-s3' | 'sse-c';

/** Key lengths (AES-256) and the sizes of the stored fields, bytes. */
export const KEY_BYTES = 32;
export const SALT_BYTES = 16;
export const STREAM_ID_BYTES = 16;
const TAG_BYTES = 16;
export const WRAPPED_BYTES = KEY_BYTES + TAG_BYTES;

/** What an encrypted object (or multipart upload) stores about its data key. */
export interface KeyEnvelope {
  mode: SseMode;
  salt: Uint8Array;
  wrapped: Uint8Array;
}

/** One independently keyed run of segments: the body of a single PUT, or one part. */
export interface BodyStream {
  id: Uint8Array;
  /** Plaintext bytes in the stream. */
  size: number;
}

/** The encryption of an object version: its key envelope and its streams, in body order. */
export interface ObjectEncryption extends KeyEnvelope {
  streams: BodyStream[];
  /** SSE-C: the checksum values of the object and its parts, sealed (sealed-checksums.ts). */
  sealedChecksums?: Uint8Array;
}

/** How a write asks to be encrypted: the mode and the root key that will own the data key. */
export interface EncryptionRequest {
  mode: SseMode;
  root: Uint8Array;
}

/** The root keys a read may use: the SSE-S3 root (when a master key exists), the customer key (when sent). */
export interface KeyRing {
  sseS3?: Uint8Array;
  customer?: Uint8Array;
}

const MODE_CODE: Record<SseMode, number> = { 'sse-s3': 1, 'sse-c': 2 };
const wrapInfo = (mode: SseMode) => `strata/sse/wrap/v1/${mode}`;

function wrapKey(root: Uint8Array, salt: Uint8Array, mode: SseMode): Buffer {
  if (root.length !== KEY_BYTES) throw new RangeError(`root key must be ${KEY_BYTES} bytes`);
  return Buffer.from(hkdfSync('sha256', root, salt, wrapInfo(mode), KEY_BYTES));
}

/**
 * A fresh data key for `req`, and its envelope (salt + wrapped key) to store. Pure apart
 * from the random bytes it draws.
 */
export function newDataKey(req: EncryptionRequest): { key: Buffer; envelope: KeyEnvelope } {
  const key = randomBytes(KEY_BYTES);
  const salt = randomBytes(SALT_BYTES);
  const c = createCipheriv('aes-256-gcm', wrapKey(req.root, salt, req.mode), Buffer.alloc(12));
  c.setAAD(Buffer.from(wrapInfo(req.mode)));
  const wrapped = Buffer.concat([c.update(key), c.final(), c.getAuthTag()]);
  return { key, envelope: { mode: req.mode, salt, wrapped } };
}

/** The data key inside `env` if `root` is the key that wrapped it, else undefined. */
export function unwrapDataKey(env: KeyEnvelope, root: Uint8Array): Buffer | undefined {
  if (root.length !== KEY_BYTES || env.wrapped.length !== WRAPPED_BYTES) return undefined;
  const d = createDecipheriv('aes-256-gcm', wrapKey(root, env.salt, env.mode), Buffer.alloc(12));
  d.setAAD(Buffer.from(wrapInfo(env.mode)));
  d.setAuthTag(env.wrapped.subarray(KEY_BYTES));
  try {
    return Buffer.concat([d.update(env.wrapped.subarray(0, KEY_BYTES)), d.final()]);
  } catch {
    return undefined;
  }
}

/**
 * The data key of `env` from the matching key of `keys`. Throws StoreError:
 * SSE-C without a customer key -> 'InvalidRequest' (400); a customer key that does not
 * unwrap it -> 'AccessDenied' (403); SSE-S3 without the server's root -> 'KeyUnavailable';
 * an SSE-S3 root that does not unwrap it (another master key) -> 'KeyUnavailable'.
 */
export function openDataKey(env: KeyEnvelope, keys: KeyRing | undefined): Buffer {
  if (env.mode === 'sse-c') {
    if (!keys?.customer) {
      throw new StoreError(
        'InvalidRequest',
        'The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.'
      );
    }
    const key = unwrapDataKey(env, keys.customer);
    if (!key) throw new StoreError('AccessDenied', 'Access Denied');
    return key;
  }
  if (!keys?.sseS3) throw new StoreError('KeyUnavailable', 'an SSE-S3 object cannot be decrypted: the server has no master key');
  const key = unwrapDataKey(env, keys.sseS3);
  if (!key) throw new StoreError('KeyUnavailable', 'an SSE-S3 data key does not unwrap: the master key is not the one it was written with');
  return key;
}

/** A fresh random stream id. */
export function newStreamId(): Buffer {
  return randomBytes(STREAM_ID_BYTES);
}

/** The key the segments of stream `id` are sealed with. Pure. */
export function streamKey(dataKey: Uint8Array, id: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', dataKey, id, 'strata/sse/segment/v1', KEY_BYTES));
}

/**
 * The ETag digest stored for an SSE-C body instead of its plaintext MD5 (which would let
 * anyone holding the repository, or listing the bucket, confirm a guessed plaintext): the
 * first 16 bytes of HMAC-SHA256 keyed by the object's data key. Stable for one body under
 * one data key, so part ETags still match at Complete. Pure.
 */
export function maskedMd5(dataKey: Uint8Array, md5: Uint8Array): Uint8Array {
  const k = Buffer.from(hkdfSync('sha256', dataKey, new Uint8Array(0), 'strata/sse-c/etag/v1', KEY_BYTES));
  return createHmac('sha256', k).update(md5).digest().subarray(0, 16);
}

/** Appends `env` to a record (mode, salt, wrapped key). */
export function writeEnvelope(w: ByteWriter, env: KeyEnvelope): void {
  w.u8(MODE_CODE[env.mode]).raw(env.salt).raw(env.wrapped);
}

/** Reads what writeEnvelope wrote; throws StoreError 'Corrupt' on an unknown mode or short input. */
export function readEnvelope(r: ByteReader): KeyEnvelope {
  const code = r.u8();
  const mode = code === 1 ? 'sse-s3' : code === 2 ? 'sse-c' : undefined;
  if (!mode) throw new StoreError('Corrupt', `encryption: unknown mode ${code}`);
  return { mode, salt: r.raw(SALT_BYTES).slice(), wrapped: r.raw(WRAPPED_BYTES).slice() };
}

/** Appends an object's encryption (envelope, its streams, sealed checksums or an empty field). */
export function writeObjectEncryption(w: ByteWriter, e: ObjectEncryption): void {
  writeEnvelope(w, e);
  w.varint(e.streams.length);
  for (const s of e.streams) w.raw(s.id).varint(s.size);
  w.bytes(e.sealedChecksums ?? new Uint8Array(0));
}

/** Reads what writeObjectEncryption wrote; throws StoreError 'Corrupt' on malformed input. */
export function readObjectEncryption(r: ByteReader): ObjectEncryption {
  const env = readEnvelope(r);
  const n = r.varint();
  if (n * (STREAM_ID_BYTES + 1) > r.remaining) throw new StoreError('Corrupt', `encryption: ${n} streams cannot fit`);
  const streams: BodyStream[] = [];
  for (let i = 0; i < n; i++) streams.push({ id: r.raw(STREAM_ID_BYTES).slice(), size: r.varint() });
  const sealed = r.bytes();
  return sealed.length > 0 ? { ...env, streams, sealedChecksums: sealed.slice() } : { ...env, streams };
}
