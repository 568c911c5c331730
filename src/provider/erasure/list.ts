/**
 * @module Listing logical blobs: a k-way merge of the domains' listings.
 *
 * Child names sort in logical key order (child-key.ts), so each domain's listing is already
 * a sorted stream of logical keys; the merge takes the smallest key across domains, gathers
 * every fragment name of that key (stale generations too), and reports the newest
 * generation's logical length and etag, read from the names alone. Pages follow the other
 * providers exactly: keys strictly after `startAfter`, at most `limit`, `next` only when
 * more remain. Up to m domains may fail to answer (every blob keeps a fragment or copy on a
 * domain that did); more fail the listing with 'Unavailable'.
 */
import { compareKeys, listLimit } from '../key.js';
import { ProviderError, type BlobInfo, type ListOptions, type ListPage } from '../provider.js';
import { AFTER_ALL_META, escapeKey, parseChildKey, type FragmentName } from './child-key.js';
import type { DomainSet } from './domains.js';
import { etagOf } from './lookup.js';

interface Entry {
  name: FragmentName;
  child: string;
  size: number;
  lastModified: Date;
  domain: string;
}

class Cursor {
  buf: Entry[] = [];
  next: string | undefined;
  done = false;
  failed = false;
  constructor(readonly domain: string) {}
}

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
  const prefix = escapeKey(options.prefix ?? '');
  const cursors = domains.domains.map((d) => new Cursor(d.id));
  for (const c of cursors) c.next = options.startAfter === undefined ? undefined : escapeKey(options.startAfter) + AFTER_ALL_META;
  const childLimit = Math.min(1000, limit + 1);

  const refill = async (c: Cursor): Promise<void> => {
    while (!c.done && c.buf.length === 0) {
      try {
        const page = await domains.call(c.domain, `list ${prefix}`, (p, { signal }) =>
          p.list({ prefix: prefix || undefined, startAfter: c.next, limit: childLimit, signal })
        );
        for (const item of page.items) {
          const name = parseChildKey(item.key);
          if (name) c.buf.push({ name, child: item.key, size: item.size, lastModified: item.lastModified, domain: c.domain });
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
  const refillAll = async (): Promise<void> => {
    await Promise.all(cursors.filter((c) => c.buf.length === 0 && !c.done).map(refill));
    const failed = cursors.filter((c) => c.failed).length;
    if (failed > maxFailed)
      throw new ProviderError('Unavailable', `list: ${failed} domains did not answer (at most ${maxFailed} may be down)`);
  };

  const items: BlobInfo[] = [];
  while (items.length <= limit) {
    if (options.signal?.aborted) throw new ProviderError('Aborted', 'list: aborted');
    await refillAll();
    let min: string | undefined;
    for (const c of cursors) {
      const head = c.buf[0];
      if (head && (min === undefined || compareKeys(head.name.key, min) < 0)) min = head.name.key;
    }
    if (min === undefined) break;
    const same: Entry[] = [];
    for (const c of cursors) {
      for (;;) {
        while (c.buf.length && c.buf[0]!.name.key === min) same.push(c.buf.shift()!);
        if (c.buf.length || c.done) break;
        await refill(c);
      }
    }
    let best = same[0]!;
    for (const e of same) if (e.name.generation > best.name.generation) best = e;
    const length = best.name.length ?? (await resolveLength(best));
    let lastModified = best.lastModified;
    for (const e of same) if (e.name.generation === best.name.generation && e.lastModified > lastModified) lastModified = e.lastModified;
    items.push({ key: min, size: length, etag: etagOf({ ...best.name, length: best.name.length }), lastModified });
  }
  if (items.length > limit) {
    items.length = limit;
    return { items, next: items[limit - 1]!.key };
  }
  return { items };
}
