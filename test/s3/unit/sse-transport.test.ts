/**
 * SSE-C keys over plain HTTP: refused from other hosts (as S3 refuses them), accepted over
 * TLS, from loopback, or when the operator vouches for the network (--sse-c-over-http).
 * Regression: a key sent in the clear from anywhere was used as if it had been protected.
 */
import { describe, expect, it } from 'vitest';
import { isLoopback, requireSecureKeyTransport } from '../../../src/s3/sse-transport.js';
import type { RequestContext } from '../../../src/s3/context.js';
import { S3Error } from '../../../src/s3/errors.js';

/** The two things the check reads: the connection and the server option. */
function ctx(socket: { encrypted?: boolean; remoteAddress?: string }, sseCOverHttp?: boolean): RequestContext {
  return { incoming: { socket }, deps: sseCOverHttp === undefined ? {} : { sseCOverHttp } } as unknown as RequestContext;
}

function outcome(r: RequestContext): string {
  try {
    requireSecureKeyTransport(r);
    return 'ok';
  } catch (err) {
    if (err instanceof S3Error) return `${err.status} ${err.code}`;
    throw err;
  }
}

describe('isLoopback', () => {
  it('knows the loopback addresses in every spelling Node reports', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopback(a), a).toBe(true);
  });
  it('and nothing else', () => {
    for (const a of [undefined, '', '192.0.2.7', '10.0.0.1', '::ffff:10.0.0.1', 'fd00::2', '::', '0.0.0.0', '128.0.0.1', '::ffff:128.0.0.1', 'localhost', '127.0.0.1.evil'])
      expect(isLoopback(a), String(a)).toBe(false);
  });
});

describe('requireSecureKeyTransport', () => {
  it('refuses plain HTTP from another host with 400 InvalidRequest', () => {
    expect(outcome(ctx({ remoteAddress: '192.0.2.7' }))).toBe('400 InvalidRequest');
    expect(outcome(ctx({ remoteAddress: 'fd00::2', encrypted: false }))).toBe('400 InvalidRequest');
    expect(outcome(ctx({}))).toBe('400 InvalidRequest');
  });
  it('accepts TLS, loopback, and --sse-c-over-http', () => {
    expect(outcome(ctx({ remoteAddress: '192.0.2.7', encrypted: true }))).toBe('ok');
    expect(outcome(ctx({ remoteAddress: '127.0.0.1' }))).toBe('ok');
    expect(outcome(ctx({ remoteAddress: '::ffff:127.0.0.1' }))).toBe('ok');
    expect(outcome(ctx({ remoteAddress: '192.0.2.7' }, true))).toBe('ok');
    expect(outcome(ctx({ remoteAddress: '192.0.2.7' }, false))).toBe('400 InvalidRequest');
  });
});
