/**
 * @module The S3 application: one Hono route that runs every request through
 *
 *   /health (anonymous GET), /metrics (bearer token) | admin API (/_strata/admin/, admin keys)
 *   | CORS preflight (OPTIONS, no auth)
 *   -> authenticate (SigV4 header / presigned / SigV2 presigned / none: anonymous; a POST
 *      Object form is authenticated by its handler, from the form's own fields)
 *   -> route the raw request-target to an Endpoint -> dispatch -> respond
 *
 * and then logs one structured line and records metrics. Handlers write to Node's
 * ServerResponse directly. The server installs {@link requestListener} on its Node HTTP
 * server; {@link createApp} wraps the same handler as a Hono app for embedding.
 */
import { admitRequest } from './admission.js';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Hono } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { RequestContext, type ServerDeps } from './context.js';
import { verifyRequest, type SecretLookup, type VerifyOptions } from './auth/index.js';
import { route, type RouteOptions } from './router.js';
import { dispatch } from './dispatch.js';
import { authorizeEndpoint } from './authorize.js';
import { applyCors, handlePreflight } from './cors.js';
import { checkSseHeaders } from './sse.js';
import { refuseUnhonouredHeaders } from './unhonoured-headers.js';
import { hoistQueryHeaders } from './query-headers.js';
import { sendEmpty, sendError } from './respond.js';
import type { Endpoint } from './router/endpoint.js';
import { checkHeaderSection } from './header-limits.js';
import { handleAdmin, isAdminRequest } from '../admin/router.js';
import { continueIfExpected } from './expect-continue.js';
import { requestAsOf } from './as-of.js';

const ID_PREFIX = randomBytes(4).toString('hex').toUpperCase();
let counter = 0;
/** 16 hex characters: a per-process random prefix and a counter (cheap, unique). */
function newRequestId(): string {
  counter = (counter + 1) >>> 0;
  return ID_PREFIX + counter.toString(16).toUpperCase().padStart(8, '0');
}

interface DepsOptions {
  route: RouteOptions;
  verify: VerifyOptions;
  lookup: SecretLookup;
}

/**
 * Per-deps options of routing and authentication, built at a deps' first request (not per
 * request): region and baseDomain are read then, as the server sets them before it serves.
 */
const depsOptions = new WeakMap<ServerDeps, DepsOptions>();

function optionsOf(deps: ServerDeps): DepsOptions {
  let o = depsOptions.get(deps);
  if (!o) {
    const route: RouteOptions = deps.baseDomain ? { baseDomain: deps.baseDomain } : {};
    const verify: VerifyOptions = { ...(deps.region ? { region: deps.region } : {}), ...(deps.baseDomain ? { baseDomain: deps.baseDomain } : {}) };
    depsOptions.set(deps, (o = { route, verify, lookup: (id) => deps.secrets.get(id) }));
  }
  return o;
}

/** Handles one request end to end; never throws. */
export async function handleRequest(incoming: IncomingMessage, res: ServerResponse, deps: ServerDeps): Promise<void> {
  const r = new RequestContext(incoming, res, deps, newRequestId());
  deps.metrics.inFlight++;
  try {
    if (deps.internal?.(r)) return;
    checkHeaderSection(incoming.rawHeaders, r.rawTarget);
    if (isAdminRequest(r)) return await handleAdmin(r);
    if (r.method === 'OPTIONS') {
      r.op = 'CorsPreflight';
      let bucket: string | undefined;
      try {
        const e = route({ method: r.method, rawTarget: r.rawTarget, host: r.headers.host, headers: r.headers }, deps.baseDomain ? { baseDomain: deps.baseDomain } : {});
        if ('bucket' in e) bucket = e.bucket;
      } catch {
        bucket = undefined;
      }
      r.bucket = bucket;
      handlePreflight(r, bucket);
      return;
    }
    const opts = optionsOf(deps);
    const routeIt = () => route({ method: r.method, rawTarget: r.rawTarget, host: r.headers.host, headers: r.headers }, opts.route);
    // A browser form upload (POST Object) carries its credentials in the form, not in the
    // request: its handler authenticates the form's signer and authorizes it. Any other
    // request is authenticated before routing errors are reported.
    let endpoint: Endpoint | undefined;
    if (r.method === 'POST') {
      try {
        endpoint = routeIt();
      } catch {
        endpoint = undefined;
      }
    }
    if (endpoint?.op !== 'PostObject') {
      r.auth = verifyRequest({ method: r.method, rawTarget: r.rawTarget, headers: r.headers, now: new Date() }, opts.lookup, opts.verify);
      // x-amz-* headers a presigned URL carries in its query count as headers (routing too).
      hoistQueryHeaders(r.rawTarget, r.auth, r.headers);
    }
    endpoint ??= routeIt();
    r.op = endpoint.op;
    if ('bucket' in endpoint) r.bucket = endpoint.bucket;
    if ('key' in endpoint) r.key = endpoint.key;
    applyCors(r, r.bucket);
    // Counted against its key's share from here (a POST form is anonymous until its handler
    // reads the signer from the form, then its signer's).
    r.enterKeyShare(r.auth?.accessKeyId ?? null);
    if (endpoint.op !== 'PostObject') await authorizeEndpoint(r, endpoint, r.auth!.accessKeyId);
    r.asOf = requestAsOf(r, endpoint);
    checkSseHeaders(r, endpoint);
    refuseUnhonouredHeaders(r.method, endpoint, r.headers);
    // Budgets from what the request declares, before 100 Continue and any body byte.
    admitRequest(r, endpoint);
    // The body is wanted only now (a POST Object form is authenticated from its body).
    continueIfExpected(r);
    await dispatch(r, endpoint);
    if (!r.res.headersSent) sendEmpty(r, 200);
  } catch (err) {
    sendError(r, err);
  } finally {
    r.leaveKeyShare();
    deps.metrics.inFlight--;
    const seconds = (performance.now() - r.started) / 1000;
    const status = r.res.statusCode;
    deps.metrics.observe(r.op, status, seconds, r.bytesIn, r.bytesOut);
    if (deps.log.infoEnabled !== false) deps.log.info('request', {
      id: r.id,
      op: r.op,
      method: r.method,
      bucket: r.bucket,
      key: r.key,
      status,
      code: r.errorCode,
      in: r.bytesIn,
      out: r.bytesOut,
      ms: Math.round(seconds * 10000) / 10,
    });
  }
}

/**
 * The request listener the server installs on its Node HTTP server: each request goes
 * straight to handleRequest, with no Hono app and no web Request object in between (they
 * were ~5% of a 4 KiB GET's server CPU and did nothing handleRequest uses). A failure
 * handleRequest could not answer (it answers everything it can) destroys the connection.
 */
export function requestListener(deps: ServerDeps): (incoming: IncomingMessage, res: ServerResponse) => void {
  return (incoming, res) => {
    handleRequest(incoming, res, deps).catch(() => res.destroy());
  };
}

/**
 * The same service as a Hono app (a single route handing Node's request/response to
 * handleRequest), for embedding it in a Hono server of one's own (@hono/node-server).
 */
export function createApp(deps: ServerDeps): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  app.all('*', async (c) => {
    await handleRequest(c.env.incoming, c.env.outgoing, deps);
    return RESPONSE_ALREADY_SENT;
  });
  return app;
}
