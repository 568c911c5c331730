/**
 * @module One page of one domain's listing for the background walks (provider.list(), the
 * scrub census), bounded by lack of progress rather than by the wall time of a fixed-size page.
 *
 * A child listing page of 1,000 names costs a few thousand file-system calls on an fs domain;
 * with the disk busy writing back gigabytes, or with 14 domains sharing one I/O thread pool, such
 * a page can take longer than the domain timeout while the domain is perfectly alive. So a page
 * that times out (DomainTimeout) is asked again, after a short backoff, for 1/PAGE_SHRINK of the
 * names; a domain is counted as down only when even the smallest page gets no answer within the
 * timeout LIST_RETRIES + 1 times in a row, or when it fails outright (a transport error, which a
 * retry would not cure). The page size then grows back while pages answer quickly, and the next
 * walk over the same domains starts from the size last used.
 *
 * The cost of a domain that hangs stays bounded: at most (LIST_RETRIES + 1) timeouts plus the
 * backoffs, once; a domain already failed (within its cooldown) when the walk starts gets a
 * single attempt, so a dead domain costs every later page one timeout, as before. Request-path
 * lookups (lookup.ts) do not use this: they keep one timeout per call.
 */
import { MAX_LIST_LIMIT } from '../key.js';
import { ProviderError, type ListPage } from '../provider.js';
import { DomainTimeout, type DomainSet } from './domains.js';

/** Retries of a page that timed out, each asking for fewer names. With PAGE_SHRINK 8: 1,000,
 * 125, 16 names; a domain that cannot list 16 names within the timeout three times running is
 * not merely busy. */
export const LIST_RETRIES = 2;
/** Each retry asks for this many times fewer names (a busy disk's listing time is about
 * proportional to the names: an fs child opens and reads every blob it lists). */
export const PAGE_SHRINK = 8;
/** Smallest page asked for, names. */
export const MIN_PAGE = 16;
/** Backoff before the first retry, ms, doubling: room for a writeback burst to drain, short
 * next to the 10 s default timeout. */
export const LIST_BACKOFF_MS = 250;

/** Page size each domain last listed well with, per domain set: the next walk starts there
 * rather than paying the timeouts again (a scrub lists twice: its count, then its census). */
const LEARNED = new WeakMap<DomainSet, Map<string, number>>();

/** The page size one domain's walk asks for, shrunk on timeouts and grown back on quick pages. */
export class ListPacer {
  #limit: number;
  /** Retries allowed per page (0 for a domain already failed when the walk began). */
  readonly retries: number;
  readonly #learned: Map<string, number>;
  constructor(
    domains: DomainSet,
    readonly id: string,
    readonly max: number
  ) {
    let learned = LEARNED.get(domains);
    if (!learned) LEARNED.set(domains, (learned = new Map()));
    this.#learned = learned;
    this.#limit = Math.min(max, learned.get(id) ?? max);
    this.retries = domains.isFailed(id) ? 0 : LIST_RETRIES;
  }

  get limit(): number {
    return this.#limit;
  }

  set limit(n: number) {
    this.#limit = n;
    if (n >= MAX_LIST_LIMIT) this.#learned.delete(this.id);
    else this.#learned.set(this.id, n);
  }
}

/** Waits `ms`, or rejects with ProviderError 'Aborted' when `signal` fires first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ProviderError('Aborted', 'list: aborted'));
    const onAbort = () => {
      clearTimeout(t);
      reject(new ProviderError('Aborted', 'list: aborted'));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Lists one page of domain `id` (names after `startAfter`, under `prefix`) with `pacer`'s page
 * size, retrying a timed-out page with fewer names (see the module note). Mutates `pacer`.
 * Rejects with what DomainSet.call rejects with once retries are spent (ProviderError
 * 'Unavailable'; the domain is then marked failed), at once for a transport error, and with
 * 'Aborted' when `signal` fires during a backoff.
 */
export async function listDomainPage(
  domains: DomainSet,
  id: string,
  what: string,
  page: { prefix?: string; startAfter?: string },
  pacer: ListPacer,
  signal?: AbortSignal
): Promise<ListPage> {
  for (let attempt = 0; ; attempt++) {
    const limit = pacer.limit;
    const t0 = performance.now();
    try {
      const out = await domains.call(id, what, (p, abort) =>
        p.list({ ...(page.prefix ? { prefix: page.prefix } : {}), startAfter: page.startAfter, limit, signal: abort.signal, etags: false })
      );
      // Quick enough that twice the names would still answer well within the bound: grow.
      if (performance.now() - t0 < domains.timeoutMs / 4 && limit < pacer.max) pacer.limit = Math.min(pacer.max, limit * 2);
      return out;
    } catch (err) {
      if (!(err instanceof DomainTimeout) || attempt >= pacer.retries) throw err;
      pacer.limit = Math.max(Math.min(MIN_PAGE, pacer.max), Math.floor(limit / PAGE_SHRINK));
      await pause(LIST_BACKOFF_MS * 2 ** attempt, signal);
    }
  }
}
