/**
 * @module Listing logical blobs: a k-way merge of the domains' listings.
 *
 * Child names sort in logical key order (child-key.ts), so each domain's listing is already
 * a sorted stream of logical keys; the merge takes the smallest key across domains, gathers
 * every fragment name of that key (stale generations too), and reports the newest
 * generation's logical length and etag, read from the names alone. Pages follow the other
 * providers exactly: keys strictly after `startAfter`, at most `limit`, `next` only when
 * more remain. Up to m domains may fail to answer (every blob keeps a fragment or copy on a
 * domain that did); more fail the listing with 'Unavailable'. The merge itself, and how a slow
 * domain is told from a dead one, is domain-merge.ts.
 */
import { listLimit } from '../key.js';
import type { BlobInfo, ListOptions, ListPage } from '../provider.js';
import type { FragmentName } from './child-key.js';
import { mergeDomains } from './domain-merge.js';
import type { DomainSet } from './domains.js';
import { etagOf } from './lookup.js';

/** Resolves the length of a write whose names do not carry it (reads a trailer). */
export type LengthResolver = (entry: { name: FragmentName; domain: string; child: string; size: number }) => Promise<number>;

/** One page of the merged listing (see module doc). Throws 'Unavailable' when more than
 * `maxFailed` domains do not answer, RangeError for a bad limit. */
export async function listMerged(
  domains: DomainSet,
  options: ListOptions,
  maxFailed: number,
  resolveLength: LengthResolver
): Promise<ListPage> {
  const limit = listLimit(options.limit);
  const items: BlobInfo[] = [];
  const walk = mergeDomains(domains, {
    ...(options.prefix ? { prefix: options.prefix } : {}),
    ...(options.startAfter !== undefined ? { startAfter: options.startAfter } : {}),
    pageLimit: Math.min(1000, limit + 1),
    maxFailed,
    what: 'list',
    ...(options.signal ? { signal: options.signal } : {}),
  });
  for await (const { key, names } of walk) {
    let best = names[0]!;
    for (const e of names) if (e.name.generation > best.name.generation) best = e;
    const length = best.name.length ?? (await resolveLength(best));
    let lastModified = best.lastModified;
    for (const e of names) if (e.name.generation === best.name.generation && e.lastModified > lastModified) lastModified = e.lastModified;
    items.push({ key, size: length, etag: etagOf({ ...best.name, length: best.name.length }), lastModified });
    if (items.length > limit) break;
  }
  if (items.length > limit) {
    items.length = limit;
    return { items, next: items[limit - 1]!.key };
  }
  return { items };
}
