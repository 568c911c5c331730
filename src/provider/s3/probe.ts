/**
 * @module Capability detection: does the backend really enforce conditional writes?
 *
 * Many S3-compatible servers accept `If-None-Match` / `If-Match` on PUT and ignore
 * them. The probe writes a scratch key and checks each rule with a request that
 * must be refused, then removes the key whatever happened.
 */
import { randomBytes } from 'node:crypto';
import { ProviderError, type Provider } from '../provider.js';

/** Scratch key prefix of the probe (inside the provider's key prefix). */
export const PROBE_KEY_PREFIX = '.strata-probe-';

export interface ProbeResult {
  conditionalWrites: boolean;
  /** Which check failed, when one did. */
  reason?: string;
}

async function refused(attempt: Promise<unknown>): Promise<boolean> {
  try {
    await attempt;
    return false;
  } catch (err) {
    if (err instanceof ProviderError && err.code === 'PreconditionFailed') return true;
    if (err instanceof ProviderError && (err.code === 'Unavailable' || err.code === 'Aborted'))
      throw err;
    return false; // e.g. 400/501 NotImplemented: the header is not supported
  }
}

/**
 * Puts a scratch key twice with `ifNoneMatch: '*'` (the second must be refused),
 * then with a wrong `ifMatch` (must be refused) and the right one (must succeed).
 * Mutates only the scratch key, deleted before returning. Throws ProviderError
 * 'Unavailable' if the backend cannot be reached; any other outcome is a result.
 */
export async function probeConditionalWrites(provider: Provider): Promise<ProbeResult> {
  const key = PROBE_KEY_PREFIX + randomBytes(8).toString('hex');
  try {
    let first;
    try {
      first = await provider.put(key, Buffer.from('probe 1'), { ifNoneMatch: '*' });
    } catch (err) {
      if (err instanceof ProviderError && err.code === 'Unavailable') throw err;
      return {
        conditionalWrites: false,
        reason: `If-None-Match: * on a new key failed: ${(err as Error).message}`,
      };
    }
    if (!(await refused(provider.put(key, Buffer.from('probe 2'), { ifNoneMatch: '*' })))) {
      return {
        conditionalWrites: false,
        reason: 'If-None-Match: * did not refuse an existing key',
      };
    }
    if (
      !(await refused(provider.put(key, Buffer.from('probe 3'), { ifMatch: first.etag + '0' })))
    ) {
      return { conditionalWrites: false, reason: 'If-Match did not refuse a wrong etag' };
    }
    try {
      await provider.put(key, Buffer.from('probe 4'), { ifMatch: first.etag });
    } catch (err) {
      return {
        conditionalWrites: false,
        reason: `If-Match with the current etag failed: ${(err as Error).message}`,
      };
    }
    return { conditionalWrites: true };
  } finally {
    await provider.delete(key).catch(() => {});
  }
}
