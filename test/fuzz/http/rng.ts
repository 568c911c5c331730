/**
 * @module Seeded choices for the HTTP fuzzer. Every case draws from its own generator,
 * derived from (seed, case index), so a case can be regenerated alone (`--case N`) whatever
 * ran before it and however many ran concurrently.
 */
import { prng } from '../../support/random.js';

export class Rng {
  readonly #next: () => number;

  constructor(seed: number, stream = 0) {
    // Mix the two numbers so that neighbouring cases do not start from similar states.
    let x = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul((stream + 1) >>> 0, 0x85ebca77)) >>> 0;
    x = Math.imul(x ^ (x >>> 16), 0x7feb352d) >>> 0;
    this.#next = prng(x || 1);
    for (let i = 0; i < 4; i++) this.#next();
  }

  /** A uint32. */
  u32(): number {
    return this.#next();
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor((this.#next() / 2 ** 32) * (hi - lo + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.#next() / 2 ** 32 < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }

  /** One of `choices`, drawn by weight. */
  weighted<T>(choices: readonly (readonly [number, T])[]): T {
    const total = choices.reduce((a, [w]) => a + w, 0);
    let r = this.int(0, total - 1);
    for (const [w, v] of choices) {
      if (r < w) return v;
      r -= w;
    }
    return choices[choices.length - 1]![1];
  }

  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i += 4) {
      const w = this.#next();
      for (let k = 0; k < 4 && i + k < n; k++) out[i + k] = (w >>> (8 * k)) & 0xff;
    }
    return out;
  }

  /** A size skewed to small values, at most `max`. */
  size(max: number): number {
    const r = this.#next() / 2 ** 32;
    return Math.min(max, Math.floor(Math.pow(r, 3) * (max + 1)));
  }

  /** A string of `n` characters from `alphabet`. */
  text(n: number, alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[this.int(0, alphabet.length - 1)];
    return s;
  }

  /** An "interesting" string: empty, huge, control characters, Unicode, escapes, XML. */
  nasty(): string {
    return this.pick<() => string>([
      () => '',
      () => ' ',
      () => this.text(this.int(1, 40)),
      () => 'x'.repeat(this.pick([255, 256, 1024, 1025, 8192, 70_000])),
      () => '\u0000\u0001\u001f\u007f',
      () => '\r\n',
      () => 'ü€𝄞',
      () => '\ud800',
      () => '%',
      () => '%zz%0',
      () => '%00',
      () => '../../etc/passwd',
      () => '<a>&amp;&#0;</a>',
      () => String(this.pick([-1, 0, 1, 2 ** 31, 2 ** 53, 1e308])),
      () => 'NaN',
      () => this.bytes(this.int(1, 64)).toString('latin1'),
      () => this.bytes(this.int(1, 48)).toString('base64'),
      () => this.bytes(this.int(1, 32)).toString('hex'),
    ])();
  }
}
