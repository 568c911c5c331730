/**
 * @module A scrub's census: one walk over every domain's listing at once, grouping the
 * fragment names of each logical blob as it goes, so that checking or repairing a blob needs
 * no lookup of its own (a lookup lists the key on every domain: N listings per blob, which on
 * a repository of small blobs cost more than the checks themselves).
 *
 * Child names sort in logical key order (child-key.ts), so each domain's listing is a sorted
 * stream of logical keys; the walk merges them (domain-merge.ts) and yields, per logical key in order, what a
 * lookup would have found (lookup.ts resolveNames): the current write, stale leftovers, the
 * domains that did not answer. Memory: one listing page per domain plus the names of one key.
 *
 * A domain whose listing fails is reported as unreachable for every key after the failure (its
 * fragments are then neither counted missing nor rebuilt by a census-driven check, which looks
 * the blob up again: check.ts); more than `maxFailed` failed domains fail the walk with
 * ProviderError 'Unavailable', as provider.list() does.
 */
import { mergeDomains } from './domain-merge.js';
import type { DomainSet } from './domains.js';
import { resolveNames, type FoundName, type LookupResult } from './lookup.js';

/** Child listing page size: the providers' maximum, so a walk makes as few calls as it can
 * (a slow domain is given smaller pages: list-page.ts). */
const PAGE = 1000;

/** One logical blob as the census found it. */
export interface CensusEntry {
  key: string;
  /** Logical length of the newest write as its names say it (an estimate from the fragment
   * size for a write of unknown length: only progress and rate accounting use it). */
  size: number;
  found: LookupResult;
}

/**
 * Walks every logical blob after `startAfter` (all when undefined) in key order, skipping keys
 * that start with `skipPrefix`. Throws ProviderError 'Unavailable' when more than `maxFailed`
 * domains fail to list, 'Aborted' when `signal` fires.
 */
export async function* census(
  domains: DomainSet,
  maxFailed: number,
  options: { startAfter?: string; skipPrefix?: string; signal?: AbortSignal } = {}
): AsyncGenerator<CensusEntry> {
  const walk = mergeDomains(domains, {
    ...(options.startAfter !== undefined ? { startAfter: options.startAfter } : {}),
    pageLimit: PAGE,
    maxFailed,
    what: 'scrub census',
    ...(options.signal ? { signal: options.signal } : {}),
  });
  for await (const { key, names, failed } of walk) {
    if (options.skipPrefix !== undefined && key.startsWith(options.skipPrefix)) continue;
    const found = resolveNames(key, names, failed);
    yield { key, size: sizeOf(found, names), found };
  }
}

function sizeOf(found: LookupResult, names: FoundName[]): number {
  const meta = found.meta;
  if (meta?.length !== undefined) return meta.length;
  const newest = names.reduce((a, b) => (b.name.generation > a.name.generation ? b : a));
  if (newest.name.length !== undefined) return newest.name.length;
  return Math.max(0, newest.size * (newest.name.layout === 'striped' ? newest.name.k : 1));
}
