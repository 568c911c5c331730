/**
 * @module The seam between the connection guard, which decides that a request body has
 * stalled (fewer bytes than the minimum rate allows), and the code reading that body, which
 * must stop waiting at once, release what it holds and answer `RequestTimeout`.
 *
 * The guard calls {@link cutBody}; body readers race their next read against
 * {@link bodyCut}. Keyed by the request object, so nothing outlives the request. It lives in
 * the S3 layer (the server's guard imports it), so that src/s3 never imports src/server.
 */
import type { IncomingMessage } from 'node:http';

const controllers = new WeakMap<IncomingMessage, AbortController>();

function controllerOf(req: IncomingMessage): AbortController {
  let c = controllers.get(req);
  if (!c) {
    c = new AbortController();
    controllers.set(req, c);
  }
  return c;
}

/**
 * A signal that aborts when the guard cuts `req`'s body for stalling. Pure lookup (creates
 * the per-request controller on first use); never throws.
 */
export function bodyCut(req: IncomingMessage): AbortSignal {
  return controllerOf(req).signal;
}

/** Marks `req`'s body as cut: every {@link bodyCut} signal of it aborts. Idempotent. */
export function cutBody(req: IncomingMessage): void {
  controllerOf(req).abort();
}
