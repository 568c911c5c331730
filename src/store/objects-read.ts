/**
 * @module GetObject / HeadObject: find the live version, apply preconditions, resolve the
 * range (or part), and stream verified bytes.
 */
import type { Repository } from './repository.js';
import { readBody, type BodyRange } from './body-reader.js';
import { checkRead, type ReadConditions } from './conditions.js';
import { decodeVersions, type ObjectVersion } from './records.js';
import { StoreError } from './errors.js';

/** A byte range as requested: first-last, open-ended (first-), or a suffix (-n). */
export type RangeRequest = { start: number; end?: number } | { suffix: number };

export interface GetOptions {
  conditions?: ReadConditions;
  range?: RangeRequest;
  /** 1-based part of a multipart object (a single-part object has only part 1). */
  partNumber?: number;
}

export interface GetResult {
  version: ObjectVersion;
  /** The bytes served when a range or part was asked for (even if it is everything). */
  range?: BodyRange;
  /** Number of parts (x-amz-mp-parts-count) when partNumber was asked for a multipart object. */
  partsCount?: number;
  body: AsyncIterable<Uint8Array>;
}

/** The live version of `key`, or StoreError NoSuchBucket / NoSuchKey. */
export async function liveVersion(repo: Repository, bucket: string, key: string): Promise<ObjectVersion> {
  const b = repo.state.buckets.get(bucket);
  if (!b) throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: bucket } });
  const raw = await b.lookup(key);
  const v = raw ? decodeVersions(raw, `${bucket}/${key}`)[0] : undefined;
  if (!v || v.deleteMarker) throw new StoreError('NoSuchKey', 'The specified key does not exist.', { detail: { Key: key } });
  return v;
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

/** HeadObject: the live version after preconditions. */
export async function headObject(repo: Repository, bucket: string, key: string, opts: GetOptions = {}): Promise<GetResult> {
  const version = await liveVersion(repo, bucket, key);
  checkRead(version, opts.conditions);
  const out: GetResult = { version, body: emptyBody() };
  applyRange(out, opts);
  return out;
}

/** GetObject: the live version after preconditions, and a stream of its (range of) bytes. */
export async function getObject(repo: Repository, bucket: string, key: string, opts: GetOptions = {}): Promise<GetResult> {
  const out = await headObject(repo, bucket, key, opts);
  out.body = readBody(repo.provider, out.version.location, out.version.size, out.range, repo.bodies);
  return out;
}

function applyRange(out: GetResult, opts: GetOptions): void {
  const v = out.version;
  if (opts.partNumber !== undefined) {
    const p = partRange(v, opts.partNumber);
    if (p.range) out.range = p.range;
    if (p.partsCount) out.partsCount = p.partsCount;
  } else if (opts.range) {
    out.range = resolveRange(opts.range, v.size);
  }
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}
