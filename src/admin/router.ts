/**
 * @module The admin HTTP API: a small router under `/_strata/admin/v1/`, a path no S3
 * bucket can take (bucket names have no `_`), served on the S3 port.
 *
 * Every admin request is authenticated like an S3 request (SigV4, Authorization header
 * only: no presigned URLs, which travel in logs and browser histories) with a SIGNED body
 * (`x-amz-content-sha256` is the body's hex SHA-256, so a captured request cannot carry
 * another body), and only admin keys pass. Authentication comes before routing, so an
 * unauthenticated client learns nothing about the routes. Routes are tables of
 * {@link AdminRoute}; later features (history, restore, fork, gc) add theirs to ROUTES.
 */
import type { RequestContext } from '../s3/context.js';
import { verifyRequest } from '../s3/auth/index.js';
import { bucketFromHost } from '../s3/router/virtual-host.js';
import { percentDecode, splitTarget } from '../sigv4/raw-target.js';
import { AdminError, sendJsonError } from './http.js';
import { continueIfExpected } from '../s3/expect-continue.js';
import { KEY_ROUTES } from './keys.js';
import { FORK_ROUTES } from './forks.js';
import { HISTORY_ROUTES } from './history.js';
import { GC_ROUTES } from './gc.js';
import { LIFECYCLE_ROUTES } from './lifecycle.js';
import { EXPIRE_ROUTES } from './expire.js';
import { SCRUB_ROUTES } from './scrub.js';

/** Every admin path starts with this; the API version follows. */
export const ADMIN_PREFIX = '/_strata/';
const API_ROOT = ['_strata', 'admin', 'v1'];

export interface AdminRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path segments after /_strata/admin/v1; `:name` captures one segment. */
  path: string[];
  /** Operation name for logs and metrics. */
  op: string;
  handle(r: RequestContext, params: Record<string, string>): Promise<void>;
}

/** Every admin route. */
const ROUTES: AdminRoute[] = [...KEY_ROUTES, ...FORK_ROUTES, ...HISTORY_ROUTES, ...EXPIRE_ROUTES, ...GC_ROUTES, ...LIFECYCLE_ROUTES, ...SCRUB_ROUTES];

/** Whether `r` is addressed to the admin API (path-style `/_strata/...`, not a virtual-hosted bucket). */
export function isAdminRequest(r: RequestContext): boolean {
  if (!r.rawTarget.startsWith(ADMIN_PREFIX)) return false;
  return bucketFromHost(r.headers.host, r.deps.baseDomain) === undefined;
}

function match(segments: string[], method: string): { route: AdminRoute; params: Record<string, string> } {
  let pathMatched = false;
  for (const route of ROUTES) {
    if (route.path.length !== segments.length) continue;
    const params: Record<string, string> = {};
    if (!route.path.every((p, i) => (p.startsWith(':') ? ((params[p.slice(1)] = segments[i]!), true) : p === segments[i]))) continue;
    pathMatched = true;
    if (route.method === method) return { route, params };
  }
  if (pathMatched) throw new AdminError(405, 'MethodNotAllowed', `${method} is not allowed on this admin resource`);
  throw new AdminError(404, 'NoSuchRoute', 'no such admin resource');
}

/** Authenticates, authorizes (admin keys only), routes and answers an admin request; never throws. */
export async function handleAdmin(r: RequestContext): Promise<void> {
  r.op = 'Admin';
  try {
    const auth = verifyRequest(
      { method: r.method, rawTarget: r.rawTarget, headers: r.headers, now: new Date() },
      (id) => r.deps.keys.get(id),
      { ...(r.deps.region ? { region: r.deps.region } : {}) }
    );
    r.auth = auth;
    if (auth.form !== 'header') throw new AdminError(403, 'AccessDenied', 'admin requests must be signed in the Authorization header');
    if (auth.payload.mode !== 'sha256') {
      throw new AdminError(400, 'UnsignedPayload', 'admin requests must sign their body: x-amz-content-sha256 must be its hex SHA-256');
    }
    if (!r.deps.keys.key(auth.accessKeyId)?.admin) throw new AdminError(403, 'AccessDenied', 'only admin keys may use the admin API');
    continueIfExpected(r);
    const { rawPath, rawQuery } = splitTarget(r.rawTarget);
    if (rawQuery !== '') throw new AdminError(400, 'InvalidRequest', 'admin requests take no query string');
    let segments: string[];
    try {
      segments = rawPath.split('/').slice(1).map((s) => percentDecode(s));
    } catch {
      throw new AdminError(400, 'InvalidRequest', 'malformed percent-encoding in the path');
    }
    if (segments.at(-1) === '') segments.pop();
    if (!API_ROOT.every((s, i) => segments[i] === s)) throw new AdminError(404, 'NoSuchRoute', 'no such admin API version (this server speaks /_strata/admin/v1)');
    const { route, params } = match(segments.slice(API_ROOT.length), r.method);
    r.op = route.op;
    await route.handle(r, params);
  } catch (err) {
    sendJsonError(r, err);
  }
}
