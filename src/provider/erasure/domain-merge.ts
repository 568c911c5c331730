/**
 * @module The k-way merge of the domains' sorted listings, shared by provider.list() (list.ts)
 * and the scrub census (census.ts).
 *
 * Child names sort in logical key order (child-key.ts), so each domain's listing is a sorted
 * stream of logical keys; the merge takes the smallest key across domains and yields it with
 * every fragment name found for it (all generations) and the domains that failed so far. Each
 * domain is read a page at a time through listDomainPage (list-page.ts: a slow domain is given
 * smaller pages, a domain that does not answer at all is dropped). Memory: one page per domain
 * plus the names of one key.
 *
 * A domain whose listing fails is reported as failed for every key after the failure; more
 * than `maxFailed` failed domains end the walk with ProviderError 'Unavailable'.
 */
import { compareKeys } from '../key.js';
import { ProviderError } from '../provider.js';
import { AFTER_ALL_META, escapeKey, parseChildKey } from './child-key.js';
import type { DomainSet } from './domains.js';
import { listDomainPage, ListPacer } from './list-page.js';
import type { FoundName } from './lookup.js';

export interface MergeOptions {
  /** Only logical keys with this prefix. */
  prefix?: string;
  /** Only logical keys strictly after this one. */
  startAfter?: string;
  /** Largest child page asked for (1..1000). */
  pageLimit: number;
  /** Domains that may fail before the walk does. */
  maxFailed: number;
  /** Names the walk in errors and timeouts ('list', 'scrub census'). */
  what: string;
  signal?: AbortSignal;
}

/** One logical key as the merge found it. */
export interface MergedKey {
  key: string;
  /** Every name of the key on the domains that answered (any generation), in domain order. */
  names: FoundName[];
  /** Domains whose listing failed before this key was reached. */
  failed: string[];
}

class DomainCursor {
  /** The page being consumed, from `at` on. */
  buf: FoundName[] = [];
  at = 0;
  next: string | undefined;
  done = false;
  failed = false;
  constructor(
    readonly domain: string,
    readonly pacer: ListPacer
  ) {}
}

/**
 * Walks the logical keys of every domain in key order (see the module note). Throws
 * ProviderError 'Unavailable' when more than `maxFailed` domains fail to list (the message
 * names the walk), 'Aborted' when `signal` fires.
 */
export async function* mergeDomains(domains: DomainSet, options: MergeOptions): AsyncGenerator<MergedKey> {
  const prefix = escapeKey(options.prefix ?? '');
  const first = options.startAfter === undefined ? undefined : escapeKey(options.startAfter) + AFTER_ALL_META;
  const cursors = domains.domains.map((d) => {
    const c = new DomainCursor(d.id, new ListPacer(domains, d.id, options.pageLimit));
    c.next = first;
    return c;
  });
  const what = `${options.what}${prefix ? ` ${prefix}` : ''}`;

  const refill = async (c: DomainCursor): Promise<void> => {
    while (!c.done && c.at === c.buf.length) {
      try {
        const page = await listDomainPage(domains, c.domain, what, { prefix, startAfter: c.next }, c.pacer, options.signal);
        c.buf = [];
        c.at = 0;
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
        c.at = 0;
      }
    }
  };

  for (;;) {
    if (options.signal?.aborted) throw new ProviderError('Aborted', `${options.what}: aborted`);
    await Promise.all(cursors.filter((c) => c.at === c.buf.length && !c.done).map(refill));
    const failed = cursors.filter((c) => c.failed);
    if (failed.length > options.maxFailed)
      throw new ProviderError(
        'Unavailable',
        `${options.what}: ${failed.length} domains did not answer (at most ${options.maxFailed} may be down): ${failed.map((c) => c.domain).join(', ')}`
      );
    let min: string | undefined;
    for (const c of cursors) {
      const head = c.buf[c.at];
      if (head && (min === undefined || compareKeys(head.name.key, min) < 0)) min = head.name.key;
    }
    if (min === undefined) return;
    // Take the key's names from every cursor; cursors whose page ended on it are refilled (all
    // at once: domains' pages tend to end together) and looked at again.
    const per: FoundName[][] = cursors.map(() => []);
    let look = cursors.map((_, i) => i);
    while (look.length) {
      const again: number[] = [];
      for (const i of look) {
        const c = cursors[i]!;
        while (c.at < c.buf.length && c.buf[c.at]!.name.key === min) per[i]!.push(c.buf[c.at++]!);
        if (c.at === c.buf.length && !c.done) again.push(i);
      }
      await Promise.all(again.map((i) => refill(cursors[i]!)));
      look = again;
    }
    const names = per.flat();
    yield { key: min, names, failed: cursors.filter((c) => c.failed).map((c) => c.domain) };
  }
}
