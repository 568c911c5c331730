/** @module Shared helpers for the index tests: seeded keys with tricky Unicode, a reference order. */
import { MemoryProvider } from '../../../src/provider/memory/index.js';
import type { Provider } from '../../../src/provider/provider.js';
import { prng } from '../../support/random.js';

/**
 * Characters chosen to hit every UTF-8 length and the places where UTF-16 order and UTF-8
 * order disagree: controls, ASCII, 2-byte, 3-byte below and above the surrogate range
 * (U+E000..U+FFFF sort *before* pairs in JS but *after* them in bytes), and pairs.
 */
export const TRICKY = [
  '\u0000',
  '\u0001',
  '\u001f',
  ' ',
  '/',
  '0',
  '9',
  'A',
  'a',
  'z',
  '~',
  '\u007f',
  '\u0080',
  'é',
  '\u07ff',
  '\u0800',
  '中',
  '\ud7ff',
  '\ue000',
  '\uf8ff',
  '\ufffd',
  '\uffff',
  '\u{10000}',
  '😀',
  '\u{10ffff}',
];

/** A random string of 0..maxLength characters; mostly ASCII when `asciiBias` is high. */
export function randomKey(next: () => number, maxLength = 12, asciiBias = 0.5): string {
  const n = next() % (maxLength + 1);
  let s = '';
  for (let i = 0; i < n; i++) {
    if ((next() % 1000) / 1000 < asciiBias) s += String.fromCharCode(0x61 + (next() % 4));
    else s += TRICKY[next() % TRICKY.length];
  }
  return s;
}

/** The reference order: Buffer.compare of the UTF-8 encodings. */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** `count` distinct random keys, sorted by byte order. */
export function sortedKeys(seed: number, count: number, maxLength = 12, asciiBias = 0.5): string[] {
  const next = prng(seed);
  const set = new Set<string>();
  while (set.size < count) set.add(randomKey(next, maxLength, asciiBias));
  return [...set].sort(byteOrder);
}

/** A deterministic value for `key`, tagged with `tag` (e.g. the source that wrote it). */
export function valueOf(key: string, tag = 0): Uint8Array {
  return new TextEncoder().encode(`${tag}:${key}`);
}

/** Keys shaped like an S3 bucket: prefix directories and zero-padded numbers, sorted. */
export function bucketKeys(count: number, dirs = 50): string[] {
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    keys.push(
      `backups/host-${String(i % dirs).padStart(3, '0')}/data/${String(i).padStart(9, '0')}.pack`
    );
  }
  return keys.sort(byteOrder);
}

export { prng };

/** A memory provider that counts gets (and the bytes they ask for) and bytes pulled by puts. */
export class CountingProvider extends MemoryProvider {
  gets = 0;
  bytesRead = 0;
  /** Bytes of put bodies consumed so far (updated as the provider pulls each chunk). */
  bytesPulled = 0;

  override async get(...args: Parameters<Provider['get']>) {
    const res = await super.get(...args);
    this.gets++;
    this.bytesRead += res.length;
    return res;
  }

  override async put(
    key: string,
    body: Parameters<Provider['put']>[1],
    options?: Parameters<Provider['put']>[2]
  ) {
    if (body instanceof Uint8Array || Array.isArray(body)) return super.put(key, body, options);
    const self = this;
    async function* counted() {
      for await (const chunk of body as AsyncIterable<Uint8Array>) {
        self.bytesPulled += chunk.length;
        yield chunk;
      }
    }
    return super.put(key, counted(), options);
  }

  /** The stored bytes of a blob (a copy). */
  async bytesOf(key: string): Promise<Uint8Array> {
    const res = await super.get(key);
    const chunks: Buffer[] = [];
    for await (const c of res.body) chunks.push(c as Buffer);
    return new Uint8Array(Buffer.concat(chunks));
  }
}
