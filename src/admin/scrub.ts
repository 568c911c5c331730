/**
 * @module Admin API for the erasure provider's maintenance — and the functions `strata scrub`
 * and `strata domains` call on a stopped repository, so both paths answer alike.
 *
 *   POST /_strata/admin/v1/scrub    {repair?: boolean, rate?: "50MiB", restart?: boolean}
 *        -> 200 ScrubReport (provider/erasure/scrub.ts) once the pass is done
 *   GET  /_strata/admin/v1/scrub    -> 200 {running, progress?, last?}  (the last admin pass)
 *   GET  /_strata/admin/v1/domains  -> 200 {k, m, domains: DomainHealth[]} (with usage)
 *
 * Options travel in the (signed) body: admin requests carry no query string (router.ts), so
 * `repair` is a body field rather than `?repair=true`. A POST preempts the server's background
 * scrub (which saves its cursor; the admin pass continues it when of the same kind) and waits
 * for another admin pass in progress. Errors: 400 InvalidJson / InvalidArgument (rate), 409
 * NotErasure on a repository that is not on the erasure provider, and the provider's errors
 * (listing or saving the cursor failed: 500).
 */
import type { AdminRoute } from './router.js';
import { AdminError, readJson, sendJson } from './http.js';
import type { Store } from '../store/store.js';
import { isErasureProvider, type DomainHealth, type ErasureProvider } from '../provider/erasure/types.js';
import type { Provider } from '../provider/provider.js';
import { runScrub, type ScrubProgress, type ScrubReport } from '../provider/erasure/scrub.js';
import { parseSize } from '../server/option-types.js';
import { preemptBackgroundScrub } from '../server/scrub-worker.js';

export interface AdminScrubRequest {
  repair?: boolean;
  /** A byte rate (`50MiB`) per second; absent: unlimited. */
  rate?: string;
  /** Ignore a saved cursor and start the pass over. */
  restart?: boolean;
}

export interface AdminDomainsResult {
  k: number;
  m: number;
  domains: DomainHealth[];
}

/** Rates outside this are typing mistakes: under 1 KiB/s a pass would never end. */
const MIN_RATE = 1024;

/** The erasure provider under `provider`; throws AdminError 409 'NotErasure' for any other. */
export function erasureOf(provider: Provider): ErasureProvider {
  if (!isErasureProvider(provider)) {
    throw new AdminError(409, 'NotErasure', `the repository is on the ${provider.kind} provider, not erasure-coded: it has no failure domains to scrub or list (strata verify checks any repository)`);
  }
  return provider;
}

/** Parses a rate (`50MiB`, bytes per second). Throws AdminError 400 'InvalidArgument'. */
export function parseRate(text: string): number {
  let n: number;
  try {
    n = parseSize(text, 'rate');
  } catch (err) {
    throw new AdminError(400, 'InvalidArgument', (err as Error).message);
  }
  if (!(n >= MIN_RATE)) throw new AdminError(400, 'InvalidArgument', `rate: ${JSON.stringify(text.slice(0, 32))} is below the minimum of 1KiB per second`);
  return n;
}

const state = new WeakMap<object, { running: boolean; progress?: ScrubProgress; last?: ScrubReport }>();

/**
 * Runs one scrub pass over `provider` as `req` says (see the module note). Throws AdminError
 * 409 'NotErasure' or 400 'InvalidArgument', and what runScrub throws.
 */
export async function adminScrub(provider: Provider, req: AdminScrubRequest, onProgress?: (p: ScrubProgress) => void, signal?: AbortSignal): Promise<ScrubReport> {
  const erasure = erasureOf(provider);
  const rate = req.rate !== undefined ? parseRate(req.rate) : undefined;
  await preemptBackgroundScrub(erasure);
  const s = state.get(erasure) ?? { running: false };
  state.set(erasure, s);
  s.running = true;
  try {
    const report = await runScrub(erasure, {
      repair: req.repair === true,
      resume: req.restart !== true,
      ...(rate !== undefined ? { rateBytesPerSec: rate } : {}),
      ...(signal ? { signal } : {}),
      onProgress: (p) => {
        s.progress = p;
        onProgress?.(p);
      },
    });
    s.last = report;
    return report;
  } finally {
    s.running = false;
  }
}

/** Every domain's health and usage. Throws AdminError 409 'NotErasure', and what domainHealth throws. */
export async function adminDomains(provider: Provider): Promise<AdminDomainsResult> {
  const erasure = erasureOf(provider);
  return { k: erasure.k, m: erasure.m, domains: await erasure.domainHealth({ usage: true }) };
}

function storeProvider(store: Store): Provider {
  return store.repo.provider;
}

/** The scrub and domains routes (mounted under /_strata/admin/v1). */
export const SCRUB_ROUTES: AdminRoute[] = [
  {
    method: 'POST',
    path: ['scrub'],
    op: 'AdminScrub',
    handle: async (r) => {
      const body = await readJson(r, { repair: 'boolean', rate: 'string', restart: 'boolean' });
      sendJson(r, 200, await adminScrub(storeProvider(r.store), body));
    },
  },
  {
    method: 'GET',
    path: ['scrub'],
    op: 'AdminScrubStatus',
    handle: async (r) => {
      const s = state.get(erasureOf(storeProvider(r.store)));
      sendJson(r, 200, { running: s?.running ?? false, ...(s?.running && s.progress ? { progress: s.progress } : {}), ...(s?.last ? { last: s.last } : {}) });
    },
  },
  {
    method: 'GET',
    path: ['domains'],
    op: 'AdminDomains',
    handle: async (r) => {
      sendJson(r, 200, await adminDomains(storeProvider(r.store)));
    },
  },
];
