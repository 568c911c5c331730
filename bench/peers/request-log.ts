/**
 * @module The benchmark peers' request log: one JSON line per request on stdout, with the
 * fields Strata's default (`--log info`) request line carries (time, level, msg, request id,
 * method, bucket, key, status, bytes in and out, duration), so a peer does the same logging
 * work as Strata when the benchmark compares them. The line is written with one synchronous
 * `process.stdout.write` when the response has finished, as Strata's Logger does.
 */
import { randomBytes } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { HttpBindings } from '@hono/node-server';

const ID_PREFIX = randomBytes(4).toString('hex').toUpperCase();
let counter = 0;

/** 16 hex characters: a per-process random prefix and a counter (unique within the process). */
export function requestId(): string {
  counter = (counter + 1) >>> 0;
  return ID_PREFIX + counter.toString(16).toUpperCase().padStart(8, '0');
}

/** Splits a path-style request path into bucket and key (both undefined at the root). */
export function bucketAndKey(path: string): { bucket?: string; key?: string } {
  const rest = path.replace(/^\/+/, '');
  if (!rest) return {};
  const slash = rest.indexOf('/');
  if (slash < 0) return { bucket: rest };
  return { bucket: rest.slice(0, slash), key: rest.slice(slash + 1) || undefined };
}

/**
 * Hono middleware writing one request line per request to `write` (stdout by default) once
 * the Node response has finished (so streamed bodies are counted whole). Never throws into
 * the request: a failed write is the sink's problem, as for Strata.
 */
export function requestLog(
  write: (line: string) => void = (l) => void process.stdout.write(l)
): MiddlewareHandler<{ Bindings: HttpBindings }> {
  return async (c, next) => {
    const started = performance.now();
    const id = requestId();
    const { incoming, outgoing } = c.env;
    outgoing.once('finish', () => {
      const { bucket, key } = bucketAndKey(c.req.path);
      write(
        `${JSON.stringify({
          time: new Date().toISOString(),
          level: 'info',
          msg: 'request',
          id,
          method: c.req.method,
          bucket,
          key,
          status: outgoing.statusCode,
          // The declared length: listening for 'data' here would start the body flowing.
          in: Number(incoming.headers['content-length'] ?? 0),
          out: Number(c.res.headers.get('content-length') ?? outgoing.getHeader('content-length') ?? 0),
          ms: Math.round((performance.now() - started) * 10) / 10,
        })}\n`
      );
    });
    await next();
  };
}
