/**
 * @module Admin API for the erasure provider's maintenance — and the functions `strata scrub`
 * and `strata domains` call on a stopped repository, so both paths answer alike.
 *
 *   POST /_strata/admin/v1/scrub    {repair?: boolean, missingOnly?: boolean, rate?: "50MiB", restart?: boolean}
 *        -> 202 AdminScrubStatus   starts a pass in the server (409 ScrubInProgress if one runs)
 *   GET  /_strata/admin/v1/scrub    -> 200 AdminScrubStatus {running, id, progress?, last?}
 *   GET  /_strata/admin/v1/domains  -> 200 {k, m, domains: DomainHealth[]} (with usage)
 *
 * A pass reads every fragment, which takes far longer than one admin request may (the server
 * drops a connection idle for minutes): so POST starts it and answers at once with its `id`, and
 * the client polls GET for progress and for `last` (the report, or the error, of pass `id`).
 * Options travel in the (signed) body: admin requests carry no query string (router.ts), so
 * `repair` is a body field rather than `?repair=true`. A POST preempts the server's background
 * scrub (which saves its cursor; the admin pass continues it when of the same kind). Errors: 400
 * InvalidJson / InvalidArgument (rate), 409 NotErasure on a repository not on the erasure
 * provider, 409 ScrubInProgress.
 */
import type { AdminRoute } from './router.js';
import { AdminError, readJson, sendJson } from './http.js';
import type { Store } from '../store/store.js';
import { isErasureProvider, type DomainHealth, type ErasureProvider } from '../provider/erasure/types.js';
import type { Provider } from '../provider/provider.js';
import { runScrub, type ScrubProgress, type ScrubReport } from '../provider/erasure/scrub.js';
import { parseSize } from '../server/option-types.js';
import { preemptBackgroundScrub } from '../server/scrub-worker.js';
import { garbageClassifier } from './scrub-garbage.js';

export interface AdminScrubRequest {
  repair?: boolean;
  /** With `repair`: rebuild only fragments missing by name, reading only what that needs
   * (provider/erasure/scrub.ts ScrubOptions.missingOnly). 400 InvalidArgument without repair. */
  missingOnly?: boolean;
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

/** What GET (and POST) answer about the server's admin passes. */
export interface AdminScrubStatus {
  running: boolean;
  /** The pass running, or else the last one started (0: none yet). */
  id: number;
  progress?: ScrubProgress;
  /** The last finished pass: its report, or why it failed. */
  last?: { id: number; report?: ScrubReport; error?: { code: string; message: string } };
}

interface PassState {
  seq: number;
  running?: { id: number; progress?: ScrubProgress; abort: AbortController; done: Promise<void> };
  last?: AdminScrubStatus['last'];
}

const passes = new WeakMap<object, PassState>();

/**
 * Runs one scrub pass over `provider` as `req` says, in the caller (a stopped repository: the
 * `strata scrub --data` path), `concurrency` blobs at a time (default runScrub's). Throws AdminError 409 'NotErasure' or 400 'InvalidArgument', and
 * what runScrub throws.
 */
export async function adminScrub(provider: Provider, req: AdminScrubRequest, onProgress?: (p: ScrubProgress) => void, signal?: AbortSignal, concurrency?: number): Promise<ScrubReport> {
  const erasure = erasureOf(provider);
  const rate = req.rate !== undefined ? parseRate(req.rate) : undefined;
  if (req.missingOnly === true && req.repair !== true) throw new AdminError(400, 'InvalidArgument', 'missingOnly needs repair');
  await preemptBackgroundScrub(erasure);
  return runScrub(erasure, {
    repair: req.repair === true,
    ...(req.missingOnly === true ? { missingOnly: true } : {}),
    resume: req.restart !== true,
    ...(rate !== undefined ? { rateBytesPerSec: rate } : {}),
    ...(signal ? { signal } : {}),
    ...(onProgress ? { onProgress } : {}),
    ...(concurrency !== undefined ? { concurrency } : {}),
    isGarbage: garbageClassifier(erasure),
  });
}

/** The admin passes' status on `provider`. Throws AdminError 409 'NotErasure'. */
export function adminScrubStatus(provider: Provider): AdminScrubStatus {
  const s = passes.get(erasureOf(provider));
  if (!s) return { running: false, id: 0 };
  return {
    running: s.running !== undefined,
    id: s.running?.id ?? s.seq,
    ...(s.running?.progress ? { progress: s.running.progress } : {}),
    ...(s.last ? { last: s.last } : {}),
  };
}

/**
 * Starts a pass in the background (the server's path) and returns the status naming it.
 * Throws AdminError 409 'NotErasure' / 'ScrubInProgress' or 400 'InvalidArgument' before
 * starting anything.
 */
export function startAdminScrub(provider: Provider, req: AdminScrubRequest): AdminScrubStatus {
  const erasure = erasureOf(provider);
  if (req.rate !== undefined) parseRate(req.rate);
  if (req.missingOnly === true && req.repair !== true) throw new AdminError(400, 'InvalidArgument', 'missingOnly needs repair');
  const s = passes.get(erasure) ?? { seq: 0 };
  passes.set(erasure, s);
  if (s.running) throw new AdminError(409, 'ScrubInProgress', `scrub pass ${s.running.id} is running; follow it with GET /_strata/admin/v1/scrub`);
  const id = ++s.seq;
  const abort = new AbortController();
  const run: NonNullable<PassState['running']> = { id, abort, done: Promise.resolve() };
  s.running = run;
  run.done = adminScrub(erasure, req, (p) => (run.progress = p), abort.signal).then(
    (report) => void (s.last = { id, report }),
    (err: unknown) => void (s.last = { id, error: { code: String((err as { code?: unknown }).code ?? 'InternalError'), message: String((err as Error)?.message ?? err) } })
  ).finally(() => {
    if (s.running === run) s.running = undefined;
  });
  return adminScrubStatus(erasure);
}

/** Stops an admin pass running on `provider` (its cursor is saved) and waits for it. */
export async function stopAdminScrub(provider: Provider): Promise<void> {
  const r = passes.get(provider)?.running;
  r?.abort.abort();
  await r?.done;
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
      const body = await readJson(r, { repair: 'boolean', missingOnly: 'boolean', rate: 'string', restart: 'boolean' });
      sendJson(r, 202, startAdminScrub(storeProvider(r.store), body));
    },
  },
  {
    method: 'GET',
    path: ['scrub'],
    op: 'AdminScrubStatus',
    handle: async (r) => {
      sendJson(r, 200, adminScrubStatus(storeProvider(r.store)));
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
