/**
 * @module The failure domains as the erasure provider sees them: bounded calls and health.
 *
 * Every call to a child goes through DomainSet.call, which gives it domainTimeoutMs: a child
 * that does not answer in time is treated as failed for that call (ProviderError
 * 'Unavailable' naming the domain), so a hanging disk or endpoint never stalls a request
 * beyond the bound. A domain whose call failed with a transport error or timed out is marked
 * failed for a cooldown (FAILED_COOLDOWN_MS, doubling per failure in a row): writes place
 * around it at once instead of waiting for the timeout again, reads try it last. Its next
 * successful call (a read, or a domainHealth probe) marks it healthy again. A read of one blob
 * that fails with a media error (isMediaError: EIO...) is judged first (blobReadFailed): while
 * the domain answers a probe, the error is that blob's damage, and the domain stays in service.
 */
import { mayStillLand, ProviderError, type Provider } from '../provider.js';
import type { Domain, DomainHealth } from './types.js';

/** How long a failed domain is skipped by writes (and tried last by reads), ms, after its
 * first failure; it doubles with each failure in a row up to MAX_COOLDOWN_MS. Short at first
 * so that a flapping domain comes back quickly; growing so that a dead or hanging one costs
 * one timeout a minute, not one every few seconds (domainHealth probes it sooner). */
export const FAILED_COOLDOWN_MS = 5_000;
export const MAX_COOLDOWN_MS = 60_000;

interface HealthState {
  failedAt: number;
  error: string;
  /** Failures in a row. */
  streak: number;
  cooldown: number;
}

/** Did this error come from the domain itself (as opposed to a missing key, a bad request, or
 * one damaged blob: 'Corrupt' is a fragment's problem, and its domain stays healthy)? */
export function isDomainFailure(err: unknown): boolean {
  if (!(err instanceof ProviderError)) return true;
  return err.code === 'Unavailable' || err.code === 'Io' || err.code === 'Locked';
}

/** What the system says when a file's own blocks cannot be read (a bad sector, a corrupted
 * file system structure), as opposed to the whole disk, mount or endpoint being unusable. */
const MEDIA_ERRNOS: ReadonlySet<string> = new Set(['EIO', 'EUCLEAN', 'EBADMSG']);

/**
 * Did `err` (or what caused it, a few levels down) come from the system reporting a media error
 * for one file? Other 'Io' failures (an S3 endpoint refusing a GET, a transport error) are the
 * domain's, as before.
 */
export function isMediaError(err: unknown): boolean {
  return causedBy(err, MEDIA_ERRNOS);
}

/** Does `err`, or what caused it a few levels down, carry one of `errnos` as its code? */
function causedBy(err: unknown, errnos: ReadonlySet<string>): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e instanceof Error; depth++, e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== undefined && errnos.has(code)) return true;
  }
  return false;
}

/** What the system says when this process (or the whole system) has no file descriptor left. */
const DESCRIPTOR_ERRNOS: ReadonlySet<string> = new Set(['EMFILE', 'ENFILE']);

/**
 * Did `err` (or what caused it, a few levels down) come from this process running out of file
 * descriptors? That is the process's condition, not the domain's: counting it against the
 * domain would take every domain out of service at once, for its cooldown after the descriptors
 * are back, and refuse every write meanwhile.
 */
export function isDescriptorExhaustion(err: unknown): boolean {
  return causedBy(err, DESCRIPTOR_ERRNOS);
}

/** The error a call on domain `id` that failed for want of file descriptors (isDescriptorExhaustion)
 * rejects with: 'Unavailable' (the request may be retried), the domain left in service. */
export function descriptorsGone(id: string, what: string, err: unknown): ProviderError {
  return new ProviderError('Unavailable', `domain ${id}: ${what} failed: this process has no file descriptor left (${(err as Error)?.message ?? err}); the domain is not counted failed`, { cause: err });
}

/** The error of a call that a domain did not answer within its bound (ProviderError
 * 'Unavailable'): a background listing may retry it with less work (list-page.ts), where a
 * transport error would fail again at once. */
export class DomainTimeout extends ProviderError {
  constructor(message: string) {
    super('Unavailable', message);
  }
}

export class DomainSet {
  readonly domains: readonly Domain[];
  readonly timeoutMs: number;
  readonly #byId = new Map<string, Domain>();
  readonly #health = new Map<string, HealthState>();
  /** Probes in flight after failed reads (#answers), by domain. */
  readonly #probes = new Map<string, Promise<boolean>>();

  constructor(domains: readonly Domain[], timeoutMs: number) {
    this.domains = domains;
    this.timeoutMs = timeoutMs;
    for (const d of domains) this.#byId.set(d.id, d);
  }

  get(id: string): Domain {
    const d = this.#byId.get(id);
    if (!d) throw new ProviderError('Io', `unknown domain ${id}`);
    return d;
  }

  /** Domains failed within the cooldown. */
  failedIds(now = Date.now()): Set<string> {
    const out = new Set<string>();
    for (const [id, h] of this.#health) if (now - h.failedAt < h.cooldown) out.add(id);
    return out;
  }

  isFailed(id: string): boolean {
    const h = this.#health.get(id);
    return !!h && Date.now() - h.failedAt < h.cooldown;
  }

  markFailed(id: string, err: unknown): void {
    const streak = (this.#health.get(id)?.streak ?? 0) + 1;
    const cooldown = Math.min(MAX_COOLDOWN_MS, FAILED_COOLDOWN_MS * 2 ** Math.min(streak - 1, 16));
    this.#health.set(id, { failedAt: Date.now(), error: (err as Error)?.message ?? String(err), streak, cooldown });
  }

  markOk(id: string): void {
    if (this.#health.size) this.#health.delete(id);
  }

  /**
   * Runs `fn` on domain `id`'s provider with a timeout of timeoutMs (or `timeoutMs`). A
   * timeout or transport failure marks the domain failed and rejects with ProviderError
   * ('Unavailable': a DomainTimeout on timeout; wrapping the child's error otherwise); other errors (NotFound,
   * InvalidRange…) pass through and leave the domain healthy. `abort.signal` (made on first
   * use) fires on timeout, so children given it stop their work. `blobRead`: `fn` reads one
   * blob, and a media error of that file ('Io' caused by EIO and the like: isMediaError) is
   * judged by blobReadFailed (that blob's damage while the domain answers).
   */
  async call<T>(
    id: string,
    what: string,
    fn: (provider: Provider, abort: { readonly signal: AbortSignal }) => Promise<T>,
    timeoutMs = this.timeoutMs,
    blobRead = false
  ): Promise<T> {
    const domain = this.get(id);
    // Small reads (the hot path) do not use the signal: an AbortController per call costs
    // more than the read's bookkeeping, so one is made only when `fn` asks for it.
    let controller: AbortController | undefined;
    const lazy = {
      get signal(): AbortSignal {
        controller ??= new AbortController();
        return controller.signal;
      },
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      if (!Number.isFinite(timeoutMs)) return; // the caller bounds the call itself (streams)
      timer = setTimeout(() => {
        const err = new DomainTimeout(`domain ${id}: ${what} not answered within ${timeoutMs} ms`);
        // Reject first: a child that rejects at once on the abort must not win the race with
        // its own 'Aborted' (the caller would take the timeout for its own abort).
        reject(err);
        controller?.abort(err);
      }, timeoutMs);
    });
    try {
      const result = await Promise.race([fn(domain.provider, lazy), timeout]);
      this.markOk(id);
      return result;
    } catch (err) {
      if (!isDomainFailure(err)) throw err;
      if (isDescriptorExhaustion(err)) throw descriptorsGone(id, what, err);
      if (blobRead && err instanceof ProviderError && err.code === 'Io' && isMediaError(err)) {
        clearTimeout(timer);
        throw await this.blobReadFailed(id, `${what} failed`, err);
      }
      this.markFailed(id, err);
      if (err instanceof ProviderError && err.code === 'Unavailable') throw err;
      throw new ProviderError('Unavailable', `domain ${id}: ${what} failed: ${(err as Error)?.message ?? err}`, {
        cause: err,
        mayLand: mayStillLand(err),
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs `fn`, a read of blob `child` on domain `id`, as call does with `blobRead`. */
  readBlob<T>(id: string, child: string, fn: (provider: Provider, abort: { readonly signal: AbortSignal }) => Promise<T>): Promise<T> {
    return this.call(id, `read ${child}`, fn, this.timeoutMs, true);
  }

  /**
   * What a read of one blob on domain `id` that failed with a media error (`err`: EIO on one
   * file, say; isMediaError) comes to. A disk that returns EIO for one file (a bad sector) still serves the
   * rest, and taking the whole domain out of service for it would refuse every write that
   * needs it (at (4,2) over 6 domains, all of them). So the domain is asked first (a one-key
   * listing, within the timeout; one probe at a time per domain): if it answers, the error is
   * that blob's, returned as ProviderError 'Corrupt' (read around, reported and repaired as a
   * damaged fragment) and the domain stays healthy; if not, the domain is marked failed (the
   * probe's own failure does that) and the error is 'Unavailable', as call gives. Never throws.
   */
  async blobReadFailed(id: string, what: string, err: unknown): Promise<ProviderError> {
    const message = (err as Error)?.message ?? String(err);
    // A domain already out of service is not asked again (a listing that hangs would cost every
    // such read a timeout), nor brought back by a probe while writes keep it out.
    if (!this.isFailed(id) && (await this.#answers(id))) return new ProviderError('Corrupt', `domain ${id}: ${what} (the domain answers; that blob is damaged): ${message}`, { cause: err });
    if (!this.isFailed(id)) this.markFailed(id, err);
    return new ProviderError('Unavailable', `domain ${id}: ${what}: ${message}`, { cause: err });
  }

  /** Whether domain `id` answers a one-key listing within the timeout (shared by concurrent asks). */
  #answers(id: string): Promise<boolean> {
    let probe = this.#probes.get(id);
    if (!probe) {
      probe = this.call(id, 'list (probe after a failed read)', (p, { signal }) => p.list({ limit: 1, etags: false, signal }))
        .then(
          () => true,
          () => false
        )
        .finally(() => this.#probes.delete(id));
      this.#probes.set(id, probe);
    }
    return probe;
  }

  /** Health as last seen (no probe). */
  snapshot(): DomainHealth[] {
    return this.domains.map((d) => {
      const h = this.#health.get(d.id);
      const failed = !!h && Date.now() - h.failedAt < h.cooldown;
      return failed
        ? { id: d.id, labels: d.labels, state: 'failed' as const, error: h!.error }
        : { id: d.id, labels: d.labels, state: 'ok' as const };
    });
  }
}
