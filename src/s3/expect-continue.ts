/**
 * @module `Expect: 100-continue`, answered only after authorization.
 *
 * The server does not let Node send `100 Continue` on arrival (server.ts handles
 * 'checkContinue' by dispatching the request as usual); the request path (app.ts, and the
 * admin router) calls {@link continueIfExpected} once the body is wanted: after
 * authentication, authorization and header checks (a POST Object form, authenticated from
 * its body, wants it at once). A refused
 * client (bad signature, no permission, no such bucket) gets its error instead of 100 and
 * never sends the body (botocore, the aws CLI and curl all wait for 100 before a large body).
 */
import type { RequestContext } from './context.js';

/** Sends `100 Continue` if the client asked for it and no response has started; call it once per request. */
export function continueIfExpected(r: RequestContext): void {
  if (!r.res.headersSent && /^\s*100-continue\s*$/i.test(r.headers.expect ?? '') && typeof r.res.writeContinue === 'function') r.res.writeContinue();
}
