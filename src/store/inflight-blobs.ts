/**
 * @module Blobs written by requests still in flight: what GC must never sweep although no
 * durable state names them yet.
 *
 * A PUT (or UploadPart) writes its carrier chunks first and names them only in the commit
 * that follows, which may come long after the first chunk (a 5 GiB body over a slow link).
 * Marking from the durable anchor cannot see them, and a grace period only covers requests
 * shorter than itself. So every chunk is registered here before its write starts, under a
 * ticket the request closes once its commit is applied (or the request failed and deleted its
 * chunks). A sweep skips a blob that is registered now, or whose ticket closed after the
 * sweep's mark began (that mark read an anchor from before the commit that names it).
 *
 * Process-local: it protects the writes of the process that runs GC. Another process writing
 * the same repository is covered by the grace period (GC does not run beside other writers
 * today; the repository is single-writer through its directory lock or anchor fencing).
 */
import type { BlobBody, Provider, PutOptions } from '../provider/provider.js';

/** How long a closed ticket's blobs stay protected, ms: longer than any mark and sweep. */
const KEEP_CLOSED_MS = 6 * 3_600_000;

export interface InflightTicket {
  /** Registers `key` before its write starts. */
  add(key: string): void;
  /** Whether close() was called. */
  readonly closed: boolean;
  /** Ends the request: its blobs are named by an applied commit, or were abandoned. */
  close(): void;
}

export class InflightBlobs {
  /** Open tickets' blob counts by key. */
  readonly #open = new Map<string, number>();
  /** When each blob's last ticket closed, ms (insertion order is closing order). */
  readonly #closed = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A ticket for one request's blobs. Closing it twice is harmless. */
  open(): InflightTicket {
    const keys: string[] = [];
    let closed = false;
    return {
      get closed() {
        return closed;
      },
      add: (key) => {
        if (closed) throw new Error('inflight ticket used after close');
        keys.push(key);
        this.#open.set(key, (this.#open.get(key) ?? 0) + 1);
      },
      close: () => {
        if (closed) return;
        closed = true;
        const now = this.#now();
        for (const k of keys) {
          const n = (this.#open.get(k) ?? 1) - 1;
          if (n > 0) this.#open.set(k, n);
          else this.#open.delete(k);
          this.#closed.delete(k);
          this.#closed.set(k, now);
        }
        this.#prune(now);
      },
    };
  }

  /** Whether a sweep whose mark began at `markStarted` (ms) must keep `key`. */
  protects(key: string, markStarted: number): boolean {
    if (this.#open.has(key)) return true;
    const closedAt = this.#closed.get(key);
    return closedAt !== undefined && closedAt >= markStarted;
  }

  /** Blobs registered by open tickets (metrics, tests). */
  get openBlobs(): number {
    return this.#open.size;
  }

  #prune(now: number): void {
    for (const [k, t] of this.#closed) {
      if (now - t < KEEP_CLOSED_MS) break;
      this.#closed.delete(k);
    }
  }
}

/**
 * `provider` with every key it puts registered on `ticket` before the put starts: for writers
 * whose blobs are named only once they finish (a checkpoint's runs and root, a fork's past
 * state), so that GC keeps what they wrote meanwhile, whatever the grace.
 */
export function ticketed(provider: Provider, ticket: InflightTicket): Provider {
  // Readers made while writing (a run's handle) keep this provider for as long as the run
  // lives: methods are bound once, and a put after the ticket closed is not registered.
  const bound = new Map<PropertyKey, unknown>();
  const put = (key: string, body: BlobBody, options?: PutOptions) => {
    if (!ticket.closed) ticket.add(key);
    return provider.put(key, body, options);
  };
  return new Proxy(provider, {
    get(target, prop) {
      if (prop === 'put') return put;
      if (bound.has(prop)) return bound.get(prop);
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      const f = (v as (...a: unknown[]) => unknown).bind(target);
      bound.set(prop, f);
      return f;
    },
  });
}
