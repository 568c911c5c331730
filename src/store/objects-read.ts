/**
 * @module GetObject / HeadObject: find the live version, apply preconditions, resolve the
 * range (or part), and stream verified bytes.
 */
import type { Repository } from './repository.js';
import { readBody, type BodyRange } from './body-reader.js';
import { checkRead, type ReadConditions } from './conditions.js';
import { decodeVersions, type ObjectVersion } from './records.js';
import { StoreError } from './errors.js';
import { openDataKey, type KeyRing } from './crypto/envelope.js';
import { BodyDecryptor } from './crypto/body-crypto.js';
import { unsealVersionChecksums } from './crypto/sealed-checksums.js';
import { getVersion } from './versions-read.js';
import { stateAsOf } from './as-of.js';

/** A byte range as requested: first-last, open-ended (first-), or a suffix (-n). */
export type RangeRequest = { start: number; end?: number } | { suffix: number };

export interface GetOptions {
  conditions?: ReadConditions;
  range?: RangeRequest;
  /** 1-based part of a multipart object (a single-part object has only part 1). */
  partNumber?: number;
  /** Keys for an encrypted object: the SSE-S3 root and/or the customer's key (SSE-C). */
  keys?: KeyRing;
  /** Read this version (`null` included) instead of the live one (versions-read.ts). */
  versionId?: string;
  /** Read the key as it was at this time, ms (as-of.ts; not with versionId). */
  asOf?: number;
}

export interface GetResult {
  version: ObjectVersion;
  /** The bytes served when a range or part was asked for (even if it is everything). */
  range?: BodyRange;
  /** Number of parts (x-amz-mp-parts-count) when partNumber was asked for a multipart object. */
  partsCount?: number;
  body: AsyncIterable<Uint8Array>;
}

/**
 * The live version of `key`, or StoreError NoSuchBucket / NoSuchKey. When the key's current
 * state is a delete marker, the NoSuchKey error carries it (deleteMarkerOf).
 */
export async function liveVersion(repo: Repository, bucket: string, key: string): Promise<ObjectVersion> {
  const b = repo.state.buckets.get(bucket);
  if (!b) throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: bucket } });
  const raw = await b.lookup(key);
  const v = raw ? decodeVersions(raw, `${bucket}/${key}`)[0] : undefined;
  if (!v || v.deleteMarker) {
    const err = new StoreError('NoSuchKey', 'The specified key does not exist.', { detail: { Key: key } });
    if (v) MARKERS.set(err, v);
    throw err;
  }
  return v;
}

/** Delete markers behind NoSuchKey / MethodNotAllowed errors (the S3 layer answers x-amz-delete-marker). */
const MARKERS = new WeakMap<StoreError, ObjectVersion>();

/** The delete marker an error of a read is about (the key's latest, or the version named), if any. */
export function deleteMarkerOf(err: unknown): ObjectVersion | undefined {
  return err instanceof StoreError ? MARKERS.get(err) : undefined;
}

/**
 * The version a read serves: the live one, or `versionId` (StoreError NoSuchVersion, and
 * MethodNotAllowed carrying the marker when it names a delete marker, as S3 answers 405).
 */
export async function versionToRead(repo: Repository, bucket: string, key: string, versionId: string | undefined, asOf?: number): Promise<ObjectVersion> {
  if (asOf !== undefined) return versionAsOf(repo, bucket, key, versionId, asOf);
  if (versionId === undefined) return liveVersion(repo, bucket, key);
  const { version } = await getVersion(repo, bucket, key, versionId);
  if (version.deleteMarker) {
    const err = new StoreError('MethodNotAllowed', 'The specified method is not allowed against this resource.', { detail: { Method: 'GET', ResourceType: 'DeleteMarker' } });
    MARKERS.set(err, version);
    throw err;
  }
  return version;
}

/**
 * The version of `key` current at `asOf` (as-of.ts stateAsOf): StoreError NoSuchKey (carrying
 * the delete marker current then, if any) when it did not exist then, 'InvalidArgument' for a
 * time outside the bucket's history window or together with a version id (a version is the
 * same at every time: naming both is a mistake, not a question).
 */
async function versionAsOf(repo: Repository, bucket: string, key: string, versionId: string | undefined, asOf: number): Promise<ObjectVersion> {
  if (versionId !== undefined) {
    throw new StoreError('InvalidArgument', 'A read names either a versionId or a time (x-strata-as-of), not both', { detail: { ArgumentName: 'versionId', ArgumentValue: versionId } });
  }
  const past = await stateAsOf(repo, bucket, key, asOf);
  if (past.version) return past.version;
  const err = new StoreError('NoSuchKey', 'The specified key did not exist at the time asked for.', { detail: { Key: key } });
  if (past.marker) MARKERS.set(err, past.marker);
  throw err;
}

/**
 * Resolves a range against `size`: an end past the object clamps; a start at or past the
 * end (of a non-empty object) is StoreError 'InvalidRange' with the size in `detail`.
 */
export function resolveRange(r: RangeRequest, size: number): BodyRange {
  const invalid = () => new StoreError('InvalidRange', 'The requested range is not satisfiable', { detail: { ActualObjectSize: size } });
  if ('suffix' in r) {
    if (r.suffix <= 0 || size === 0) throw invalid();
    return { start: Math.max(0, size - r.suffix), end: size - 1 };
  }
  if (r.start >= size) throw invalid();
  return { start: r.start, end: Math.min(r.end ?? size - 1, size - 1) };
}

function partRange(v: ObjectVersion, n: number): { range?: BodyRange; partsCount?: number } {
  if (!Number.isInteger(n) || n < 1 || n > 10000) throw new StoreError('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive');
  if (!v.parts || v.parts.length === 0) {
    if (n !== 1) throw new StoreError('InvalidPartNumber', 'The requested partnumber is not satisfiable', { detail: { PartNumberRequested: n, ActualPartCount: 1 } });
    return {};
  }
  if (n > v.parts.length) {
    throw new StoreError('InvalidPartNumber', 'The requested partnumber is not satisfiable', { detail: { PartNumberRequested: n, ActualPartCount: v.parts.length } });
  }
  let start = 0;
  for (let i = 0; i < n - 1; i++) start += v.parts[i]!.size;
  const size = v.parts[n - 1]!.size;
  return { range: { start, end: start + size - 1 }, partsCount: v.parts.length };
}

/**
 * Checks `keys` against the version's encryption and returns its body decryptor (undefined
 * for a plaintext body). A customer key for an object not stored with SSE-C, or none for
 * one that is, is StoreError 'InvalidRequest'; a wrong customer key 'AccessDenied'; SSE-S3
 * without the server's key 'KeyUnavailable'. With `body` false (HEAD), an SSE-S3 data key
 * is not opened (nothing will be decrypted); an SSE-C key is always checked.
 */
export function bodyDecryptor(v: ObjectVersion, keys: KeyRing | undefined, body = true): BodyDecryptor | undefined {
  const enc = v.encryption;
  if (keys?.customer && enc?.mode !== 'sse-c') {
    throw new StoreError('InvalidRequest', 'The encryption parameters are not applicable to this object.');
  }
  if (!enc || (!body && enc.mode !== 'sse-c')) return undefined;
  return new BodyDecryptor(openDataKey(enc, keys), enc, v.size);
}

/** HeadObject: the live version after preconditions, range/part and key checks (see bodyDecryptor). */
export async function headObject(repo: Repository, bucket: string, key: string, opts: GetOptions = {}): Promise<GetResult> {
  const { out } = await resolve(repo, bucket, key, opts, false);
  return out;
}

/** GetObject: as HeadObject, and a stream of its (range of) bytes, decrypted if stored encrypted. */
export async function getObject(repo: Repository, bucket: string, key: string, opts: GetOptions = {}): Promise<GetResult> {
  const { out, decrypt } = await resolve(repo, bucket, key, opts, true);
  out.body = readBody(repo.provider, out.version.location, out.version.size, out.range, repo.bodies, decrypt);
  return out;
}

async function resolve(
  repo: Repository,
  bucket: string,
  key: string,
  opts: GetOptions,
  body: boolean
): Promise<{ out: GetResult; decrypt: BodyDecryptor | undefined }> {
  const version = await versionToRead(repo, bucket, key, opts.versionId, opts.asOf);
  const out: GetResult = { version, body: emptyBody() };
  // A part past the end is InvalidPart even without the object's key, as S3 orders it.
  const part = opts.partNumber !== undefined ? partRange(version, opts.partNumber) : undefined;
  // The key before the preconditions: a 304 carries the validators (ETag, Last-Modified),
  // and an SSE-C object's are answered only to the holder of its key.
  const decrypt = bodyDecryptor(version, opts.keys, body);
  checkRead(version, opts.conditions);
  if (part) {
    if (part.range) out.range = part.range;
    if (part.partsCount) out.partsCount = part.partsCount;
  } else if (opts.range) {
    out.range = resolveRange(opts.range, version.size);
  }
  // The key holder sees an SSE-C object's checksums (sealed at rest).
  if (decrypt) out.version = unsealVersionChecksums(version, decrypt.dataKey);
  return { out, decrypt };
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}
