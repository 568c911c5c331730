/**
 * @module The seam between the connection guard, which decides that a request body has
 * stalled (fewer bytes than the minimum rate allows), and the code reading that body, which
 * must stop waiting at once, release what it holds and answer `RequestTimeout`.
 *
 * The guard calls {@link cutBody}; body readers race their next read against
 * {@link bodyCut}. Keyed by the request object, so nothing outlives the request. It lives in
 * the S3 layer (the server's guard imports it), so that src/s3 never imports src/server.
 *
 * The signal is a {@link CutSignal}, not an AbortSignal: every request body asks for one,
 * and an AbortController plus an EventTarget listener cost a 4 KiB PUT more server CPU
 * than the rest of its body read (profile of bench:http put4k).
 */
import type { IncomingMessage } from 'node:http';

/**
 * The part of AbortSignal a body reader uses ('abort' listeners and `aborted`); an
 * AbortSignal is one. A listener added after the abort is not called: check `aborted`.
 */
export interface CutSignalLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** A one-shot abort signal with plain listeners; each listener is called once, on abort. */
export class CutSignal implements CutSignalLike {
  #aborted = false;
  #listeners: (() => void)[] = [];

  get aborted(): boolean {
    return this.#aborted;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.#aborted) this.#listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.#listeners.indexOf(listener);
    if (i >= 0) this.#listeners.splice(i, 1);
  }

  /** Aborts: calls every listener once, in the order added. Idempotent. */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const l of listeners) l();
  }
}

const signals = new WeakMap<IncomingMessage, CutSignal>();

function signalOf(req: IncomingMessage): CutSignal {
  let s = signals.get(req);
  if (!s) {
    s = new CutSignal();
    signals.set(req, s);
  }
  return s;
}

/**
 * A signal that aborts when the guard cuts `req`'s body for stalling. Pure lookup (creates
 * the per-request signal on first use); never throws.
 */
export function bodyCut(req: IncomingMessage): CutSignal {
  return signalOf(req);
}

/** Marks `req`'s body as cut: every {@link bodyCut} signal of it aborts. Idempotent. */
export function cutBody(req: IncomingMessage): void {
  signalOf(req).abort();
}
