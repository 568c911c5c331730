/**
 * @module The load generator: undici, keep-alive, SigV4 (UNSIGNED-PAYLOAD), one
 * closed-loop worker per connection. Records every latency, errors, bytes, and the
 * server's CPU time over the run (from /proc). `sendChecked` also checks what came back:
 * a PUT's ETag against the body's MD5, a GET's bytes against the body that was PUT.
 */
import { Pool } from 'undici';
import { signRequest } from '../src/sigv4/sign.js';
import { UNSIGNED_PAYLOAD } from '../src/sigv4/hash.js';
import { cpuSeconds, type Target } from './http-targets.js';

export interface RunResult {
  n: number;
  /** Failed operations, `wrong` included. */
  errors: number;
  /** Operations whose response was wrong (`WrongResponseError`: ETag, length or bytes). */
  wrong: number;
  latenciesMs: number[];
  seconds: number;
  bytes: number;
  serverCpuSeconds: number;
  clientCpuSeconds: number;
  firstError?: string;
}

/** A signed request against `t` (path is decoded, e.g. /bucket/key). */
export function signed(t: Target, method: string, path: string, headers: Record<string, string> = {}, query?: Record<string, string>) {
  const host = new URL(t.url).host;
  const s = signRequest(
    { method, path, headers: { host, ...headers }, payloadHash: UNSIGNED_PAYLOAD, ...(query ? { query } : {}) },
    { credentials: { accessKeyId: t.accessKeyId, secretAccessKey: t.secretAccessKey }, region: 'us-east-1', service: 's3' }
  );
  return { path: s.encodedQuery ? `${s.encodedPath}?${s.encodedQuery}` : s.encodedPath, headers: { host, ...headers, ...s.headers } };
}

export function pool(t: Target, connections: number): Pool {
  return new Pool(t.url, { connections, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
}

/** One request; resolves with body bytes read, throws on a non-2xx status. */
export async function send(p: Pool, t: Target, method: string, path: string, body?: Uint8Array, extra: Record<string, string> = {}): Promise<number> {
  const headers = body ? { ...extra, 'content-length': String(body.length) } : extra;
  const req = signed(t, method, path, headers);
  const res = await p.request({ method, path: req.path, headers: req.headers, ...(body ? { body } : {}) });
  let n = 0;
  for await (const chunk of res.body) n += (chunk as Buffer).length;
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: HTTP ${res.statusCode}`);
  return n;
}

/** What a checked request must get back; absent fields are not checked. */
export interface Expect {
  /** The ETag header, quotes included (a PUT's MD5 of the body). */
  etag?: string;
  /** The exact body (compared chunk by chunk as it arrives, no copy). */
  body?: Uint8Array;
  /** The body length, when the bytes themselves cannot be known (a server that stores nothing). */
  length?: number;
}

/** A response that was not what the request expected (wrong ETag, bytes or length). */
export class WrongResponseError extends Error {
  readonly code = 'WrongResponse';
}

/**
 * One request whose response is checked against `expect`; resolves with the body bytes read.
 * Throws on a non-2xx status and `WrongResponseError` on a wrong ETag, length or byte. The
 * body is drained either way, so the connection stays usable.
 */
export async function sendChecked(p: Pool, t: Target, method: string, path: string, body: Uint8Array | undefined, expect: Expect): Promise<number> {
  const headers: Record<string, string> = body ? { 'content-length': String(body.length) } : {};
  const req = signed(t, method, path, headers);
  const res = await p.request({ method, path: req.path, headers: req.headers, ...(body ? { body } : {}) });
  const want = expect.body;
  let n = 0;
  let wrong = false;
  for await (const c of res.body) {
    const chunk = c as Buffer;
    if (want && !wrong) wrong = n + chunk.length > want.length || !chunk.equals(want.subarray(n, n + chunk.length));
    n += chunk.length;
  }
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: HTTP ${res.statusCode}`);
  const length = want?.length ?? expect.length;
  if (wrong || (length !== undefined && n !== length)) throw new WrongResponseError(`${method} ${path}: ${n} bytes${wrong ? ', content differs' : ''} (expected ${length})`);
  if (expect.etag !== undefined && res.headers.etag !== expect.etag) {
    throw new WrongResponseError(`${method} ${path}: ETag ${String(res.headers.etag)}, expected ${expect.etag}`);
  }
  return n;
}

/**
 * Runs `conc` closed-loop workers for `durationMs`, each calling `op(worker, i)` back to
 * back; returns latencies and the server CPU consumed meanwhile.
 */
export async function closedLoop(
  t: Target,
  conc: number,
  durationMs: number,
  op: (worker: number, i: number) => Promise<number>
): Promise<RunResult> {
  const latenciesMs: number[] = [];
  let errors = 0;
  let wrong = 0;
  let bytes = 0;
  let firstError: string | undefined;
  const cpu0 = cpuSeconds(t.pid);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + durationMs;
  await Promise.all(
    Array.from({ length: conc }, async (_, w) => {
      for (let i = 0; performance.now() < end; i++) {
        const s = performance.now();
        try {
          // Not `bytes += await op()`: that reads `bytes` before the await and loses the other workers' additions.
          const got = await op(w, i);
          bytes += got;
          latenciesMs.push(performance.now() - s);
        } catch (err) {
          errors++;
          if (err instanceof WrongResponseError) wrong++;
          firstError ??= String(err);
        }
      }
    })
  );
  const seconds = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const out: RunResult = {
    n: latenciesMs.length,
    errors,
    wrong,
    latenciesMs,
    seconds,
    bytes,
    serverCpuSeconds: cpuSeconds(t.pid) - cpu0,
    clientCpuSeconds: (c.user + c.system) / 1e6,
  };
  if (firstError) out.firstError = firstError;
  return out;
}
