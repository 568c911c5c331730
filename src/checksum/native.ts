/**
 * @module Node-only: the fastest implementation of each checksum on Node, behind the same
 * {@link Hasher} interface. Not browser-safe (imports node:crypto and node:zlib), so the
 * codec barrel (./index.js) does not export it.
 *
 * The choice is by measurement (bench/codec-checksum.ts; see bench/RESULTS.md), on a Zen 5
 * with SHA-NI and Node 20: OpenSSL's SHA-256 and SHA-1 (SHA-NI) run 3.3x and 1.9x the wasm
 * kernels; OpenSSL's MD5 (no hardware help) runs ~4% below ours at 1 MiB and ~20% below at
 * 4 KiB (createHash overhead), so MD5 stays on wasm; zlib's crc32 (Chromium zlib, PCLMUL)
 * runs ~1.8x our table-driven CRC32. Node has no CRC32C: the hardware one of `aws-crt` or
 * `@node-rs/crc32` (./native-crc32c.js) runs 4-15x our SIMD kernel and is used when it loads
 * and agrees with ours. Nothing native computes CRC64NVME faster (aws-crt's runs at our
 * kernel's speed here), so it stays on wasm.
 */
import { createHash, type Hash } from 'node:crypto';
import * as zlib from 'node:zlib';
import type { ChecksumAlgorithm } from './algorithms.js';
import { HasherFinishedError } from './errors.js';
import { createHasher, type Hasher } from './hasher.js';
import { checkAlgorithm, checkData } from './validate.js';
import { fastCrc32c, nativeCrc32cUnavailable } from './native-crc32c.js';
import type { Crc32cFn } from './accelerator.js';

/** Which implementation {@link createFastHasher} uses per algorithm, on this Node. */
export type FastImplementation = 'node:crypto' | 'node:zlib' | 'native' | 'wasm';

type Crc32Fn = (data: Uint8Array, value?: number) => number;
/** zlib.crc32 exists from Node 20.15 / 22.2. */
const zlibCrc32 = (zlib as { crc32?: Crc32Fn }).crc32;

export const FAST_IMPLEMENTATIONS: Readonly<Record<ChecksumAlgorithm, FastImplementation>> = {
  sha256: 'node:crypto',
  md5: 'wasm',
  sha1: 'node:crypto',
  crc32: zlibCrc32 ? 'node:zlib' : 'wasm',
  crc32c: nativeCrc32cUnavailable === undefined ? 'native' : 'wasm',
  crc64nvme: 'wasm',
};

abstract class OnceHasher implements Hasher {
  abstract readonly algorithm: ChecksumAlgorithm;
  #finished = false;
  protected abstract absorb(data: Uint8Array): void;
  protected abstract finish(): Uint8Array;
  protected abstract restart(): void;

  update(data: Uint8Array): this {
    if (this.#finished) throw new HasherFinishedError(this.algorithm);
    this.absorb(checkData(data));
    return this;
  }

  digest(): Uint8Array {
    if (this.#finished) throw new HasherFinishedError(this.algorithm);
    this.#finished = true;
    return this.finish();
  }

  reset(): this {
    this.#finished = false;
    this.restart();
    return this;
  }
}

class CryptoHasher extends OnceHasher {
  readonly algorithm: ChecksumAlgorithm;
  #hash: Hash;
  constructor(algorithm: ChecksumAlgorithm) {
    super();
    this.algorithm = algorithm;
    this.#hash = createHash(algorithm);
  }
  protected absorb(data: Uint8Array): void {
    this.#hash.update(data);
  }
  protected finish(): Uint8Array {
    return new Uint8Array(this.#hash.digest());
  }
  protected restart(): void {
    this.#hash = createHash(this.algorithm);
  }
}

/** A CRC32 or CRC32C hasher over a chaining function (zlib's CRC32, the native CRC32C). */
class ChainedCrcHasher extends OnceHasher {
  readonly algorithm: 'crc32' | 'crc32c';
  #fn: Crc32cFn;
  #crc = 0;
  constructor(algorithm: 'crc32' | 'crc32c', fn: Crc32cFn) {
    super();
    this.algorithm = algorithm;
    this.#fn = fn;
  }
  protected absorb(data: Uint8Array): void {
    this.#crc = this.#fn(data, this.#crc);
  }
  protected finish(): Uint8Array {
    const c = this.#crc;
    return Uint8Array.of(c >>> 24, (c >>> 16) & 255, (c >>> 8) & 255, c & 255);
  }
  protected restart(): void {
    this.#crc = 0;
  }
}

/**
 * A hasher of `algorithm` on the fastest implementation on this Node
 * ({@link FAST_IMPLEMENTATIONS}); same digests and same errors as createHasher.
 * Throws UnknownAlgorithmError.
 */
export function createFastHasher(algorithm: ChecksumAlgorithm): Hasher {
  switch (FAST_IMPLEMENTATIONS[checkAlgorithm(algorithm)]) {
    case 'node:crypto':
      return new CryptoHasher(algorithm);
    case 'node:zlib':
      return new ChainedCrcHasher('crc32', zlibCrc32!);
    case 'native':
      return new ChainedCrcHasher('crc32c', fastCrc32c);
    case 'wasm':
      return createHasher(algorithm);
  }
}
