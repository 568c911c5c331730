/**
 * A tiny HTTP server on 127.0.0.1 standing in front of s3rver for the s3 provider's
 * wire tests: it records every request (to re-verify signatures independently) and
 * misbehaves on demand before proxying: answers 503 SlowDown / 500 / 429, resets the
 * connection, never answers, or takes the whole request, resets the connection and sends it
 * on to the server later (`late`: a write that is applied after its client gave up on it).
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Fault = 'slowdown' | 'internal' | 'throttle' | 'reset' | 'reset-after-body' | 'hang' | 'late';

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
  /** Consulted before `faults`: a fault for this request, if any (e.g. by path). */
  rule?: (method: string, url: string) => Fault | undefined;
  /** How long a `late` request waits before it is sent on, ms; with `lateGate`, until it opens. */
  lateMs: number;
  lateGate?: Promise<void>;
  /** `late` requests the server has answered (applied or not), and those still to be sent. */
  landed: number;
  pendingLate: number;
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
  const state: FlakyProxy = { endpoint: '', requests: [], faults: [], lateMs: 1000, landed: 0, pendingLate: 0, close: async () => {} };
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const fault = state.rule?.(req.method!, req.url!) ?? state.faults.shift();
    state.requests.push({ method: req.method!, url: req.url!, headers: req.headers, fault });
    if (fault === 'reset') return void req.socket.destroy();
    if (fault === 'hang') return;
    if (fault === 'late') {
      const chunks: Buffer[] = [];
      state.pendingLate++;
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        req.socket.destroy();
        const send = () => {
          const up = httpRequest(
            { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
            (upRes) => {
              upRes.resume();
              upRes.on('end', () => {
                state.pendingLate--;
                state.landed++;
              });
            }
          );
          up.on('error', () => state.pendingLate--);
          up.end(Buffer.concat(chunks));
        };
        if (state.lateGate) return void state.lateGate.then(send);
        const timer = setTimeout(() => {
          timers.delete(timer);
          send();
        }, state.lateMs);
        timers.add(timer);
      });
      return;
    }
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
    for (const t of timers) clearTimeout(t);
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}
