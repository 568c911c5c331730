/**
 * @module The store's error boundary: nothing but StoreError (and the caller's own errors)
 * leaves the Store API. A provider failure that reaches a Store method (a blob read or write
 * that failed, a body stream that broke mid-read) is wrapped here in a StoreError:
 *
 *   ProviderError, retryable (the backend is unavailable)  -> StoreError 'Unavailable'
 *   ProviderError 'Corrupt' (a stored blob is damaged)     -> StoreError 'Corrupt'
 *   ProviderError, not retryable (I/O, length mismatch...) -> StoreError 'Io'
 *
 * with the provider error as its `cause`, so the S3 layer maps store errors only and never
 * reaches around the store into the provider layer. Any other error passes unchanged: an
 * S3Error thrown by a caller's callback (updateVersion's `fn`) must reach its caller as is.
 */
import { ProviderError } from '../provider/provider.js';
import { StoreError } from './errors.js';

/** `err` as the store reports it: a ProviderError wrapped (see the module header), else `err`. */
export function storeErrorOf(err: unknown): unknown {
  if (!(err instanceof ProviderError)) return err;
  return new StoreError(err.retryable ? 'Unavailable' : err.code === 'Corrupt' ? 'Corrupt' : 'Io', err.message, { cause: err });
}

function rethrow(err: unknown): never {
  throw storeErrorOf(err);
}

/**
 * `body` with provider errors of its reads wrapped. One `.then` per chunk (no async
 * generator hop); `return` is passed through so an abandoned stream still releases its source.
 */
export function guardBody(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
      const it = body[Symbol.asyncIterator]();
      const guarded: AsyncIterator<Uint8Array> = {
        next: () => it.next().then(undefined, rethrow),
      };
      if (it.return) guarded.return = (value?: unknown) => it.return!(value).then(undefined, rethrow);
      return guarded;
    },
  };
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

/** What a guarded method does to a successful result: e.g. guard a GetResult's body. */
export type ResultGuard = (result: unknown) => unknown;

/**
 * Wraps every method of `proto` (a class prototype; the constructor and accessors left
 * alone) so that a ProviderError it throws or rejects with becomes a StoreError, and, for
 * the methods named in `results`, passes each successful result through its guard.
 * Mutates `proto`; call once, at module load.
 */
export function guardMethods(proto: object, results: Readonly<Record<string, ResultGuard>> = {}): void {
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (name === 'constructor') continue;
    const desc = Object.getOwnPropertyDescriptor(proto, name)!;
    if (typeof desc.value !== 'function') continue;
    const fn = desc.value as (...args: unknown[]) => unknown;
    const after = results[name];
    const guarded = function (this: unknown, ...args: unknown[]): unknown {
      let out: unknown;
      try {
        out = fn.apply(this, args);
      } catch (err) {
        throw storeErrorOf(err);
      }
      if (isThenable(out)) return (out as Promise<unknown>).then(after, rethrow);
      return after ? after(out) : out;
    };
    Object.defineProperty(guarded, 'name', { value: name });
    Object.defineProperty(proto, name, { ...desc, value: guarded });
  }
}

/** The result guard of getObject: its body's reads are guarded too. */
export function guardGetResult(result: unknown): unknown {
  const r = result as { body?: AsyncIterable<Uint8Array> };
  if (r.body) r.body = guardBody(r.body);
  return r;
}
