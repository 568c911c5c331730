/**
 * @module Per-access-key shares of what the server has for everyone: a client holding a valid
 * key may use at most `percent` of
 *
 *   requests in flight   the connection cap's worth (`--max-connections`): a request past its
 *                        key's share is answered 503 SlowDown + Retry-After at once, before
 *                        routing reads anything of its body;
 *   the pending budget   the bytes requests hold in memory (store/budget.ts BudgetShares): a
 *                        reservation past the share is refused with 503 SlowDown (a GET first
 *                        waits for its key's own requests to release room);
 *   the erasure write    the descriptors and stripe memory object-body writes hold
 *   gate                 (provider/erasure/write-gate.ts; the server passes the share as
 *                        ErasureConfig.ownerShare, the key as PutOptions.owner): an upload past
 *                        its key's share waits for that key's own uploads, not for others'.
 *
 * so one key's many slow uploads or large GETs leave room for every other key. Anonymous
 * requests (public buckets, CORS-free probes) count as one identity together, and so do POST
 * Object form uploads until their form is read (their signer is in the body: from then on
 * they count against the signer, RequestContext.enterKeyShare). Presigned URLs count against
 * the key that signed them. The budget share is at least MIN_KEY_SHARE_BYTES. The admin API
 * and /health and /metrics are not counted. At 100% nothing is shared out (one key may take
 * everything, as before); the default, 50%, still lets a single client use half of everything
 * alone while leaving the rest to the others.
 *
 * The shares are caps, not reservations: two keys at 50% can still fill the server between
 * them. They bound what one misbehaving client does to the others.
 */
import { BudgetShares, ownerText, RETRY_AFTER_SECONDS, type PendingBudget, type ShareTicket } from '../store/budget.js';
import { StoreError } from '../store/errors.js';
import { GET_HELD_BYTES } from '../store/chunk-scatter-read.js';

/** Default share of each limit one identity may hold, percent. */
export const DEFAULT_KEY_SHARE_PERCENT = 50;

/** Fewest bytes of the pending budget an identity's share holds (unless the whole budget is
 * smaller): its largest single reservations must fit, or they would be refused every time —
 * a large GET's read-ahead (GET_HELD_BYTES, 6 MiB) beside an encrypted 512 KiB body, held
 * twice, and its body reader. */
export const MIN_KEY_SHARE_BYTES = 2 * GET_HELD_BYTES;

export interface KeyShareLimits {
  /** Share of each limit one identity may hold, 1-100. */
  percent: number;
  /** The server's connection cap (0: none, so no request cap either). */
  maxConnections: number;
}

export class KeyShares {
  readonly percent: number;
  /** Requests one identity may have in flight; 0: no cap. */
  readonly requestCap: number;
  readonly budgets: BudgetShares;
  /** Requests refused because their identity had `requestCap` in flight. */
  refusals = 0;

  constructor(budget: PendingBudget, limits: KeyShareLimits) {
    const { percent, maxConnections } = limits;
    if (!Number.isInteger(percent) || percent < 1 || percent > 100) throw new RangeError(`key share must be 1-100 percent, not ${percent}`);
    this.percent = percent;
    this.requestCap = maxConnections > 0 ? Math.max(1, Math.ceil((maxConnections * percent) / 100)) : 0;
    this.budgets = new BudgetShares(budget, Math.max(MIN_KEY_SHARE_BYTES, Math.floor((budget.limit * percent) / 100)));
  }

  /**
   * Counts one request of `accessKeyId` (null: anonymous) and returns its share of the budget.
   * Throws StoreError 'SlowDown' (503, Retry-After) when the identity has its whole share of
   * requests in flight.
   */
  enter(accessKeyId: string | null): ShareTicket {
    const id = accessKeyId ?? '';
    if (this.requestCap > 0 && this.budgets.requests(id) >= this.requestCap) {
      this.refusals++;
      throw new StoreError('SlowDown', `${ownerText(id)} already have ${this.requestCap} requests in flight, their share of the server's ${this.percent}% (--key-share)`, {
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      });
    }
    return this.budgets.enter(id);
  }
}
