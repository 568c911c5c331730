/**
 * @module A pass-through HTTP proxy on 127.0.0.1 that records what a client puts on the
 * wire (method, request-target, headers, response status) before the server sees it.
 *
 * Tests use it to prove which request shapes a real client exercised (restic's signed
 * aws-chunked uploads, rclone's UNSIGNED-PAYLOAD + Content-MD5 PUTs), which the server's
 * own log does not show. Headers are forwarded byte for byte (signatures cover Host and
 * Expect), bodies are piped with backpressure.
 */
import { Agent, createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  target: string;
  /** Lower-case names. */
  headers: IncomingHttpHeaders;
  status?: number;
}

export interface RecordingProxy {
  url: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Starts a proxy in front of `upstream` (http://host:port). */
export async function startRecordingProxy(upstream: string): Promise<RecordingProxy> {
  const up = new URL(upstream);
  const agent = new Agent({ keepAlive: true });
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      target: req.url ?? '/',
      headers: req.headers,
    };
    requests.push(rec);
    // rawHeaders keeps the client's Host (it is signed) and every other header as sent.
    const headers: [string, string][] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2)
      headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
    const out = request(
      {
        host: up.hostname,
        port: up.port,
        method: req.method,
        path: req.url,
        headers: headers.flat(),
        agent,
      },
      (upRes) => {
        rec.status = upRes.statusCode;
        res.writeHead(upRes.statusCode ?? 502, upRes.rawHeaders);
        upRes.pipe(res);
      }
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
