/**
 * @module Streaming hashers over the wasm kernels: one shape for every algorithm.
 *
 * @example
 * const h = createHasher('crc64nvme');
 * for await (const chunk of body) h.update(chunk);
 * const digest = h.digest(); // 8 bytes, big-endian: base64 it for x-amz-checksum-crc64nvme
 */
import type { ChecksumKernel, StreamState } from '../wasm/checksum.js';
import type { ChecksumAlgorithm } from './algorithms.js';
import { HasherFinishedError } from './errors.js';
import { checkAlgorithm, checkData, kernelFor, type ChecksumOptions } from './validate.js';

/** A streaming checksum. Independent of every other hasher, whatever their algorithm. */
export interface Hasher {
  readonly algorithm: ChecksumAlgorithm;
  /**
   * Absorbs `data` (read, never kept or mutated). Throws InvalidDataError if data is not a
   * Uint8Array and HasherFinishedError after digest() until reset().
   */
  update(data: Uint8Array): this;
  /**
   * The digest of everything absorbed since creation or reset(), in a new array: 32 bytes
   * SHA-256, 16 MD5, 20 SHA-1, and the CRCs as 4 or 8 big-endian bytes (the bytes S3
   * base64-encodes). Finishes the hasher: a second digest() throws HasherFinishedError.
   */
  digest(): Uint8Array;
  /** Starts over, as if new; allowed at any time. */
  reset(): this;
}

class WasmHasher implements Hasher {
  readonly algorithm: ChecksumAlgorithm;
  #kernel: ChecksumKernel;
  #state: StreamState;
  #finished = false;

  constructor(algorithm: ChecksumAlgorithm, kernel: ChecksumKernel) {
    this.algorithm = algorithm;
    this.#kernel = kernel;
    this.#state = kernel.newState(algorithm);
  }

  update(data: Uint8Array): this {
    if (this.#finished) throw new HasherFinishedError(this.algorithm);
    this.#kernel.update(this.#state, checkData(data));
    return this;
  }

  digest(): Uint8Array {
    if (this.#finished) throw new HasherFinishedError(this.algorithm);
    this.#finished = true;
    return this.#kernel.digest(this.#state);
  }

  reset(): this {
    this.#finished = false;
    this.#state.fresh = true;
    return this;
  }
}

/**
 * A new hasher of `algorithm` on the wasm kernel of `options.flavor` (default: SIMD where
 * valid). Throws UnknownAlgorithmError, or FlavorUnavailableError for an unavailable flavor.
 */
export function createHasher(algorithm: ChecksumAlgorithm, options?: ChecksumOptions): Hasher {
  return new WasmHasher(checkAlgorithm(algorithm), options?.flavor === undefined ? defaultKernel() : kernelFor(options));
}

let defaultKernelMemo: ChecksumKernel | undefined;

/**
 * The kernel of the default flavor, chosen at the first hasher made without a flavor
 * (STRATA_WASM_FLAVOR is read then) and kept: a server makes two hashers per object
 * written, and choosing again each time read the environment twice per 4 KiB PUT.
 */
function defaultKernel(): ChecksumKernel {
  return (defaultKernelMemo ??= kernelFor(undefined));
}
