/**
 * @module One S3 endpoint: signed requests over a keep-alive undici Pool, with retries.
 *
 * Knows HTTP, SigV4 and the retry policy; knows nothing of blobs. Error answers
 * (status >= 300) come back with their body already read (capped) and parsed into
 * `error`; retryable answers and transport failures are retried per the request's
 * `retry` class and, once the budget is spent, thrown as ProviderError 'Unavailable'.
 */
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { signRequest, type Credentials } from '../../sigv4/index.js';
import { ProviderError, withMayLand } from '../provider.js';
import { coalesceChunks } from './coalesce.js';
import {
  backoffDelay,
  DEFAULT_RETRY,
  isNotAppliedStatus,
  isNotSentError,
  isRetryableStatus,
  isTransientError,
  type RetryPolicy,
} from './retry.js';
import { childText, parseXml } from './xml.js';

/** Error bodies are a few hundred bytes; read at most this much of one. */
const ERROR_BODY_MAX_BYTES = 64 * 1024;

export interface S3ClientOptions {
  /** Origin of the endpoint, e.g. `http://127.0.0.1:9000`. */
  endpoint: string;
  region: string;
  credentials: Credentials;
  /** Sockets kept open to the endpoint (default 16). */
  connections?: number;
  /** Wait for response headers, ms (default 60 s). */
  headersTimeoutMs?: number;
  /** Longest silence while receiving a body, ms (default 60 s); a consumer paused longer loses the stream. */
  bodyTimeoutMs?: number;
  /** TCP/TLS connect timeout, ms (default 10 s). */
  connectTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Called before each retry sleep (logging, tests). */
  onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  method: string;
  path: string;
  /** The attempt that failed (1 = the first). */
  attempt: number;
  delayMs: number;
  reason: string;
}

/**
 * Which failures a request may retry:
 * - `always`: idempotent requests (GET, HEAD, DELETE, unconditional PUT of a replayable body);
 * - `not-applied`: conditional PUTs — only when the request surely had no effect
 *   (never sent, or throttled), since a retried winner would report its own success
 *   as PreconditionFailed;
 * - `never`.
 */
export type RetryClass = 'always' | 'not-applied' | 'never';

export type RequestBody =
  | { kind: 'bytes'; chunks: readonly Uint8Array[]; length: number }
  | { kind: 'stream'; source: AsyncIterable<Uint8Array>; length: number };

export interface S3Request {
  method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE';
  /** Decoded absolute path: `/bucket/key`. */
  path: string;
  query?: [string, string][];
  headers?: Record<string, string>;
  body?: RequestBody;
  /** x-amz-content-sha256: hex SHA-256 of the body, or UNSIGNED-PAYLOAD (default: empty body hash). */
  payloadHash?: string;
  signal?: AbortSignal;
  retry: RetryClass;
}

export interface S3Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body; for error answers it is already consumed (empty). */
  body: Readable;
  /** Parsed `<Error>` of an answer with status >= 300 (code may be absent, e.g. HEAD). */
  error?: { code?: string; message?: string };
  /** An error answer to an unguarded write of which an attempt may still be pending at the
   * server (this one, a server error, or an earlier one): it may yet be applied
   * (ProviderError.mayLand; errorFromResponse carries it). */
  mayLand?: true;
}

/** The value of a single-valued response header. */
export function header(res: S3Response, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Reads a body as UTF-8 up to `max` bytes; throws ProviderError 'Io' when larger. */
export async function readText(body: Readable, max: number, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > max) {
      body.on('error', () => {});
      body.destroy();
      throw new ProviderError('Io', `${what}: response larger than ${max} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string } };
  return `${e?.code ?? e?.cause?.code ?? 'error'}: ${e?.message ?? String(err)}`;
}

/**
 * True for a request that changes something without a precondition the server checks when it
 * applies it (If-Match, If-None-Match): applied late, such a write takes effect whatever
 * happened in between. A guarded one applied late takes effect only if nothing changed since
 * it was sent, which the next guarded write to the same key detects.
 */
export function unguardedWrite(req: Pick<S3Request, 'method' | 'headers'>): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return false;
  const h = req.headers ?? {};
  return !('if-match' in h) && !('if-none-match' in h);
}

export class S3Client {
  readonly #pool: Pool;
  readonly #host: string;
  readonly #options: S3ClientOptions;
  readonly #retry: RetryPolicy;

  constructor(options: S3ClientOptions) {
    const url = new URL(options.endpoint);
    this.#host = url.host;
    this.#options = options;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#pool = new Pool(url.origin, {
      connections: options.connections ?? 16,
      keepAliveTimeout: 10_000,
      headersTimeout: options.headersTimeoutMs ?? 60_000,
      bodyTimeout: options.bodyTimeoutMs ?? 60_000,
      connect: { timeout: options.connectTimeoutMs ?? 10_000 },
    });
  }

  /**
   * Sends `req` (re-signed on every attempt), retrying per its class. Returns 2xx
   * answers with the body unread, other answers with `error` filled in. Throws
   * ProviderError: 'Aborted' (signal), 'Unavailable' (retry budget spent on transient
   * failures), 'Io' (other transport failures), or a body's own error
   * (LengthMismatch, Io) from a stream body. Such an error is marked `mayLand` when the
   * request changes something unconditionally (see {@link unguardedWrite}) and an attempt
   * of it may still be pending at the server: it reached it without being answered (any
   * transport failure but those that prove it was never sent), or it was answered with a
   * server error other than throttling (a 504 from a gateway whose backend still works on
   * it, a 500 S3 documents as applied or not). The server may still apply it, after this
   * error and after whatever the caller does next.
   */
  async request(req: S3Request): Promise<S3Response> {
    const what = `${req.method} ${req.path}`;
    let streamTouched = false;
    // An attempt may still be pending at the server (unanswered, or answered with a server
    // error): the write may be applied later, so every error from here on says so (mayLand).
    let pending = false;
    const unguarded = unguardedWrite(req);
    const late = (): { mayLand?: true } => (pending && unguarded ? { mayLand: true } : {});
    // A body's own error (thrown as it is) after an attempt that may still be pending.
    const marked = (err: ProviderError): ProviderError => (pending && unguarded ? withMayLand(err) : err);
    for (let attempt = 1; ; attempt++) {
      if (req.signal?.aborted)
        throw new ProviderError('Aborted', `${what}: aborted`, { cause: req.signal.reason, ...late() });
      let retryReason: string;
      let retryAfter: string | undefined;
      let lastError: ProviderError;
      try {
        const res = await this.#send(req, () => (streamTouched = true));
        if (res.status < 300) return res;
        // A server error other than throttling or 503 (a server or balancer refusing work) does
        // not say the request was not applied, nor that it will not be: a gateway that timed out
        // (502, 504) may still have the backend working on it, and S3 documents 500
        // InternalError as "may or may not have been applied".
        if (res.status >= 500 && res.status !== 503 && !isNotAppliedStatus(res.status, res.error?.code)) pending = true;
        if (pending && unguarded) res.mayLand = true;
        if (!isRetryableStatus(res.status, res.error?.code)) return res;
        retryReason = `HTTP ${res.status} ${res.error?.code ?? ''}`.trim();
        retryAfter = header(res, 'retry-after');
        lastError = new ProviderError(
          'Unavailable',
          `${what}: ${retryReason} ${res.error?.message ?? ''}`.trim(),
          late()
        );
        const allowed =
          !streamTouched &&
          (req.retry === 'always' ||
            (req.retry === 'not-applied' && isNotAppliedStatus(res.status, res.error?.code)));
        if (!allowed) throw lastError;
      } catch (err) {
        if (err instanceof ProviderError) throw marked(err);
        // Whatever failed here, the request may have reached the server unless the error
        // proves it was never sent.
        const notSent = isNotSentError(err);
        if (!notSent) pending = true;
        if (
          req.signal?.aborted ||
          (err as Error)?.name === 'AbortError' ||
          (err as { code?: string })?.code === 'UND_ERR_ABORTED'
        ) {
          throw new ProviderError('Aborted', `${what}: aborted`, { cause: err, ...late() });
        }
        const cause = (err as { cause?: unknown })?.cause;
        if (cause instanceof ProviderError) throw marked(cause);
        if (!isTransientError(err))
          throw new ProviderError('Io', `${what}: ${describe(err)}`, {
            cause: err,
            retryable: false,
            ...late(),
          });
        retryReason = describe(err);
        lastError = new ProviderError('Unavailable', `${what}: ${retryReason}`, { cause: err, ...late() });
        const allowed =
          !streamTouched && (req.retry === 'always' || (req.retry === 'not-applied' && notSent));
        if (!allowed) throw lastError;
      }
      if (attempt >= this.#retry.attempts) {
        throw new ProviderError(
          'Unavailable',
          `${lastError.message} (gave up after ${attempt} attempts)`,
          { cause: lastError.cause, ...late() }
        );
      }
      const delayMs = backoffDelay(this.#retry, attempt, retryAfter);
      this.#options.onRetry?.({
        method: req.method,
        path: req.path,
        attempt,
        delayMs,
        reason: retryReason,
      });
      try {
        await sleep(delayMs, undefined, { signal: req.signal });
      } catch (err) {
        throw new ProviderError('Aborted', `${what}: aborted`, { cause: err, ...late() });
      }
    }
  }

  async #send(req: S3Request, onStreamRead: () => void): Promise<S3Response> {
    const headers: Record<string, string> = { host: this.#host, ...req.headers };
    let body: Uint8Array | Readable | undefined;
    if (req.body) {
      headers['content-length'] = String(req.body.length);
      if (req.body.kind === 'bytes') {
        const chunks = req.body.chunks;
        // Many small chunks (a commit blob's entries) go out as a few merged writes (coalesce.ts).
        body =
          chunks.length === 1
            ? chunks[0]
            : Readable.from(coalesceChunks(chunks), { objectMode: false });
      } else {
        const source = req.body.source;
        body = Readable.from(
          (async function* () {
            onStreamRead();
            yield* source;
          })(),
          { objectMode: false }
        );
      }
    }
    const signed = signRequest(
      {
        method: req.method,
        path: req.path,
        query: req.query,
        headers,
        payloadHash: req.payloadHash,
      },
      { credentials: this.#options.credentials, region: this.#options.region, service: 's3' }
    );
    const res = await this.#pool.request({
      method: req.method,
      path: signed.encodedPath + (signed.encodedQuery ? `?${signed.encodedQuery}` : ''),
      headers: Object.assign({}, headers, signed.headers),
      body,
      signal: req.signal,
    });
    const out: S3Response = { status: res.statusCode, headers: res.headers, body: res.body };
    if (res.statusCode >= 300) {
      if (req.method === 'HEAD') res.body.resume();
      const text =
        req.method === 'HEAD'
          ? ''
          : await readText(res.body, ERROR_BODY_MAX_BYTES, `${req.method} ${req.path}`).catch(
              () => ''
            );
      out.error = {};
      if (text.trim().startsWith('<')) {
        try {
          const root = parseXml(text);
          out.error = { code: childText(root, 'Code'), message: childText(root, 'Message') };
        } catch {
          // not XML after all: keep the status alone
        }
      }
    }
    return out;
  }

  /** Closes the pool's sockets; pending requests fail. */
  async close(): Promise<void> {
    await this.#pool.close();
  }
}
