/**
 * @module Turning S3 object answers (GET, HEAD, PUT) into BlobInfo and exact bodies.
 */
import { PassThrough, pipeline, Readable, Transform, type TransformCallback } from 'node:stream';
import { ProviderError, type BlobInfo } from '../provider.js';
import { header, type S3Response } from './client.js';
import { unquoteEtag } from './list.js';

/** A Content-Range value (`bytes a-b/total`, or a star and `/total` on a 416), parsed; undefined when absent or malformed. */
export function parseContentRange(
  value: string | undefined
): { start?: number; end?: number; total: number } | undefined {
  if (!value) return undefined;
  const m = /^bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+)$/.exec(value.trim());
  if (!m) return undefined;
  return {
    start: m[1] === undefined ? undefined : Number(m[1]),
    end: m[2] === undefined ? undefined : Number(m[2]),
    total: Number(m[3]),
  };
}

/** BlobInfo from the headers of a HEAD, GET or PUT answer; `size` given by the caller. */
export function infoFromHeaders(res: S3Response, key: string, size: number): BlobInfo {
  const modified = header(res, 'last-modified') ?? header(res, 'date');
  const date = modified ? new Date(modified) : new Date();
  return {
    key,
    size,
    etag: unquoteEtag(header(res, 'etag')),
    lastModified: Number.isNaN(date.getTime()) ? new Date() : date,
  };
}

/** Content-Length of an answer; throws ProviderError 'Io' when missing or malformed. */
export function contentLength(res: S3Response, what: string): number {
  const n = Number(header(res, 'content-length'));
  if (!Number.isSafeInteger(n) || n < 0)
    throw new ProviderError('Io', `${what}: missing or bad Content-Length`);
  return n;
}

/** Passes on `length` bytes after skipping `skip`, then ends (and lets the source be destroyed). */
class Slice extends Transform {
  #skip: number;
  #left: number;
  constructor(skip: number, length: number) {
    super();
    this.#skip = skip;
    this.#left = length;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let c = chunk;
    if (this.#skip > 0) {
      const n = Math.min(this.#skip, c.length);
      this.#skip -= n;
      c = c.subarray(n);
    }
    if (c.length > 0 && this.#left > 0) {
      const out = c.subarray(0, this.#left);
      this.#left -= out.length;
      this.push(out);
      if (this.#left === 0) this.push(null);
    }
    done();
  }
}

/**
 * Hands a response body to a caller: bytes [skip, skip + length) of what the
 * server sent (servers may answer a range with more than was asked: a whole object,
 * or a longer window). The returned stream keeps backpressure, passes on errors of
 * the source, and may be destroyed at any time: undici's body emits an error when
 * destroyed, which the pipeline absorbs here instead of leaving it uncaught.
 */
export function ownBody(body: Readable, skip: number, length: number, exact: boolean): Readable {
  const out = exact ? new PassThrough() : new Slice(skip, length);
  pipeline(body, out, () => {});
  if (!exact) out.on('end', () => discardBody(body));
  return out;
}

/** Drops a response body that will not be read, without an uncaught error. */
export function discardBody(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}
