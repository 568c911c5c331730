/**
 * @module The write pipeline's digests: every body is hashed once, as it streams, with
 * MD5 (the ETag) and the checksums the request needs; claims made by the client are
 * checked against the results before anything is committed.
 *
 * CRC64NVME is always computed (like S3, it is the default full-object checksum of an
 * object uploaded without one, and it combines across multipart parts).
 */
import { createFastHasher } from '../checksum/native.js';
import type { Hasher } from '../checksum/hasher.js';
import { CHECKSUM_NAMES, type ChecksumName } from './records.js';
import { StoreError } from './errors.js';

/** What a client asserted about a body; all optional, all verified when present. */
export interface BodyClaims {
  /** Content-MD5, base64. */
  contentMd5?: string;
  /** x-amz-checksum-<alg>, base64 (header, trailer or query). */
  checksums?: Partial<Record<ChecksumName, string>>;
  /** Hex SHA-256 from x-amz-content-sha256 (signed payload). */
  payloadSha256?: string;
}

export interface BodyDigests {
  size: number;
  md5: Uint8Array;
  values: Partial<Record<ChecksumName, Uint8Array>>;
}

export class BodyDigest {
  readonly #md5: Hasher = createFastHasher('md5');
  readonly #hashers = new Map<ChecksumName, Hasher>();
  #size = 0;

  /** Hashes MD5, CRC64NVME and every algorithm in `extra`. */
  constructor(extra: Iterable<ChecksumName> = []) {
    for (const name of new Set<ChecksumName>(['crc64nvme', ...extra])) {
      this.#hashers.set(name, createFastHasher(name));
    }
  }

  update(chunk: Uint8Array): void {
    this.#size += chunk.length;
    this.#md5.update(chunk);
    for (const h of this.#hashers.values()) h.update(chunk);
  }

  get size(): number {
    return this.#size;
  }

  finish(): BodyDigests {
    const values: Partial<Record<ChecksumName, Uint8Array>> = {};
    for (const [name, h] of this.#hashers) values[name] = h.digest();
    return { size: this.#size, md5: this.#md5.digest(), values };
  }
}

/** The algorithms a set of claims needs hashed (besides MD5 and CRC64NVME). */
export function claimedAlgorithms(claims: BodyClaims | undefined, requested?: ChecksumName): ChecksumName[] {
  const out = new Set<ChecksumName>();
  if (requested) out.add(requested);
  for (const name of CHECKSUM_NAMES) if (claims?.checksums?.[name] !== undefined) out.add(name);
  if (claims?.payloadSha256) out.add('sha256');
  return [...out];
}

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * A base64 digest claim of `bytes` bytes. A malformed one is StoreError `code`: S3 answers
 * InvalidDigest for Content-MD5 but BadDigest for an x-amz-checksum-* value.
 */
function decodeB64(value: string, what: string, bytes: number, code: 'InvalidDigest' | 'BadDigest' = 'InvalidDigest'): Uint8Array {
  const v = value.trim();
  const buf = B64.test(v) ? Buffer.from(v, 'base64') : Buffer.alloc(0);
  if (buf.length !== bytes) throw new StoreError(code, `${what} is not a base64 ${bytes}-byte digest`);
  return buf;
}

const DIGEST_BYTES: Record<ChecksumName, number> = { crc32: 4, crc32c: 4, crc64nvme: 8, sha1: 20, sha256: 32 };

/**
 * Throws StoreError 'InvalidDigest' for a malformed claim and 'BadDigest' for one that
 * does not match `d`. Call after the whole body was hashed and before committing.
 */
export function verifyClaims(d: BodyDigests, claims: BodyClaims | undefined): void {
  if (!claims) return;
  if (claims.contentMd5 !== undefined) {
    const want = decodeB64(claims.contentMd5, 'Content-MD5', 16);
    if (!Buffer.from(d.md5).equals(want)) {
      throw new StoreError('BadDigest', 'The Content-MD5 you specified did not match what we received.');
    }
  }
  for (const name of CHECKSUM_NAMES) {
    const claim = claims.checksums?.[name];
    if (claim === undefined) continue;
    const want = decodeB64(claim, `x-amz-checksum-${name}`, DIGEST_BYTES[name], 'BadDigest');
    if (!Buffer.from(d.values[name]!).equals(want)) {
      throw new StoreError('BadDigest', `The ${name.toUpperCase()} you specified did not match the calculated checksum.`, {
        detail: { Algorithm: name.toUpperCase() },
      });
    }
  }
  if (claims.payloadSha256 !== undefined) {
    if (Buffer.from(d.values.sha256!).toString('hex') !== claims.payloadSha256.toLowerCase()) {
      throw new StoreError('BadDigest', "The provided 'x-amz-content-sha256' header does not match what was computed.", {
        detail: { Kind: 'XAmzContentSHA256Mismatch' },
      });
    }
  }
}

/** How a write states its claims: known up front, plus trailing ones (aws-chunked trailers). */
export interface ClaimOptions {
  /** Claims known before the body (headers, query). */
  claims?: BodyClaims;
  /** Called once the body ended: checksums that arrived after it (trailers). */
  trailingClaims?: () => Partial<Record<ChecksumName, string>> | undefined;
  /** The algorithm the client chose (announced before the body). */
  checksumAlgorithm?: ChecksumName;
}

/** A digest hashing everything `o` will need to check. */
export function startDigest(o: ClaimOptions): BodyDigest {
  return new BodyDigest(claimedAlgorithms(o.claims, o.checksumAlgorithm));
}

/**
 * Finishes `digest` and checks every claim, trailing ones included. Returns the digests
 * and the algorithm to record as the object's own (the client's choice, else the one it
 * claimed). Throws StoreError InvalidRequest (a trailing checksum of an algorithm nobody
 * announced), InvalidDigest, BadDigest.
 */
export function finishDigest(digest: BodyDigest, o: ClaimOptions): { digests: BodyDigests; primary: ChecksumName | undefined } {
  return checkDigests(digest.finish(), o);
}

/** Every algorithm a body written under `o` is hashed with: MD5, CRC64NVME and the claimed ones. */
export function digestAlgorithms(o: ClaimOptions): ('md5' | ChecksumName)[] {
  return ['md5', ...new Set<ChecksumName>(['crc64nvme', ...claimedAlgorithms(o.claims, o.checksumAlgorithm)])];
}

/**
 * As {@link finishDigest}, for digests computed elsewhere (a hash worker: store/carrier-slabs.ts)
 * over `d.size` bytes with {@link digestAlgorithms}. Throws as finishDigest.
 */
export function checkDigests(d: BodyDigests, o: ClaimOptions): { digests: BodyDigests; primary: ChecksumName | undefined } {
  const trailing = o.trailingClaims?.() ?? {};
  const claims: BodyClaims = Object.assign({}, o.claims, { checksums: Object.assign({}, o.claims?.checksums, trailing) });
  for (const name of claimedAlgorithms(claims)) {
    if (!d.values[name]) {
      throw new StoreError('InvalidRequest', `x-amz-checksum-${name} was not announced before the body (x-amz-trailer / x-amz-sdk-checksum-algorithm)`);
    }
  }
  verifyClaims(d, claims);
  return { digests: d, primary: o.checksumAlgorithm ?? CHECKSUM_NAMES.find((n) => claims.checksums?.[n] !== undefined) };
}
