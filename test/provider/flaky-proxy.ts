/**
 * A tiny HTTP server on 127.0.0.1 standing in front of s3rver for the s3 provider's
 * wire tests: it records every request (to re-verify signatures independently) and
 * misbehaves on demand before proxying: answers 503 SlowDown / 500 / 429, resets the
 * connection, or never answers.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Fault = 'slowdown' | 'internal' | 'throttle' | 'reset' | 'reset-after-body' | 'hang';

export interface RecordedRequest {
  method: string;
  /** Raw path with query, as received. */
  url: string;
  headers: IncomingMessage['headers'];
  fault?: Fault;
}

export interface FlakyProxy {
  endpoint: string;
  requests: RecordedRequest[];
  /** Faults to apply to the next requests, in order; then requests are proxied. */
  faults: Fault[];
  close(): Promise<void>;
}

const ERROR_XML: Record<string, [number, string]> = {
  slowdown: [503, 'SlowDown'],
  internal: [500, 'InternalError'],
  throttle: [429, 'TooManyRequests'],
};

export async function startFlakyProxy(upstream: string): Promise<FlakyProxy> {
  const target = new URL(upstream);
  const sockets = new Set<Socket>();
  const state: FlakyProxy = { endpoint: '', requests: [], faults: [], close: async () => {} };
  const server: Server = createServer((req, res) => {
    const fault = state.faults.shift();
    state.requests.push({ method: req.method!, url: req.url!, headers: req.headers, fault });
    if (fault === 'reset') return void req.socket.destroy();
    if (fault === 'hang') return;
    if (fault === 'reset-after-body') {
      req.on('end', () => req.socket.destroy());
      return void req.resume();
    }
    if (fault) {
      const [status, code] = ERROR_XML[fault];
      req.resume();
      res.writeHead(status, { 'content-type': 'application/xml', 'retry-after': '0' });
      return void res.end(
        `<?xml version="1.0"?><Error><Code>${code}</Code><Message>injected</Message></Error>`
      );
    }
    const up = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (upRes) => {
        res.writeHead(upRes.statusCode!, upRes.headers);
        upRes.pipe(res);
      }
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}
