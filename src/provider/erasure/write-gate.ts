/**
 * @module Admission for the erasure provider's writes: what all writes in flight together may
 * hold in file descriptors and in stripe memory.
 *
 * A striped write holds one temporary file per fragment (k + m: 14 at (10,4)) and about three
 * framed stripes of memory (one being filled, one being written, one queued: write.ts) for as
 * long as its body takes to arrive; a replicated one holds m + 1 files and two copies of its
 * bytes. The store's pending budget counts one carrier segment per upload, not this, and the
 * connection cap lets hundreds of uploads run at once: under a limit of 1,024 open files 64
 * concurrent striped PUTs at (10,4) failed their opens (EMFILE) and answered 503, and each
 * striped write may hold ~10 MiB at the default cell size (1.3 GiB at a 64 MiB cell).
 *
 * So every write enters the gate with its cost before it reads any of its body, and leaves
 * when it is done. One that does not fit waits, in arrival order (a small write never jumps
 * ahead of a large one, so neither starves), up to `waitMs`; then it is refused with
 * ProviderError 'Unavailable' (S3 503, which clients retry), having read nothing. A write
 * costlier than the whole gate is admitted when it is alone.
 *
 * With an owner share (`ownerShare` < 1: the server's --key-share, s3/key-share.ts), the writes
 * of one owner (PutOptions.owner, an access key) hold at most that share of the descriptors and
 * of the bytes: one client's many stalled uploads cannot take every place. A write past its
 * owner's share waits, for its owner's own writes to finish, without holding up the writes of
 * other owners queued behind it (arrival order still holds among writes that may go); one that
 * costs more than the share is admitted when its owner has nothing in flight.
 */
import { ownerText, ProviderError } from '../provider.js';
import { ERASURE_DEFAULTS } from './config.js';
import { framedLength } from './geometry.js';
import type { ErasureConfig } from './types.js';

/** What one write holds while in flight. */
export interface WriteCost {
  /** Temporary files (or child connections) it keeps open. */
  descriptors: number;
  /** Bytes of buffers it keeps. */
  bytes: number;
}

/** Limits and behaviour of a gate. */
export interface WriteGateLimits {
  descriptors: number;
  bytes: number;
  /** How long a write may wait for room before it is refused, ms. */
  waitMs: number;
  /** Writes that may wait at once; more are refused at once. */
  maxWaiters: number;
  /** Share of `descriptors` and `bytes` one owner's writes may hold, 0-1; absent or 1: no per-owner cap. */
  ownerShare?: number;
}

/** Running figures, exported as metrics. */
export interface WriteGateStats {
  /** Writes holding a place now. */
  inFlight: number;
  /** Writes waiting for one. */
  waiting: number;
  /** Of those, the ones the gate has no room for now (what makes the server cut stalled bodies
   * sooner: server.ts pressure); not those that would fit but wait for their owner's own
   * writes to finish (a key at its share does not shorten everyone's window). */
  waitingForRoom: number;
  /** Writes refused (waited too long, or too many waiting). */
  refused: number;
  /** Most writes in flight at once. */
  peakInFlight: number;
  /** Descriptors and bytes the writes in flight hold (by their declared cost). */
  descriptors: number;
  bytes: number;
}

interface Waiter {
  cost: WriteCost;
  owner: string | undefined;
  grant(): void;
  /** Leaves the queue rejected (the gate closed). */
  drop(): void;
}

export class WriteGate {
  readonly limits: WriteGateLimits;
  readonly #waiters: Waiter[] = [];
  #inFlight = 0;
  #peak = 0;
  #refused = 0;
  #descriptors = 0;
  #bytes = 0;
  #closed = false;
  /** What each owner's writes in flight hold (owners with a write in flight only). */
  readonly #owners = new Map<string, WriteCost>();
  /** One owner's cap (ownerShare of the limits), or undefined: no per-owner cap. */
  readonly #ownerCap: WriteCost | undefined;

  constructor(limits: WriteGateLimits) {
    for (const [name, v] of Object.entries(limits)) {
      if (name === 'ownerShare') {
        if (!(v > 0 && v <= 1)) throw new RangeError(`WriteGate: ownerShare ${v}`);
      } else if (!(v >= 0) || (name !== 'waitMs' && name !== 'maxWaiters' && !(v >= 1))) throw new RangeError(`WriteGate: ${name} ${v}`);
    }
    this.limits = limits;
    const share = limits.ownerShare ?? 1;
    this.#ownerCap = share < 1 ? { descriptors: Math.max(1, Math.floor(limits.descriptors * share)), bytes: Math.max(1, Math.floor(limits.bytes * share)) } : undefined;
  }

  get stats(): WriteGateStats {
    return {
      inFlight: this.#inFlight,
      waiting: this.#waiters.length,
      waitingForRoom: this.#waiters.filter((w) => !this.#fits(w.cost)).length,
      refused: this.#refused,
      peakInFlight: this.#peak,
      descriptors: this.#descriptors,
      bytes: this.#bytes,
    };
  }

  /**
   * Resolves, once `cost` fits (clamped to the gate's size, so any write fits an idle gate),
   * to the function that gives it back (idempotent). Rejects with ProviderError 'Unavailable'
   * naming `what` when the wait runs out or too many are waiting, and with ProviderError
   * 'Aborted' (not counted as refused) when `signal` aborts first. `owner`: whose share the
   * write counts against (module note); undefined: none.
   */
  enter(cost: WriteCost, what: string, signal?: AbortSignal, owner?: string): Promise<() => void> {
    if (this.#closed) return Promise.reject(closedError(what));
    const c = { descriptors: Math.min(cost.descriptors, this.limits.descriptors), bytes: Math.min(cost.bytes, this.limits.bytes) };
    if (this.#fits(c) && this.#ownerFits(owner, c) && this.#nothingAhead(owner)) return Promise.resolve(this.#take(c, owner));
    if (this.#waiters.length >= this.limits.maxWaiters || this.limits.waitMs <= 0) return Promise.reject(this.#refusal(what, owner, c));
    if (signal?.aborted) return Promise.reject(new ProviderError('Aborted', `${what}: aborted`, { cause: signal.reason }));
    return new Promise((resolve, reject) => {
      const leave = (err: ProviderError) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(err);
        // The head may have been this one: the next may fit now.
        this.#admit();
      };
      const onAbort = () => leave(new ProviderError('Aborted', `${what}: aborted`, { cause: signal!.reason }));
      const waiter: Waiter = {
        cost: c,
        owner,
        grant: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(this.#take(c, owner));
        },
        drop: () => leave(closedError(what)),
      };
      const timer = setTimeout(() => leave(this.#refusal(what, owner, c)), this.limits.waitMs);
      timer.unref?.();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Refuses every waiting write and every later one (ProviderError 'Io': the provider closed);
   * writes in flight finish or fail on their own. */
  close(): void {
    this.#closed = true;
    for (const w of [...this.#waiters]) w.drop();
  }

  #fits(c: WriteCost): boolean {
    return this.#descriptors + c.descriptors <= this.limits.descriptors && this.#bytes + c.bytes <= this.limits.bytes;
  }

  /** Whether `owner`'s writes may take `c` more: within its share, or it has nothing in flight. */
  #ownerFits(owner: string | undefined, c: WriteCost): boolean {
    const cap = this.#ownerCap;
    if (cap === undefined || owner === undefined) return true;
    const held = this.#owners.get(owner);
    return held === undefined || (held.descriptors + c.descriptors <= cap.descriptors && held.bytes + c.bytes <= cap.bytes);
  }

  /** Whether `w` waits only for its owner's own writes (its share is full). */
  #heldBack(w: Waiter): boolean {
    return !this.#ownerFits(w.owner, w.cost);
  }

  /** No waiter may go before a new write of `owner`: every one waiting is held back by its
   * owner's share, and none of them is `owner`'s (an owner's writes keep their order). */
  #nothingAhead(owner: string | undefined): boolean {
    return this.#waiters.every((w) => this.#heldBack(w) && (owner === undefined || w.owner !== owner));
  }

  #take(c: WriteCost, owner: string | undefined): () => void {
    this.#inFlight++;
    this.#peak = Math.max(this.#peak, this.#inFlight);
    this.#descriptors += c.descriptors;
    this.#bytes += c.bytes;
    const counted = this.#ownerCap !== undefined && owner !== undefined;
    if (counted) {
      const held = this.#owners.get(owner) ?? { descriptors: 0, bytes: 0 };
      this.#owners.set(owner, { descriptors: held.descriptors + c.descriptors, bytes: held.bytes + c.bytes });
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#inFlight--;
      this.#descriptors -= c.descriptors;
      this.#bytes -= c.bytes;
      if (counted) {
        const held = this.#owners.get(owner)!;
        const left = { descriptors: held.descriptors - c.descriptors, bytes: held.bytes - c.bytes };
        if (left.descriptors <= 0 && left.bytes <= 0) this.#owners.delete(owner);
        else this.#owners.set(owner, left);
      }
      this.#admit();
    };
  }

  /** Grants waiters in arrival order while each fits the gate, passing over those their owner's
   * share holds back and every later one of the same owner (they do not hold up other owners'
   * writes, and an owner's small writes do not pass its large one); stops at the first that
   * does not fit the gate, so a small write never jumps ahead of a large one. */
  #admit(): void {
    if (this.#closed || this.#waiters.length === 0) return;
    const passed = new Set<string>();
    for (let i = 0; i < this.#waiters.length; ) {
      const w = this.#waiters[i]!;
      if (w.owner !== undefined && (passed.has(w.owner) || this.#heldBack(w))) {
        passed.add(w.owner);
        i++;
        continue;
      }
      if (!this.#fits(w.cost)) return;
      this.#waiters.splice(i, 1);
      w.grant();
    }
  }

  #refusal(what: string, owner?: string, c?: WriteCost): ProviderError {
    this.#refused++;
    const s = this.stats;
    const cap = this.#ownerCap;
    if (cap !== undefined && owner !== undefined && c !== undefined && !this.#ownerFits(owner, c)) {
      const held = this.#owners.get(owner)!;
      return new ProviderError(
        'Unavailable',
        `${what}: ${ownerText(owner)} already hold their share of the writes in flight (--key-share: ${held.descriptors} of ${cap.descriptors} descriptors and ` +
          `${Math.ceil(held.bytes / 1048576)} of ${Math.ceil(cap.bytes / 1048576)} MiB); retry later`
      );
    }
    return new ProviderError(
      'Unavailable',
      `${what}: too many writes in flight (${s.inFlight} holding ${s.descriptors} of ${this.limits.descriptors} descriptors and ` +
        `${Math.ceil(s.bytes / 1048576)} of ${Math.ceil(this.limits.bytes / 1048576)} MiB, ${s.waiting} waiting); retry later`
    );
  }
}

function closedError(what: string): ProviderError {
  return new ProviderError('Io', `${what}: erasure provider is closed`);
}

/** Share of the open-files limit the writes in flight may hold together (connections take
 * half, the fs handle caches a quarter: fd-budget.ts; the rest is for log segments, repair
 * and the runtime). */
export const WRITE_DESCRIPTOR_SHARE = 0.125;
/** How long a write waits for room before it is refused, ms: longer than most writes take,
 * short enough that a client is told to retry rather than left hanging. */
export const WRITE_WAIT_MS = 10_000;
/** Writes that may wait at once (the connection cap bounds them too). */
export const MAX_WRITE_WAITERS = 4096;
/** Framed stripes one striped write holds at most (write.ts: filling, writing, queued). */
export const STRIPES_PER_WRITE = 3;

/** The gate's limits for `config` under an open-files limit of `openFiles` (Infinity: none). */
export function writeGateLimits(config: ErasureConfig, openFiles: number): WriteGateLimits {
  const share = Number.isFinite(openFiles) ? Math.floor(openFiles * WRITE_DESCRIPTOR_SHARE) : Number.MAX_SAFE_INTEGER;
  return {
    descriptors: Math.max(config.k + config.m, share),
    bytes: config.writeMemory ?? ERASURE_DEFAULTS.writeMemory,
    waitMs: WRITE_WAIT_MS,
    maxWaiters: MAX_WRITE_WAITERS,
    ...(config.ownerShare !== undefined && config.ownerShare < 1 ? { ownerShare: config.ownerShare } : {}),
  };
}

/** What a striped write of `config` holds: k + m temporary files, STRIPES_PER_WRITE framed
 * stripes, and, when it reads its body a stripe at a time (length unknown), the stripe and its
 * parity cells as well. */
export function stripedCost(config: ErasureConfig, lengthKnown: boolean): WriteCost {
  const n = config.k + config.m;
  return {
    descriptors: n,
    bytes: STRIPES_PER_WRITE * n * framedLength(config.cellSize) + (lengthKnown ? 0 : n * config.cellSize),
  };
}

/** What a replicated write of `length` bytes holds: m + 1 temporary files, the bytes and the
 * framed copy built from them. */
export function replicatedCost(config: ErasureConfig, length: number): WriteCost {
  return { descriptors: config.m + 1, bytes: 2 * length };
}
