/**
 * @module Request bodies: turning a BlobBody into checked chunks.
 *
 * Providers pull chunks one at a time (never faster than they can store them), so a
 * stream body is read with backpressure. `contentLength`, when given, is enforced
 * without ever passing on a byte that would make a wrong-length body look complete.
 */
import { Readable } from 'node:stream';
import { ProviderError, type BlobBody } from './provider.js';

/** True for bodies that can be read more than once (bytes or a list of byte chunks). */
export function isReplayable(body: BlobBody): body is Uint8Array | readonly Uint8Array[] {
  return body instanceof Uint8Array || Array.isArray(body);
}

/** Byte length of a replayable body; undefined for streams. */
export function replayableLength(body: BlobBody): number | undefined {
  if (body instanceof Uint8Array) return body.byteLength;
  if (Array.isArray(body))
    return (body as readonly Uint8Array[]).reduce((n, c) => n + c.byteLength, 0);
  return undefined;
}

/** ProviderError 'Aborted' for a signal. */
export function abortError(signal: AbortSignal, key: string): ProviderError {
  return new ProviderError('Aborted', `${key}: aborted`, { cause: signal.reason });
}

/** Throws 'Aborted' if the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined, key: string): void {
  if (signal?.aborted) throw abortError(signal, key);
}

function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  key: string
): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortError(signal, key));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal, key));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => (signal.removeEventListener('abort', onAbort), resolve(v)),
      (e) => (signal.removeEventListener('abort', onAbort), reject(e))
    );
  });
}

function sourceOf(body: BlobBody): AsyncIterable<unknown> | Iterable<Uint8Array> {
  if (body instanceof Uint8Array) return [body];
  if (Array.isArray(body)) return body as readonly Uint8Array[];
  return body as AsyncIterable<unknown>;
}

/**
 * Yields the chunks of `body` in order, pulling the next only when the consumer
 * asks. Empty chunks are skipped. Enforces `expectedLength` (when defined): more
 * bytes than announced fail before the surplus is yielded, and the chunk that
 * completes the length is held back until the source proves it has ended, so a
 * consumer never sees a complete-looking prefix of an over-long body. Throws
 * ProviderError 'LengthMismatch', 'Aborted' (signal), or 'Io' (a stream error or a
 * non-byte chunk). Destroys a stream source when stopped early.
 */
export async function* checkedChunks(
  body: BlobBody,
  key: string,
  expectedLength: number | undefined,
  signal?: AbortSignal
): AsyncGenerator<Uint8Array> {
  const source = sourceOf(body);
  const iterator =
    Symbol.asyncIterator in source
      ? (source as AsyncIterable<unknown>)[Symbol.asyncIterator]()
      : (source as Iterable<Uint8Array>)[Symbol.iterator]();
  let total = 0;
  let held: Uint8Array | undefined;
  let finished = false;
  try {
    for (;;) {
      throwIfAborted(signal, key);
      let step: IteratorResult<unknown>;
      try {
        step = await raceAbort(Promise.resolve(iterator.next()), signal, key);
      } catch (err) {
        if (err instanceof ProviderError) throw err;
        throw new ProviderError(
          'Io',
          `${key}: reading the body failed: ${(err as Error)?.message}`,
          { cause: err }
        );
      }
      if (step.done) break;
      const chunk = step.value;
      if (!(chunk instanceof Uint8Array))
        throw new ProviderError('Io', `${key}: body yielded a non-byte chunk`);
      if (chunk.byteLength === 0) continue;
      total += chunk.byteLength;
      if (expectedLength !== undefined) {
        if (total > expectedLength) {
          throw new ProviderError(
            'LengthMismatch',
            `${key}: body is longer than contentLength ${expectedLength}`
          );
        }
        if (total === expectedLength) {
          held = chunk;
          continue;
        }
      }
      yield chunk;
    }
    if (expectedLength !== undefined && total !== expectedLength) {
      throw new ProviderError(
        'LengthMismatch',
        `${key}: body has ${total} bytes, contentLength says ${expectedLength}`
      );
    }
    if (held) yield held;
    finished = true;
  } finally {
    if (!finished) {
      if (body instanceof Readable) body.destroy();
      else await iterator.return?.();
    }
  }
}

/** Collects a body into one buffer (memory provider, small bodies). Throws as checkedChunks. */
export async function collectBody(
  body: BlobBody,
  key: string,
  expectedLength: number | undefined,
  signal?: AbortSignal
): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of checkedChunks(body, key, expectedLength, signal)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Releases a body that will not be read (destroys a stream; no-op for bytes). */
export function discardBody(body: BlobBody): void {
  if (body instanceof Readable) body.destroy();
  else if (!isReplayable(body)) {
    const it = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    void Promise.resolve(it.return?.()).catch(() => {});
  }
}
