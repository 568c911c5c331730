/**
 * @module Typed boundary of the checksum wasm module: the only code that touches its memory.
 *
 * One kernel instance per flavor, shared by every hasher of that flavor. The module has one
 * context slot per algorithm; a stream's state lives in JS ({@link StreamState.saved}) and
 * the slot is *resident* for the last stream that used it:
 *
 *   update(S) with slot owned by S   → no copy at all (the common case: one stream at a time)
 *   update(S) with slot owned by R   → R's slot bytes saved into R.saved, S.saved copied in
 *
 * so thousands of concurrent hashers stay independent, and a lone stream costs no state
 * copies. Input streams through the fixed INPUT area in slices of {@link SLICE} bytes.
 * Calls are synchronous, so INPUT and the slots are never used by two operations at once.
 *
 * Nothing here validates arguments: the public layer (src/checksum/) does, then calls in.
 */
import { instantiate, defaultFlavor, type Flavor } from './loader.js';

/** Algorithms in the module's id order (assembly/checksum/index.ts). */
export const KERNEL_ALGORITHMS = ['sha256', 'md5', 'sha1', 'crc32', 'crc32c', 'crc64nvme'] as const;
export type KernelAlgorithm = (typeof KERNEL_ALGORITHMS)[number];

/** Digest length in bytes, per algorithm id. */
const DIGEST_BYTES = [32, 16, 20, 4, 4, 8] as const;
/** Bytes of a context slot that hold a stream's state, per algorithm id. */
const STATE_BYTES = [128, 128, 128, 4, 4, 8] as const;
/**
 * Input bytes per kernel call, at most the module's INPUT size (64 KiB). 16-256 KiB measured
 * within 3% of each other for 1-8 MiB bodies; at 64 KiB the copy-in stays in L2 and the
 * call overhead is negligible.
 */
const SLICE = 64 * 1024;

interface ChecksumExports {
  memory: WebAssembly.Memory;
  inputPtr(): number;
  inputSize(): number;
  digestPtr(): number;
  ctxSize(): number;
  ctxPtr(alg: number): number;
  simd(): number;
  init(alg: number): void;
  update(alg: number, len: number): void;
  final(alg: number): void;
  crc32Update(crc: number, ptr: number, len: number): number;
  crc32cUpdate(crc: number, ptr: number, len: number): number;
  crc64nvmeUpdate(crc: bigint, ptr: number, len: number): bigint;
  crc32Combine(a: number, b: number, lenB: bigint): number;
  crc32cCombine(a: number, b: number, lenB: bigint): number;
  crc64nvmeCombine(a: bigint, b: bigint, lenB: bigint): bigint;
}

/** The state of one stream, owned by one hasher; opaque outside this file. */
export interface StreamState {
  readonly alg: number;
  /** The slot bytes while another stream holds the slot. */
  readonly saved: Uint8Array;
  /** True until the first update after creation or reset: the slot must be initialised. */
  fresh: boolean;
}

export class ChecksumKernel {
  readonly flavor: Flavor;
  #x: ChecksumExports;
  #mem: Uint8Array;
  #input: number;
  #slice: number;
  #digest: number;
  /** Views of the state bytes of each slot, made once. */
  #slots: Uint8Array[];
  #resident: (StreamState | null)[];

  constructor(flavor: Flavor) {
    this.flavor = flavor;
    this.#x = instantiate('checksum', flavor).exports as unknown as ChecksumExports;
    this.#mem = new Uint8Array(this.#x.memory.buffer);
    this.#input = this.#x.inputPtr();
    this.#slice = Math.min(SLICE, this.#x.inputSize());
    if (this.#input + this.#slice > this.#mem.length) {
      throw new Error(
        `checksum.${flavor}: input area exceeds the module memory (build pages too small)`
      );
    }
    this.#digest = this.#x.digestPtr();
    this.#slots = STATE_BYTES.map((n, alg) =>
      this.#mem.subarray(this.#x.ctxPtr(alg), this.#x.ctxPtr(alg) + n)
    );
    this.#resident = STATE_BYTES.map(() => null);
  }

  /** A new stream of `algorithm`, not yet started (fresh). Touches no wasm memory. */
  newState(algorithm: KernelAlgorithm): StreamState {
    const alg = KERNEL_ALGORITHMS.indexOf(algorithm);
    return { alg, saved: new Uint8Array(STATE_BYTES[alg]!), fresh: true };
  }

  /** Absorbs `data` into stream `s`. Reads data; mutates s and the module's memory. */
  update(s: StreamState, data: Uint8Array): void {
    this.#acquire(s);
    const n = data.length;
    if (n <= this.#slice) {
      this.#mem.set(data, this.#input);
      this.#x.update(s.alg, n);
      return;
    }
    for (let off = 0; off < n; off += this.#slice) {
      const len = Math.min(this.#slice, n - off);
      this.#mem.set(data.subarray(off, off + len), this.#input);
      this.#x.update(s.alg, len);
    }
  }

  /**
   * The digest of stream `s` (CRCs as big-endian bytes), in a new array. A hash stream is
   * spent afterwards: the caller must reset it (mark it fresh) before using it again.
   */
  digest(s: StreamState): Uint8Array {
    this.#acquire(s);
    this.#x.final(s.alg);
    return this.#mem.slice(this.#digest, this.#digest + DIGEST_BYTES[s.alg]!);
  }

  /** Makes the slot of s.alg hold s: saves the resident stream, restores or starts s. */
  #acquire(s: StreamState): void {
    const owner = this.#resident[s.alg];
    if (owner !== s) {
      if (owner) owner.saved.set(this.#slots[s.alg]!);
      if (!s.fresh) this.#slots[s.alg]!.set(s.saved);
      this.#resident[s.alg] = s;
    }
    if (s.fresh) {
      this.#x.init(s.alg);
      s.fresh = false;
    }
  }

  /** CRC32 of `data` continued from `crc` (zlib chaining), as an unsigned 32-bit number. */
  crc32(data: Uint8Array, crc: number): number {
    return this.#crc(data, crc, this.#x.crc32Update) >>> 0;
  }

  /** CRC32C of `data` continued from `crc`, as an unsigned 32-bit number. */
  crc32c(data: Uint8Array, crc: number): number {
    return this.#crc(data, crc, this.#x.crc32cUpdate) >>> 0;
  }

  /** CRC64NVME of `data` continued from `crc`, as an unsigned 64-bit bigint. */
  crc64nvme(data: Uint8Array, crc: bigint): bigint {
    return BigInt.asUintN(64, this.#crc(data, crc, this.#x.crc64nvmeUpdate));
  }

  #crc<T>(data: Uint8Array, crc: T, kernel: (crc: T, ptr: number, len: number) => T): T {
    const n = data.length;
    if (n <= this.#slice) {
      this.#mem.set(data, this.#input);
      return kernel(crc, this.#input, n);
    }
    for (let off = 0; off < n; off += this.#slice) {
      const len = Math.min(this.#slice, n - off);
      this.#mem.set(data.subarray(off, off + len), this.#input);
      crc = kernel(crc, this.#input, len);
    }
    return crc;
  }

  /** crc32(A || B) from crc32(A), crc32(B) and len(B) < 2^64. Pure. */
  crc32Combine(a: number, b: number, lengthB: bigint): number {
    return this.#x.crc32Combine(a, b, lengthB) >>> 0;
  }

  /** crc32c(A || B) from crc32c(A), crc32c(B) and len(B) < 2^64. Pure. */
  crc32cCombine(a: number, b: number, lengthB: bigint): number {
    return this.#x.crc32cCombine(a, b, lengthB) >>> 0;
  }

  /** crc64nvme(A || B) from crc64nvme(A), crc64nvme(B) and len(B) < 2^64. Pure. */
  crc64nvmeCombine(a: bigint, b: bigint, lengthB: bigint): bigint {
    return BigInt.asUintN(64, this.#x.crc64nvmeCombine(a, b, lengthB));
  }
}

const kernels = new Map<Flavor, ChecksumKernel>();

/** The shared kernel of `flavor` (default: the loader's default), instantiated on first use. */
export function checksumKernel(flavor: Flavor = defaultFlavor('checksum')): ChecksumKernel {
  let k = kernels.get(flavor);
  if (!k) {
    k = new ChecksumKernel(flavor);
    kernels.set(flavor, k);
  }
  return k;
}
