/** @module One-shot checksums: the digest of one buffer, without a hasher object. */
import type { ChecksumKernel, StreamState } from '../wasm/checksum.js';
import type { ChecksumAlgorithm } from './algorithms.js';
import { checkAlgorithm, checkData, kernelFor, type ChecksumOptions } from './validate.js';

/** One reusable stream per kernel and algorithm (calls are synchronous, so never shared). */
const states = new WeakMap<ChecksumKernel, Map<ChecksumAlgorithm, StreamState>>();

/**
 * The digest of `data`, in a new array; same bytes as createHasher(algorithm).update(data)
 * .digest(). Reads data only. Throws UnknownAlgorithmError, InvalidDataError, or
 * FlavorUnavailableError.
 */
export function checksum(
  algorithm: ChecksumAlgorithm,
  data: Uint8Array,
  options?: ChecksumOptions
): Uint8Array {
  checkAlgorithm(algorithm);
  checkData(data);
  const kernel = kernelFor(options);
  let byAlg = states.get(kernel);
  if (!byAlg) states.set(kernel, (byAlg = new Map()));
  let s = byAlg.get(algorithm);
  if (!s) byAlg.set(algorithm, (s = kernel.newState(algorithm)));
  s.fresh = true;
  kernel.update(s, data);
  return kernel.digest(s);
}
