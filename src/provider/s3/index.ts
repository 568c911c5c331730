/**
 * @module The s3 provider: blobs as objects of one bucket of any S3-compatible
 * endpoint (path-style), under an optional key prefix.
 *
 * Requests are signed with our SigV4 (src/sigv4) and sent over one keep-alive undici
 * Pool (client.ts), with retries (retry.ts). Bodies stream both ways with
 * backpressure. `capabilities.conditionalWrites` is false until `probeCapabilities()`
 * has shown that the backend enforces If-None-Match / If-Match (or the caller
 * asserts it): many S3-compatible servers silently ignore them.
 *
 * The probe also learns how If-Match must be sent (quoted, or bare as Ceph RGW wants)
 * and whether the backend compares it by prefix (probe.ts says why that stays safe).
 * A conditional PUT that fails ambiguously (a 500, which RGW answers to the loser of an
 * If-Match race, or a lost connection) is 'Unavailable', never PreconditionFailed.
 *
 * Bodies of any size: a single PUT when the length is known and at most 5 GiB, or when
 * a stream of unknown length ends within one part; otherwise a multipart upload
 * (multipart.ts), reading the next part while the previous one uploads (two parts in
 * memory at most).
 *
 * Etags are the server's (for a single PUT, S3 and most compatibles use the MD5 of
 * the content), so rewriting identical bytes keeps the etag.
 */
import { checkedChunks, discardBody, isReplayable, throwIfAborted } from '../body.js';
import { keyBytes, listLimit } from '../key.js';
import {
  ProviderError,
  type BlobBody,
  type BlobInfo,
  type GetOptions,
  type GetResult,
  type ListOptions,
  type ListPage,
  type Provider,
  type ProviderCapabilities,
  type PutOptions,
} from '../provider.js';
import { rangeHeader, resolveRange, validateRange } from '../range.js';
import { sha256Hex, UNSIGNED_PAYLOAD } from '../../sigv4/index.js';
import { header, readText, S3Client, type RequestBody, type S3ClientOptions } from './client.js';
import { errorFromResponse } from './errors.js';
import { LIST_RESPONSE_MAX_BYTES, parseListResult } from './list.js';
import { MAX_PARTS, MIN_PART_BYTES, putMultipart } from './multipart.js';
import { PartReader } from './parts.js';
import {
  FIXED_LENGTH_ETAG,
  probeConditionalWrites,
  type IfMatchForm,
  type ProbeResult,
} from './probe.js';
import {
  contentLength,
  discardBody as discardResponse,
  infoFromHeaders,
  ownBody,
  parseContentRange,
} from './response.js';
import { Readable } from 'node:stream';

export { DEFAULT_RETRY, type RetryPolicy } from './retry.js';
export type { RetryEvent } from './client.js';
export type { IfMatchForm, ProbeResult } from './probe.js';

export interface S3ProviderOptions extends Omit<
  S3ClientOptions,
  'endpoint' | 'credentials' | 'region'
> {
  /** Origin of the endpoint, e.g. `https://s3.eu-west-3.amazonaws.com` or `http://127.0.0.1:9000`. */
  endpoint: string;
  bucket: string;
  /** Prepended to every key (e.g. `repo1/`); list results have it removed. Default ''. */
  prefix?: string;
  /** Signing region (default `us-east-1`, what most S3-compatible servers expect). */
  region?: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /**
   * `'probe'`: run probeCapabilities() while creating. `true`/`false`: assert it
   * without probing. Default false (conditional writes not relied upon).
   */
  conditionalWrites?: boolean | 'probe';
  /**
   * How If-Match is sent when `conditionalWrites` is asserted without probing (a probe
   * overrides it). Default: quoted, exact comparison (AWS S3). Ceph RGW 16.2 needs
   * `{ quoted: false, prefixCompare: true }`.
   */
  ifMatchForm?: IfMatchForm;
  /**
   * Part size of multipart uploads, bytes (default {@link DEFAULT_PART_BYTES}; at least
   * S3's 5 MiB). Streams of unknown length up to this size go out as one PUT; longer
   * ones as multipart uploads holding at most two parts in memory (one uploading, the next
   * being read).
   */
  partBytes?: number;
  /**
   * Largest body sent as one PUT, bytes (default S3's limit, 5 GiB); longer sized bodies
   * are uploaded in parts. Lowered by tests to exercise that path.
   */
  singlePutMaxBytes?: number;
}

const MIB = 1024 * 1024;

/** Default multipart part size: 16 MiB, 10,000 parts = bodies of unknown length up to 160 GiB. */
export const DEFAULT_PART_BYTES = 16 * MIB;

/** S3's largest single PUT: 5 GiB. */
export const SINGLE_PUT_MAX_BYTES = 5 * 1024 * MIB;

/** In-memory bodies up to this size are sent with their SHA-256 signed; larger ones UNSIGNED-PAYLOAD. */
const SIGNED_PAYLOAD_MAX_BYTES = 8 * 1024 * 1024;

/**
 * A stream without contentLength is buffered (S3 needs Content-Length) up to one part;
 * past that it is sent as a multipart upload. Kept for callers that size buffers by it.
 */
export const UNSIZED_STREAM_MAX_BYTES = DEFAULT_PART_BYTES;

function checkContentLength(key: string, len: number | undefined): void {
  if (len !== undefined && (!Number.isSafeInteger(len) || len < 0)) {
    throw new ProviderError('LengthMismatch', `${key}: invalid contentLength ${len}`);
  }
}

export class S3Provider implements Provider {
  readonly kind = 's3';
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly #partBytes: number;
  readonly #singlePutMaxBytes: number;
  #capabilities: ProviderCapabilities;
  /** How If-Match goes on the wire (probe.ts): quoted (RFC 9110) unless the probe found otherwise. */
  #ifMatch: IfMatchForm = { quoted: true, prefixCompare: false };

  constructor(options: S3ProviderOptions) {
    if (!options.bucket || options.bucket.includes('/'))
      throw new RangeError(`invalid bucket name ${JSON.stringify(options.bucket)}`);
    this.#partBytes = options.partBytes ?? DEFAULT_PART_BYTES;
    if (!Number.isSafeInteger(this.#partBytes) || this.#partBytes < MIN_PART_BYTES)
      throw new RangeError(
        `partBytes must be an integer >= ${MIN_PART_BYTES}, not ${options.partBytes}`
      );
    this.#singlePutMaxBytes = options.singlePutMaxBytes ?? SINGLE_PUT_MAX_BYTES;
    if (options.ifMatchForm) this.#ifMatch = { ...options.ifMatchForm };
    if (!Number.isSafeInteger(this.#singlePutMaxBytes) || this.#singlePutMaxBytes < 1)
      throw new RangeError(`invalid singlePutMaxBytes ${options.singlePutMaxBytes}`);
    this.#bucket = options.bucket;
    this.#prefix = options.prefix ?? '';
    this.#capabilities = {
      conditionalWrites: options.conditionalWrites === true,
      sortedList: true,
    };
    this.#client = new S3Client({
      ...options,
      region: options.region ?? 'us-east-1',
      credentials: {
        accessKeyId: options.accessKeyId,
        secretAccessKey: options.secretAccessKey,
        sessionToken: options.sessionToken,
      },
    });
  }

  get capabilities(): ProviderCapabilities {
    return { ...this.#capabilities };
  }

  /**
   * Tests whether the backend enforces conditional writes (probe.ts) and sets
   * `capabilities.conditionalWrites` to the answer. Writes and deletes one scratch
   * key. Throws ProviderError 'Unavailable' if the backend cannot be reached.
   */
  async probeCapabilities(): Promise<ProbeResult> {
    const saved = this.#capabilities;
    const result = await probeConditionalWrites({
      put: (key, body, options) => this.put(key, body, options),
      putIfMatch: (key, body, value) => {
        const request: RequestBody = { kind: 'bytes', chunks: [body], length: body.length };
        return this.#putOnce(key, request, sha256Hex([body]), { rawIfMatch: value });
      },
      delete: (key) => this.delete(key),
    });
    this.#capabilities = { ...saved, conditionalWrites: result.conditionalWrites };
    if (result.ifMatch) this.#ifMatch = { ...result.ifMatch };
    return result;
  }

  /** How If-Match is sent: as the probe found, or the RFC 9110 quoted form if not probed. */
  get ifMatchForm(): IfMatchForm {
    return { ...this.#ifMatch };
  }

  #path(key: string): string {
    return `/${this.#bucket}/${this.#prefix}${key}`;
  }

  async put(key: string, body: BlobBody, options: PutOptions = {}): Promise<BlobInfo> {
    let request: RequestBody;
    let payloadHash = UNSIGNED_PAYLOAD;
    try {
      keyBytes(key);
      checkContentLength(key, options.contentLength);
      throwIfAborted(options.signal, key);
      if (
        !isReplayable(body) &&
        (options.contentLength === undefined || options.contentLength > this.#singlePutMaxBytes)
      ) {
        return await this.#putStream(key, body, options);
      }
      if (isReplayable(body)) {
        const chunks = body instanceof Uint8Array ? [body] : body;
        const length = chunks.reduce((n, c) => n + c.byteLength, 0);
        if (options.contentLength !== undefined && options.contentLength !== length) {
          throw new ProviderError(
            'LengthMismatch',
            `${key}: body has ${length} bytes, contentLength says ${options.contentLength}`
          );
        }
        if (length > this.#singlePutMaxBytes) {
          // Replayable bodies are already in memory: cutting them into parts costs nothing.
          return await this.#putStream(key, chunks, { ...options, contentLength: length });
        }
        request = { kind: 'bytes', chunks, length };
        if (length <= SIGNED_PAYLOAD_MAX_BYTES) payloadHash = sha256Hex(chunks);
      } else {
        request = {
          kind: 'stream',
          source: checkedChunks(body, key, options.contentLength, options.signal),
          length: options.contentLength!,
        };
      }
    } catch (err) {
      discardBody(body);
      throw err;
    }
    try {
      return await this.#putOnce(key, request, payloadHash, options);
    } finally {
      if (request.kind === 'stream') discardBody(body); // a no-op once fully read
    }
  }

  /**
   * A body a single PUT cannot carry as it is: a stream of unknown length, or one over
   * the single-PUT limit. Reads it one part at a time (PartReader): if it ends within
   * one part it goes out as one PUT; otherwise as a multipart upload (multipart.ts says
   * which blobs may take that path). A replace (`ifMatch`) is never multipart: the anchor
   * is small, and S3 cannot make a multipart completion conditional on the current etag
   * everywhere, so such a body is refused ('LengthMismatch') rather than written unsafely.
   */
  async #putStream(key: string, body: BlobBody, options: PutOptions): Promise<BlobInfo> {
    const size = options.contentLength;
    // Sized bodies: parts large enough to fit MAX_PARTS, rounded up to whole MiB.
    const partBytes =
      size === undefined
        ? this.#partBytes
        : Math.max(this.#partBytes, Math.ceil(size / MAX_PARTS / MIB) * MIB);
    const reader = new PartReader(checkedChunks(body, key, size, options.signal), partBytes);
    try {
      await reader.fill();
      if (reader.whole && reader.held <= this.#singlePutMaxBytes) {
        const chunks = (await reader.next()) ?? [];
        const length = chunks.reduce((n, c) => n + c.byteLength, 0);
        const payloadHash =
          length <= SIGNED_PAYLOAD_MAX_BYTES ? sha256Hex(chunks) : UNSIGNED_PAYLOAD;
        return await this.#putOnce(key, { kind: 'bytes', chunks, length }, payloadHash, options);
      }
      if (options.ifMatch !== undefined) {
        throw new ProviderError(
          'LengthMismatch',
          `${key}: a conditional replace (ifMatch) must fit one PUT (at most ${this.#partBytes} ` +
            'bytes when its length is not given)'
        );
      }
      return await putMultipart({ client: this.#client, path: this.#path(key), key }, reader, {
        ...(options.ifNoneMatch ? { ifNoneMatch: options.ifNoneMatch } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } finally {
      await reader.close().catch(() => {});
    }
  }

  /**
   * The If-Match header value for `etag`, in the form the backend compares (probe.ts).
   * Where the backend compares by prefix, an etag that is not 32 hex digits (never the
   * anchor's) is first checked against a HEAD: a different or absent blob fails here;
   * an equal one is sent, and the prefix comparison can then accept only a blob whose
   * etag is this one or a leading part of it, which a 32-hex MD5 etag could be only by
   * a hash collision.
   */
  async #ifMatchHeader(key: string, etag: string): Promise<string> {
    if (this.#ifMatch.prefixCompare && !FIXED_LENGTH_ETAG.test(etag)) {
      let current: string | undefined;
      try {
        current = (await this.head(key)).etag;
      } catch (err) {
        if (!(err instanceof ProviderError && err.code === 'NotFound')) throw err;
      }
      if (current !== etag)
        throw new ProviderError(
          'PreconditionFailed',
          `${key}: etag is ${current ?? 'absent'}, not ${etag}`
        );
    }
    return this.#ifMatch.quoted ? `"${etag}"` : etag;
  }

  /**
   * One PUT. A conditional PUT is retried only when it surely was not applied; any other
   * failure of it (a 500, a lost connection: RGW answers the loser of an If-Match race
   * with 500) surfaces as 'Unavailable' — outcome unknown — never as a success or as
   * PreconditionFailed, so the caller reads the state back before concluding.
   */
  async #putOnce(
    key: string,
    request: RequestBody,
    payloadHash: string,
    options: PutOptions & { rawIfMatch?: string }
  ): Promise<BlobInfo> {
    const conditional =
      options.ifNoneMatch === '*' ||
      options.ifMatch !== undefined ||
      options.rawIfMatch !== undefined;
    const headers: Record<string, string> = { 'content-type': 'application/octet-stream' };
    if (options.ifNoneMatch === '*') headers['if-none-match'] = '*';
    if (options.ifMatch !== undefined)
      headers['if-match'] = await this.#ifMatchHeader(key, options.ifMatch);
    if (options.rawIfMatch !== undefined) headers['if-match'] = options.rawIfMatch;
    let res;
    try {
      res = await this.#client.request({
        method: 'PUT',
        path: this.#path(key),
        headers,
        body: request,
        payloadHash,
        signal: options.signal,
        // A replace without a compare is retried only while no attempt may have been received:
        // a retry that succeeds would leave an unanswered attempt free to land after the next
        // replace (PutOptions.replaces); failing instead reports it (mayLand).
        retry: conditional || options.replaces ? 'not-applied' : 'always',
      });
    } catch (err) {
      if (conditional && err instanceof ProviderError && err.code === 'Unavailable')
        throw new ProviderError('Unavailable', `${err.message} (conditional put: outcome unknown)`, {
          cause: err.cause ?? err,
        });
      throw err;
    }
    if (res.status >= 300) {
      if (conditional && res.status === 409)
        throw new ProviderError(
          'PreconditionFailed',
          `${key}: conditional write conflict (409 ${res.error?.code ?? ''})`
        );
      // S3 answers If-Match on an absent key with 404 NoSuchKey: for a compare-and-swap
      // that is simply a failed precondition.
      const ifMatch = options.ifMatch ?? options.rawIfMatch;
      if (ifMatch !== undefined && res.status === 404 && res.error?.code !== 'NoSuchBucket')
        throw new ProviderError('PreconditionFailed', `${key}: absent (ifMatch ${ifMatch})`);
      const err = errorFromResponse(res, `${key}: put`);
      if (conditional && err.code !== 'PreconditionFailed' && res.status >= 500)
        throw new ProviderError('Unavailable', `${err.message} (conditional put: outcome unknown)`);
      throw err;
    }
    res.body.resume();
    return infoFromHeaders(res, key, request.length);
  }

  async get(key: string, options: GetOptions = {}): Promise<GetResult> {
    keyBytes(key);
    if (options.range) validateRange(options.range, key);
    const res = await this.#client.request({
      method: 'GET',
      path: this.#path(key),
      headers: options.range ? { range: rangeHeader(options.range) } : {},
      signal: options.signal,
      retry: 'always',
    });
    const what = `${key}: get`;
    if (res.status === 416) {
      // S3 refuses any range of an empty object; the contract returns nothing instead.
      const total = parseContentRange(header(res, 'content-range'))?.total;
      const info = total === undefined || total === 0 ? await this.head(key) : undefined;
      if (info && info.size === 0) return { info, start: 0, length: 0, body: Readable.from([]) };
      throw errorFromResponse(res, what);
    }
    if (res.status >= 300) throw errorFromResponse(res, what);
    try {
      const sent = contentLength(res, what);
      const cr = res.status === 206 ? parseContentRange(header(res, 'content-range')) : undefined;
      if (res.status === 206 && (!cr || cr.start === undefined))
        throw new ProviderError('Io', `${what}: 206 without a usable Content-Range`);
      const size = cr ? cr.total : sent;
      const info = infoFromHeaders(res, key, size);
      const { start, length } = resolveRange(size, options.range, key);
      const sentStart = cr?.start ?? 0;
      if (length === 0) {
        discardResponse(res.body);
        return { info, start, length, body: Readable.from([]) };
      }
      if (sentStart > start || sentStart + sent < start + length) {
        throw new ProviderError(
          'Io',
          `${what}: server sent bytes ${sentStart}+${sent}, asked for ${start}+${length}`
        );
      }
      const exact = sentStart === start && sent === length;
      return { info, start, length, body: ownBody(res.body, start - sentStart, length, exact) };
    } catch (err) {
      discardResponse(res.body);
      throw err;
    }
  }

  async head(key: string): Promise<BlobInfo> {
    keyBytes(key);
    const res = await this.#client.request({
      method: 'HEAD',
      path: this.#path(key),
      retry: 'always',
    });
    if (res.status >= 300) throw errorFromResponse(res, `${key}: head`);
    res.body.resume();
    return infoFromHeaders(res, key, contentLength(res, `${key}: head`));
  }

  async list(options: ListOptions = {}): Promise<ListPage> {
    const limit = listLimit(options.limit);
    const query: [string, string][] = [
      ['list-type', '2'],
      ['encoding-type', 'url'],
      ['max-keys', String(limit)],
      ['prefix', this.#prefix + (options.prefix ?? '')],
    ];
    if (options.startAfter !== undefined)
      query.push(['start-after', this.#prefix + options.startAfter]);
    const res = await this.#client.request({
      method: 'GET',
      path: `/${this.#bucket}`,
      query,
      signal: options.signal,
      retry: 'always',
    });
    if (res.status >= 300) throw errorFromResponse(res, 'list');
    const xml = await readText(res.body, LIST_RESPONSE_MAX_BYTES, 'list');
    const { items, truncated } = parseListResult(xml, this.#prefix, limit);
    if (truncated && items.length === 0)
      throw new ProviderError('Io', 'list: truncated page without keys');
    return truncated ? { items, next: items[items.length - 1].key } : { items };
  }

  async delete(key: string): Promise<void> {
    keyBytes(key);
    const res = await this.#client.request({
      method: 'DELETE',
      path: this.#path(key),
      retry: 'always',
    });
    if (res.status >= 300 && res.status !== 404) throw errorFromResponse(res, `${key}: delete`);
    res.body.resume();
  }

  async close(): Promise<void> {
    await this.#client.close();
  }
}

/**
 * Creates an s3 provider (no request is made unless `conditionalWrites: 'probe'`,
 * which runs probeCapabilities() and throws its errors). Throws RangeError for an
 * invalid bucket name.
 */
export async function createS3Provider(options: S3ProviderOptions): Promise<S3Provider> {
  const provider = new S3Provider(options);
  if (options.conditionalWrites === 'probe') {
    try {
      await provider.probeCapabilities();
    } catch (err) {
      await provider.close();
      throw err;
    }
  }
  return provider;
}
