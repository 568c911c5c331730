/**
 * @module Where a read puts its bytes: one array, or the caller's list of targets of a scatter
 * read (Provider.readv), filled in order as if they were one array.
 *
 * A read checks every block it fetched before it copies a byte out (read.ts), and copies only
 * from buffers whose child read has settled (scratch buffers, rebuilt stripes), so the
 * caller's targets are written only synchronously by this process, never by a child read
 * still running (a hung domain answering late cannot reach them).
 */

/** A destination of `length` bytes; `set` copies `src` to position `offset` of it. */
export interface ByteSink {
  readonly length: number;
  set(src: Uint8Array, offset: number): void;
}

/** The targets of a scatter read seen as one destination: byte `offset` of the sink is the
 * byte the targets hold at that position when laid end to end. */
export class ScatterSink implements ByteSink {
  readonly length: number;
  readonly #targets: readonly Uint8Array[];
  /** starts[i]: sink offset of targets[i]'s first byte. */
  readonly #starts: number[];

  constructor(targets: readonly Uint8Array[]) {
    this.#targets = targets;
    this.#starts = [];
    let at = 0;
    for (const t of targets) {
      this.#starts.push(at);
      at += t.length;
    }
    this.length = at;
  }

  /** Index of the target holding sink byte `offset` (the last with start <= offset). */
  #find(offset: number): number {
    let lo = 0;
    let hi = this.#starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.#starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Copies `src` to sink bytes [offset, offset + src.length). Throws RangeError past the end. */
  set(src: Uint8Array, offset: number): void {
    if (offset < 0 || offset + src.length > this.length) throw new RangeError(`ScatterSink: bytes [${offset}, ${offset + src.length}) past ${this.length}`);
    let i = this.#find(offset);
    let done = 0;
    while (done < src.length) {
      const t = this.#targets[i]!;
      const at = offset + done - this.#starts[i]!;
      const n = Math.min(t.length - at, src.length - done);
      if (n > 0) t.set(src.subarray(done, done + n), at);
      done += Math.max(n, 0);
      i++;
    }
  }

  /** Sink bytes [from, to) as one view when a single target holds them all, else undefined. */
  view(from: number, to: number): Uint8Array | undefined {
    const i = this.#find(from);
    const t = this.#targets[i]!;
    const a = from - this.#starts[i]!;
    return to - from <= t.length - a ? t.subarray(a, a + to - from) : undefined;
  }
}

/** Bytes [from, to) of `out` as a view, when it has them in one piece. */
export function viewOf(out: ByteSink, from: number, to: number): Uint8Array | undefined {
  if (out instanceof Uint8Array) return out.subarray(from, to);
  if (out instanceof ScatterSink) return out.view(from, to);
  return undefined;
}
