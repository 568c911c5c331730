/**
 * @module The listening socket, bound FIRST: before the data directory is created, the
 * repository locked or credentials generated, so that a port in use (or a privileged port)
 * fails a start that has touched nothing. Requests that arrive between the bind and the
 * moment the application is ready wait for it (startup takes well under a second).
 *
 * Plain HTTP, or HTTPS on the same port when TLS material is given; the certificate can be
 * replaced on a running listener (setSecureContext) without dropping it or its connections.
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TlsMaterial } from './tls.js';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** What guards connections from the first one on (connection-guard.ts). */
export interface ListenerGuard {
  /** Options the server must be created with (header deadline). */
  serverOptions(): ServerOptions;
  /** Wraps the request listener (the cap answers before the application). */
  wrap(listener: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void;
  /** Starts watching the server's connections; called before it listens. */
  attach(server: Server): void;
}

export interface BoundListener {
  readonly server: Server;
  readonly port: number;
  /** `http://127.0.0.1:9000` or `https://…`; IPv6 hosts in brackets. */
  readonly url: string;
  /** Starts serving: queued and future requests go to `handler`. Call once. */
  ready(handler: RequestHandler): void;
  /** Replaces the certificate for new connections (HTTPS only). */
  setTls(material: TlsMaterial): void;
  /** Stops listening without serving (a start that failed after the bind). */
  abort(): Promise<void>;
}

/**
 * Binds `host:port` (HTTPS when `tls` is given), guarded by `guard` if given. Mutates
 * nothing else. Rejects with the listen error (EADDRINUSE, EACCES, EADDRNOTAVAIL), the
 * message naming the address.
 */
export async function bindListener(
  host: string,
  port: number,
  tls?: TlsMaterial,
  guard?: ListenerGuard
): Promise<BoundListener> {
  let handler: RequestHandler | undefined;
  let aborted = false;
  const waiting: [IncomingMessage, ServerResponse][] = [];
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (handler) void handler(req, res);
    else if (aborted) res.destroy();
    else waiting.push([req, res]);
  };
  const options = guard?.serverOptions() ?? {};
  const listener = guard ? guard.wrap(onRequest) : onRequest;
  const server: Server = tls
    ? createHttpsServer({ ...options, cert: tls.cert, key: tls.key }, listener)
    : createHttpServer(options, listener);
  guard?.attach(server);
  await new Promise<void>((resolve, reject) => {
    const fail = (err: NodeJS.ErrnoException) => {
      const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      const why =
        err.code === 'EADDRINUSE'
          ? 'the address is already in use'
          : err.code === 'EACCES'
            ? 'permission denied'
            : err.message;
      reject(
        Object.assign(new Error(`cannot listen on ${where}: ${why}`), {
          code: err.code,
          cause: err,
        })
      );
    };
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const scheme = tls ? 'https' : 'http';
  return {
    server,
    port: bound,
    url: `${scheme}://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    ready(h) {
      handler = h;
      for (const [req, res] of waiting.splice(0)) void h(req, res);
    },
    setTls(material) {
      if (!tls) throw new Error('this listener serves plain HTTP');
      const tlsServer = server as unknown as Partial<import('node:tls').Server>;
      // Bun's https server has no setSecureContext: say so rather than fail obscurely.
      if (typeof tlsServer.setSecureContext !== 'function')
        throw new Error(
          'this runtime cannot replace the certificate of a running listener: restart to load it'
        );
      tlsServer.setSecureContext({ cert: material.cert, key: material.key });
    },
    async abort() {
      aborted = true;
      for (const [, res] of waiting.splice(0)) res.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
