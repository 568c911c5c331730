/**
 * @module A scrub's census: one walk over every domain's listing at once, grouping the
 * fragment names of each logical blob as it goes, so that checking or repairing a blob needs
 * no lookup of its own (a lookup lists the key on every domain: N listings per blob, which on
 * a repository of small blobs cost more than the checks themselves).
 *
 * Child names sort in logical key order (child-key.ts), so each domain's listing is a sorted
 * stream of logical keys; the walk merges them and yields, per logical key in order, what a
 * lookup would have found (lookup.ts resolveNames): the current write, stale leftovers, the
 * domains that did not answer. Memory: one listing page per domain plus the names of one key.
 *
 * A domain whose listing fails is reported as unreachable for every key after the failure (its
 * fragments are then neither counted missing nor rebuilt by a census-driven check, which looks
 * the blob up again: check.ts); more than `maxFailed` failed domains fail the walk with
 * ProviderError 'Unavailable', as provider.list() does.
 */
import { compareKeys } from '../key.js';
import { ProviderError } from '../provider.js';
import { AFTER_ALL_META, escapeKey, parseChildKey } from './child-key.js';
import type { DomainSet } from './domains.js';
import { resolveNames, type FoundName, type LookupResult } from './lookup.js';

/** Child listing page size: the providers' maximum, so a walk makes as few calls as it can. */
const PAGE = 1000;

/** One logical blob as the census found it. */
export interface CensusEntry {
  key: string;
  /** Logical length of the newest write as its names say it (an estimate from the fragment
   * size for a write of unknown length: only progress and rate accounting use it). */
  size: number;
  found: LookupResult;
}

class DomainCursor {
  buf: FoundName[] = [];
  next: string | undefined;
  done = false;
  failed = false;
  constructor(readonly domain: string) {}
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
  const cursors = domains.domains.map((d) => new DomainCursor(d.id));
  const first = options.startAfter === undefined ? undefined : escapeKey(options.startAfter) + AFTER_ALL_META;
  for (const c of cursors) c.next = first;

  const refill = async (c: DomainCursor): Promise<void> => {
    while (!c.done && c.buf.length === 0) {
      try {
        const page = await domains.call(c.domain, 'list (scrub census)', (p, { signal }) =>
          p.list({ startAfter: c.next, limit: PAGE, ...(signal ? { signal } : {}) })
        );
        for (const item of page.items) {
          const name = parseChildKey(item.key);
          if (name) c.buf.push({ domain: c.domain, name, child: item.key, size: item.size, lastModified: item.lastModified });
        }
        c.next = page.next ?? page.items[page.items.length - 1]?.key;
        if (!page.next) c.done = true;
      } catch (err) {
        if (err instanceof ProviderError && err.code === 'Aborted') throw err;
        c.failed = true;
        c.done = true;
        c.buf = [];
      }
    }
  };

  for (;;) {
    if (options.signal?.aborted) throw new ProviderError('Aborted', 'scrub census: aborted');
    await Promise.all(cursors.filter((c) => c.buf.length === 0 && !c.done).map(refill));
    const failed = cursors.filter((c) => c.failed);
    if (failed.length > maxFailed)
      throw new ProviderError('Unavailable', `scrub: ${failed.length} domains did not answer a listing (at most ${maxFailed} may be down)`);
    let min: string | undefined;
    for (const c of cursors) {
      const head = c.buf[0];
      if (head && (min === undefined || compareKeys(head.name.key, min) < 0)) min = head.name.key;
    }
    if (min === undefined) return;
    const names: FoundName[] = [];
    for (const c of cursors) {
      for (;;) {
        while (c.buf.length && c.buf[0]!.name.key === min) names.push(c.buf.shift()!);
        if (c.buf.length || c.done) break;
        await refill(c);
      }
    }
    if (options.skipPrefix !== undefined && min.startsWith(options.skipPrefix)) continue;
    const found = resolveNames(min, names, cursors.filter((c) => c.failed).map((c) => c.domain));
    yield { key: min, size: sizeOf(found, names), found };
  }
}

function sizeOf(found: LookupResult, names: FoundName[]): number {
  const meta = found.meta;
  if (meta?.length !== undefined) return meta.length;
  const newest = names.reduce((a, b) => (b.name.generation > a.name.generation ? b : a));
  if (newest.name.length !== undefined) return newest.name.length;
  return Math.max(0, newest.size * (newest.name.layout === 'striped' ? newest.name.k : 1));
}
