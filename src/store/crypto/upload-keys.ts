/**
 * @module Encryption of multipart uploads: the upload holds one wrapped data key (drawn at
 * CreateMultipartUpload); every part is its own stream under it, sealed as it arrives, and
 * Complete lists the parts' streams in the object's encryption record (no byte re-read).
 *
 * SSE-C uploads need the customer's key on every UploadPart and on Complete; a part sent
 * without it, or with another key, is refused before any byte is read.
 */
import { SEGMENT_SIZE } from '../layout.js';
import { StoreError } from '../errors.js';
import { StreamSealer } from './body-crypto.js';
import {
  maskedMd5,
  newDataKey,
  newStreamId,
  openDataKey,
  streamKey,
  type EncryptionRequest,
  type KeyEnvelope,
  type KeyRing,
  type ObjectEncryption,
} from './envelope.js';

const MISSING =
  'The multipart upload initiate requested encryption. Subsequent part requests must include the appropriate encryption parameters.';
const MISMATCH = 'The provided encryption parameters did not match the ones used originally.';
const NOT_SSE_C =
  'The multipart upload initiate did not request encryption with a customer key: the encryption parameters are not applicable to this upload.';

/** The envelope a new upload stores for `req` (its data key is recovered from it per part). */
export function uploadEnvelope(req: EncryptionRequest): KeyEnvelope {
  return newDataKey(req).envelope;
}

/**
 * The upload's data key from `keys`, or undefined for an unencrypted upload. Throws
 * StoreError 'InvalidRequest' (400) when an SSE-C upload gets no customer key or another
 * one, or another upload gets one; 'KeyUnavailable' when the server's SSE-S3 key
 * is missing or not the one the upload was created with.
 */
export function uploadDataKey(env: KeyEnvelope | undefined, keys: KeyRing | undefined): Buffer | undefined {
  if (keys?.customer && env?.mode !== 'sse-c') throw new StoreError('InvalidRequest', NOT_SSE_C);
  if (!env) return undefined;
  if (env.mode === 'sse-c' && !keys?.customer) throw new StoreError('InvalidRequest', MISSING);
  try {
    return openDataKey(env, keys);
  } catch (err) {
    if (err instanceof StoreError && err.code === 'AccessDenied') throw new StoreError('InvalidRequest', MISMATCH);
    throw err;
  }
}

/** The keys one part is written with. */
export interface PartCrypt {
  stream: Uint8Array;
  sealer: StreamSealer;
  /** The part's ETag digest for plaintext MD5 `md5` (masked for SSE-C). */
  etagDigest(md5: Uint8Array): Uint8Array;
}

/** A fresh stream for a part of `size` bytes under the upload's data key. */
export function partCrypt(env: KeyEnvelope, dataKey: Buffer, size: number): PartCrypt {
  const stream = newStreamId();
  return {
    stream,
    sealer: new StreamSealer(streamKey(dataKey, stream), size, SEGMENT_SIZE),
    etagDigest: (md5) => (env.mode === 'sse-c' ? maskedMd5(dataKey, md5) : md5),
  };
}

/**
 * The completed object's encryption: the upload's envelope and the chosen parts' streams,
 * in order. Throws StoreError 'Corrupt' for a part without a stream.
 */
export function completedEncryption(env: KeyEnvelope, parts: readonly { size: number; stream?: Uint8Array }[]): ObjectEncryption {
  return {
    ...env,
    streams: parts.map((p, i) => {
      if (!p.stream) throw new StoreError('Corrupt', `encrypted upload: part ${i + 1} has no stream`);
      return { id: p.stream, size: p.size };
    }),
  };
}
