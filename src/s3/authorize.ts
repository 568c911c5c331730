/**
 * @module Authorization: may this principal perform this endpoint's operation?
 *
 * The one place every S3 request is authorized, after authentication (app.ts) and routing.
 * Handlers that authorize a second resource (a copy source, a POST Object form's signer)
 * call {@link authorizeEndpoint} again with the endpoint that describes it.
 *
 * Today every authenticated key may do everything and anonymous requests are refused;
 * per-key grants, bucket ownership, ACLs and bucket policies replace this body.
 */
import type { RequestContext } from './context.js';
import type { Endpoint } from './router/endpoint.js';
import { S3Error } from './errors.js';

/** Who is asking: an access key id, or null for an anonymous request. */
export type Principal = string | null;

/**
 * Resolves when `principal` may perform `e`; throws S3Error `AccessDenied` otherwise.
 * Reads server state only (keys, bucket settings); changes nothing.
 */
export async function authorizeEndpoint(_r: RequestContext, e: Endpoint, principal: Principal): Promise<void> {
  if (principal === null && e.op !== 'CorsPreflight') throw new S3Error('AccessDenied');
}
