/**
 * @module SSE-C keys travel only where no one else can read them.
 *
 * A customer-provided key is the one secret SSE-C rests on: Strata never stores it, but a
 * request carrying it over plain HTTP hands it to anyone on the path. S3 refuses such
 * requests ("must be made over a secure connection"), and so does Strata, unless
 *
 *   - the connection is TLS (--tls-cert / --tls-key), or
 *   - the client is on this host (a loopback address: a TLS-terminating proxy beside the
 *     server, local tools, tests), or
 *   - the operator said the network is trusted (`--sse-c-over-http`: a TLS-terminating proxy
 *     on another host). A client's own X-Forwarded-Proto is never taken as proof.
 *
 * The refusal comes before the key is used for anything: nothing is read or written.
 */
import { isIP } from 'node:net';
import type { RequestContext } from './context.js';
import { S3Error } from './errors.js';

/** True when `address` (as Node reports a peer) is a loopback address. Pure. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
  if (isIP(a) === 4) return a.startsWith('127.');
  return a === '::1';
}

/**
 * Throws S3Error `InvalidRequest` (400, as S3 answers) when request `r` may not carry an
 * SSE-C key: plain HTTP from another host without `--sse-c-over-http`. Reads only the
 * connection and the server's configuration.
 */
export function requireSecureKeyTransport(r: RequestContext): void {
  if (r.deps.sseCOverHttp) return;
  const socket = r.incoming.socket as { encrypted?: boolean; remoteAddress?: string } | null;
  if (socket?.encrypted === true || isLoopback(socket?.remoteAddress)) return;
  throw new S3Error('InvalidRequest', 'Requests specifying Server Side Encryption with Customer provided keys must be made over a secure connection.');
}
