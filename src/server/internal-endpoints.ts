/**
 * @module The server's own endpoints beside S3: `/health` and `/metrics`.
 *
 * `/health` (anonymous GET) says only that the server is up: `{"status":"ok"}`, no
 * sequence numbers or other internals.
 *
 * `/metrics` is not public: Prometheus metrics name operations, buckets' counts, budgets and
 * error rates. It is served on the S3 port only to a request carrying
 * `Authorization: Bearer <--metrics-token>` (as Prometheus' `authorization` /
 * `bearer_token` settings send it), and on the separate `--metrics-listen` address (token
 * required there too when one is configured). With neither option, `/metrics` is an ordinary
 * S3 path (a bucket of that name).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestContext } from '../s3/context.js';
import type { Metrics } from './metrics.js';

const HEALTH_BODY = JSON.stringify({ status: 'ok' });
const METRICS_TYPE = 'text/plain; version=0.0.4';

function pathOf(rawTarget: string): string {
  const q = rawTarget.indexOf('?');
  return q < 0 ? rawTarget : rawTarget.slice(0, q);
}

/** Compares a presented token with the configured one in constant time (hashes equalise lengths). */
export function tokenMatches(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && presented.length === expected.length;
}

/** The bearer token of an Authorization header value, or undefined when it is not `Bearer <token>`. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '');
  return m ? m[1] : undefined;
}

type Answer = { status: number; headers: Record<string, string | number>; body: string };

function metricsAnswer(metrics: Metrics, token: string | undefined, authorization: string | undefined): Answer {
  if (token !== undefined) {
    const presented = bearerToken(authorization);
    if (presented === undefined || !tokenMatches(presented, token)) {
      const body = 'metrics need Authorization: Bearer <token>\n';
      return { status: 401, headers: { 'www-authenticate': 'Bearer realm="strata-metrics"', 'content-type': 'text/plain' }, body };
    }
  }
  return { status: 200, headers: { 'content-type': METRICS_TYPE, 'cache-control': 'no-store' }, body: metrics.render() };
}

function send(res: ServerResponse, base: Record<string, string>, a: Answer): number {
  const len = Buffer.byteLength(a.body);
  res.writeHead(a.status, { ...base, ...a.headers, 'content-length': len });
  res.end(a.body);
  return len;
}

/**
 * Serves /health and /metrics on the S3 port when they are addressed (see the module
 * header); true if it answered. A request signed for S3 is never taken here. The server
 * hands it to the S3 app as its InternalEndpoints port (s3/ports.ts).
 */
export function serveInternal(r: RequestContext, metrics: Metrics): boolean {
  if (r.method !== 'GET') return false;
  const path = pathOf(r.rawTarget);
  const authorization = r.headers.authorization;
  const signedQuery = /[?&](X-Amz-Signature|Signature)=/.test(r.rawTarget);
  if (path === '/health' && authorization === undefined && !signedQuery) {
    r.op = 'Health';
    r.bytesOut += send(r.res, r.baseHeaders, { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: HEALTH_BODY });
    return true;
  }
  if (path !== '/metrics' || r.deps.metricsToken === undefined || signedQuery) return false;
  if (authorization !== undefined && bearerToken(authorization) === undefined) return false; // an S3 request
  r.op = 'Metrics';
  r.bytesOut += send(r.res, r.baseHeaders, metricsAnswer(metrics, r.deps.metricsToken, authorization));
  return true;
}

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the separate metrics listener on `host:port` (port 0: any free port): GET /metrics
 * (bearer token checked when `token` is set) and GET /health; anything else is 404/405.
 * Rejects when the address cannot be bound.
 */
export async function startMetricsListener(host: string, port: number, metrics: Metrics, token: string | undefined): Promise<MetricsListener> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = pathOf(req.url ?? '/');
    const base = { server: 'Strata' };
    if (path !== '/metrics' && path !== '/health') {
      send(res, base, { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found\n' });
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, base, { status: 405, headers: { allow: 'GET, HEAD', 'content-type': 'text/plain' }, body: 'method not allowed\n' });
    } else if (path === '/health') {
      send(res, base, { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: HEALTH_BODY });
    } else {
      send(res, base, metricsAnswer(metrics, token, req.headers.authorization));
    }
    req.resume();
  });
  // Scrapes are small and quick; a stalled client is cut after this long.
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  const url = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
