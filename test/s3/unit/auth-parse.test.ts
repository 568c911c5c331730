/**
 * The request path's SigV4 parsing shortcuts: parseAuthorizationV4 (s3/auth/header-v4.ts)
 * on well-formed, spaced, compact and hostile values (missing, repeated, unknown, empty and
 * valueless components, oversized input); canonicalHeaders (sigv4/canonical.ts) gives the
 * same lines for a sorted SignedHeaders list (taken as is) and for unsorted, repeated or
 * upper-case ones (sorted and de-duplicated).
 */
import { describe, expect, it } from 'vitest';
import { parseAuthorizationV4 } from '../../../src/s3/auth/header-v4.js';
import { canonicalHeaders } from '../../../src/sigv4/canonical.js';
import { S3Error } from '../../../src/s3/errors.js';

const CRED = 'AKID/20250601/us-east-1/s3/aws4_request';
const SIG = 'a'.repeat(64);

function malformed(value: string): string {
  try {
    parseAuthorizationV4(value);
  } catch (e) {
    expect(e).toBeInstanceOf(S3Error);
    expect((e as S3Error).code).toBe('AuthorizationHeaderMalformed');
    return (e as S3Error).message;
  }
  throw new Error(`accepted: ${value}`);
}

describe('parseAuthorizationV4', () => {
  it('reads the three components, spaced or compact, in any order', () => {
    const want = { credential: CRED, signedHeaders: 'host;x-amz-date', signature: SIG };
    expect(parseAuthorizationV4(`Credential=${CRED}, SignedHeaders=host;x-amz-date, Signature=${SIG}`)).toEqual(want);
    expect(parseAuthorizationV4(`Credential=${CRED},SignedHeaders=host;x-amz-date,Signature=${SIG}`)).toEqual(want);
    expect(parseAuthorizationV4(` Signature = ${SIG} ,, SignedHeaders=host;x-amz-date , Credential=${CRED} `)).toEqual(want);
  });

  it('refuses missing, repeated, unknown and valueless components', () => {
    expect(malformed(`Credential=${CRED}, SignedHeaders=host`)).toContain('three components');
    expect(malformed(`Credential=, SignedHeaders=host, Signature=${SIG}`)).toContain('three components');
    expect(malformed('')).toContain('three components');
    expect(malformed(`Credential=${CRED}, Credential=${CRED}, SignedHeaders=host, Signature=${SIG}`)).toContain('"Credential"');
    expect(malformed(`Credential=${CRED}, SignedHeaders=host, Signature=${SIG}, Signature=${SIG}`)).toContain('"Signature"');
    expect(malformed(`Credential=${CRED}, SignedHeaders=host, Signature=${SIG}, Extra=1`)).toContain('"Extra"');
    expect(malformed(`Credential=${CRED}, SignedHeaders, Signature=${SIG}`)).toContain('"SignedHeaders"');
    expect(malformed(`credential=${CRED}, SignedHeaders=host, Signature=${SIG}`)).toContain('"credential"');
    expect(malformed(`Credential=${CRED}, SignedHeaders=host, Signature=${SIG}, __proto__=x`)).toContain('"__proto__"');
  });

  it('handles an oversized value in linear time', () => {
    const t = performance.now();
    malformed(`${','.repeat(200_000)}x`);
    malformed(`Credential=${'c'.repeat(200_000)}`);
    expect(performance.now() - t).toBeLessThan(1000);
  });
});

describe('canonicalHeaders', () => {
  const headers = new Map([
    ['host', 'h'],
    ['x-amz-date', 'd'],
    ['x-amz-content-sha256', 'UNSIGNED-PAYLOAD'],
  ]);
  const want = { canonical: 'host:h\nx-amz-content-sha256:UNSIGNED-PAYLOAD\nx-amz-date:d\n', signedHeaders: 'host;x-amz-content-sha256;x-amz-date' };
  it('gives the same lines for sorted, unsorted, repeated and upper-case lists', () => {
    for (const list of [
      ['host', 'x-amz-content-sha256', 'x-amz-date'],
      ['x-amz-date', 'host', 'x-amz-content-sha256'],
      ['host', 'host', 'x-amz-content-sha256', 'x-amz-date'],
      ['Host', 'x-amz-content-sha256', 'X-Amz-Date'],
    ]) {
      expect(canonicalHeaders(headers, list)).toEqual(want);
      expect(canonicalHeaders(headers, new Set(list))).toEqual(want);
    }
  });
  it('does not modify the list it is given', () => {
    const list = ['host', 'x-amz-content-sha256', 'x-amz-date'];
    canonicalHeaders(headers, list).signedHeaders;
    expect(list).toEqual(['host', 'x-amz-content-sha256', 'x-amz-date']);
  });
  it('still throws for a signed header that is absent', () => {
    expect(() => canonicalHeaders(headers, ['host', 'x-amz-missing'])).toThrow(/missing/);
  });
});
