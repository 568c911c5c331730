/** Shared test helpers: seeded randomness, body builders, error assertions. */
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect } from 'vitest';
import {
  getBytes,
  ProviderError,
  type Provider,
  type ProviderErrorCode,
} from '../../src/provider/provider.js';

/** mulberry32: small, fast, good enough to make reproducible test data. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` reproducible bytes for `seed`. */
export function bytes(n: number, seed = n): Buffer {
  const rand = prng(seed);
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) out[i] = (rand() * 256) | 0;
  return out;
}

/** Splits bytes into chunks of varying sizes (1..max), seeded. */
export function chunked(data: Uint8Array, max: number, seed = 1): Uint8Array[] {
  const rand = prng(seed);
  const out: Uint8Array[] = [];
  for (let off = 0; off < data.length;) {
    const n = Math.min(data.length - off, 1 + Math.floor(rand() * max));
    out.push(data.subarray(off, off + n));
    off += n;
  }
  return out;
}

/** An async iterable (not a Readable) over chunks. */
export async function* asyncChunks(chunks: readonly Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const c of chunks) {
    await Promise.resolve();
    yield c;
  }
}

/** A pull-based Readable over chunks (produces only when read). */
export function readableOf(chunks: readonly Uint8Array[]): Readable {
  let i = 0;
  return new Readable({
    read() {
      this.push(i < chunks.length ? chunks[i++] : null);
    },
  });
}

export async function readAll(provider: Provider, key: string): Promise<Buffer> {
  return Buffer.from(await getBytes(provider, key));
}

/** Asserts that `promise` rejects with ProviderError `code`; returns the error. */
export async function expectCode(
  promise: Promise<unknown>,
  code: ProviderErrorCode
): Promise<ProviderError> {
  try {
    await promise;
  } catch (err) {
    expect(err, String(err)).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).code, String(err)).toBe(code);
    return err as ProviderError;
  }
  throw new Error(`expected ProviderError ${code}, but the call succeeded`);
}

/** `global.gc`, made available without a command-line flag (for memory bounds). */
export function exposeGc(): () => void {
  setFlagsFromString('--expose_gc');
  return runInNewContext('gc') as () => void;
}

/** UTF-8 byte order, as providers list. */
export function byteSorted(keys: Iterable<string>): string[] {
  return [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/** Lists everything under `prefix` page by page. */
export async function listAll(
  provider: Provider,
  prefix: string,
  limit: number,
  etags = true
): Promise<string[]> {
  const keys: string[] = [];
  let startAfter: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await provider.list({ prefix, startAfter, limit, ...(etags ? {} : { etags }) });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    keys.push(...page.items.map((i) => i.key));
    if (!page.next) return keys;
    expect(page.items.length).toBe(limit);
    expect(page.next).toBe(page.items[page.items.length - 1].key);
    startAfter = page.next;
  }
  throw new Error('listing did not end');
}
