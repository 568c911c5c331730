/**
 * Query-string authentication: SigV4 presigned URLs (AWS's published example and URLs
 * presigned by @smithy/signature-v4 the way the SDK v3 presigner does) and SigV2 presigned
 * URLs (AWS's published example and an independent reference of the documented algorithm).
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SIGV2_SUBRESOURCES, sigV2Resource, verifyRequest } from '../../../src/s3/auth/index.js';
import { readTarget } from '../../../src/s3/auth/target.js';
import { route } from '../../../src/s3/router.js';
import { NEEDS } from '../../../src/s3/authz/permissions.js';
import { ACCESS_RULES } from '../../../src/s3/authz/policy-actions.js';
import { BUCKET_NOT_IMPLEMENTED, OBJECT_NOT_IMPLEMENTED } from '../../../src/s3/router/subresources.js';
import {
  AWS_EXAMPLE,
  expectS3Error,
  lookup,
  sdkPath,
  smithy,
  TEST_CREDS,
  wireQuery,
} from './helpers.js';

const DATE = new Date('2025-03-04T05:06:07Z');
const HOST = '127.0.0.1:9000';

async function presign(opts: {
  method: string;
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  expiresIn?: number;
}) {
  const signed = await smithy().presign(
    {
      method: opts.method,
      protocol: 'http:',
      hostname: '127.0.0.1',
      port: 9000,
      path: opts.path,
      query: opts.query ?? {},
      headers: { host: HOST, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...opts.headers },
    },
    {
      signingDate: DATE,
      expiresIn: opts.expiresIn ?? 3600,
      // What the SDK's S3 presigner does: an unsigned payload, neither signed nor hoisted.
      unsignableHeaders: new Set(['x-amz-content-sha256']),
      unhoistableHeaders: new Set(['x-amz-content-sha256']),
    }
  );
  const query = signed.query as Record<string, string>;
  return {
    method: opts.method,
    rawTarget: `${opts.path}?${wireQuery(query)}`,
    headers: { host: HOST, ...(opts.headers ?? {}) } as Record<string, string>,
  };
}

const at = (ms: number) => new Date(DATE.getTime() + ms);

describe('SigV4 presigned URLs', () => {
  it('the AWS published example verifies until it expires', () => {
    const rawTarget =
      '/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256' +
      '&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request' +
      '&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host' +
      '&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404';
    const req = { method: 'GET', rawTarget, headers: { host: 'examplebucket.s3.amazonaws.com' } };
    const t0 = Date.UTC(2013, 4, 24);
    const ok = verifyRequest({ ...req, now: new Date(t0 + 3600_000) }, lookup);
    expect(ok).toMatchObject({
      accessKeyId: AWS_EXAMPLE.accessKeyId,
      form: 'presigned',
      signatureVersion: 4,
      payload: { mode: 'unsigned' },
    });
    verifyRequest({ ...req, now: new Date(t0 + 86400_000) }, lookup);
    const err = expectS3Error(
      () => verifyRequest({ ...req, now: new Date(t0 + 86401_000) }, lookup),
      'AccessDenied'
    );
    expect(err.message).toBe('Request has expired');
    expect(err.detail).toMatchObject({
      'X-Amz-Expires': 86400,
      Expires: '2013-05-25T00:00:00.000Z',
    });
    const early = expectS3Error(
      () => verifyRequest({ ...req, now: new Date(t0 - 16 * 60_000) }, lookup),
      'AccessDenied'
    );
    expect(early.message).toBe('Request is not yet valid');
  });

  it('an SDK v3 style presigned GET with awkward key and overrides verifies', async () => {
    const req = await presign({
      method: 'GET',
      path: sdkPath('b1', 'dir/hello world+ü.txt'),
      query: {
        'response-content-disposition': 'attachment; filename="x y.txt"',
        'x-amz-checksum-mode': 'ENABLED',
        'x-id': 'GetObject',
        'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD',
      },
    });
    const result = verifyRequest({ ...req, now: at(60_000) }, lookup);
    expect(result).toMatchObject({
      accessKeyId: TEST_CREDS.accessKeyId,
      payload: { mode: 'unsigned' },
    });
  });

  it('a presigned PUT with checksum parameters verifies; unsigned x-amz-* headers do not', async () => {
    const req = await presign({
      method: 'PUT',
      path: '/b1/presigned-put',
      query: {
        'x-amz-checksum-crc32': 'AAAAAA==',
        'x-amz-sdk-checksum-algorithm': 'CRC32',
        'x-id': 'PutObject',
      },
    });
    verifyRequest({ ...req, now: at(0) }, lookup);
    const withSha = { ...req.headers, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' };
    verifyRequest({ ...req, headers: withSha, now: at(0) }, lookup);
    const err = expectS3Error(
      () =>
        verifyRequest(
          { ...req, headers: { ...req.headers, 'x-amz-acl': 'public-read' }, now: at(0) },
          lookup
        ),
      'AccessDenied'
    );
    expect(err.detail.HeadersNotSigned).toBe('x-amz-acl');
  });

  it('expiry bounds: 1..604800 seconds', async () => {
    const req = await presign({ method: 'GET', path: '/b/k', expiresIn: 604800 });
    verifyRequest({ ...req, now: at(604800_000) }, lookup);
    expectS3Error(() => verifyRequest({ ...req, now: at(604801_000) }, lookup), 'AccessDenied');
    // Out of range is 403 AccessDenied (as S3 answers it); unparseable is 400.
    for (const [bad, code] of [
      ['604801', 'AccessDenied'],
      ['0', 'AccessDenied'],
      ['-5', 'AccessDenied'],
      ['abc', 'AuthorizationQueryParametersError'],
      ['1.5', 'AuthorizationQueryParametersError'],
    ] as const) {
      const rawTarget = req.rawTarget.replace('X-Amz-Expires=604800', `X-Amz-Expires=${bad}`);
      expectS3Error(() => verifyRequest({ ...req, rawTarget, now: at(0) }, lookup), code);
    }
  });

  it('tampering and missing parameters fail', async () => {
    const req = await presign({
      method: 'GET',
      path: '/b/k',
      query: { 'response-content-type': 'text/plain' },
    });
    const now = at(0);
    const cases: [string, string][] = [
      [req.rawTarget.replace('text%2Fplain', 'text%2Fhtml'), 'SignatureDoesNotMatch'],
      [req.rawTarget + '&extra=1', 'SignatureDoesNotMatch'],
      [req.rawTarget.replace('/b/k', '/b/K'), 'SignatureDoesNotMatch'],
      [
        req.rawTarget.replace(/&X-Amz-SignedHeaders=[^&]*/, ''),
        'AuthorizationQueryParametersError',
      ],
      [
        req.rawTarget.replace('X-Amz-Algorithm=AWS4-HMAC-SHA256', 'X-Amz-Algorithm=AWS4-HMAC-SHA1'),
        'AuthorizationQueryParametersError',
      ],
      [
        req.rawTarget.replace('%2F20250304%2F', '%2F20250305%2F'),
        'AuthorizationQueryParametersError',
      ],
      [req.rawTarget.replace(TEST_CREDS.accessKeyId, 'AKIDNOPE'), 'InvalidAccessKeyId'],
    ];
    verifyRequest({ ...req, now }, lookup);
    for (const [rawTarget, code] of cases)
      expectS3Error(() => verifyRequest({ ...req, rawTarget, now }, lookup), code as never);
    expectS3Error(
      () => verifyRequest({ ...req, method: 'PUT', now }, lookup),
      'SignatureDoesNotMatch'
    );
  });
});

/** SigV2 exactly as the S3 developer guide states it, written independently of the server. */
function sigV2Reference(secret: string, method: string, expires: number, resource: string): string {
  return createHmac('sha1', secret)
    .update(`${method}\n\n\n${expires}\n${resource}`)
    .digest('base64');
}

describe('SigV2 presigned URLs', () => {
  it('the AWS published example verifies (virtual-hosted)', () => {
    const req = {
      method: 'GET',
      rawTarget:
        '/photos/puppy.jpg?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D&Expires=1175139620',
      headers: { host: 'johnsmith.s3.amazonaws.com' },
    };
    const now = new Date(1175139000_000);
    const result = verifyRequest({ ...req, now }, lookup, { baseDomain: 's3.amazonaws.com' });
    expect(result).toMatchObject({
      signatureVersion: 2,
      region: 'us-east-1',
      payload: { mode: 'unsigned' },
    });
    const unescapedPlus = req.rawTarget.replace('%2B', '+');
    verifyRequest({ ...req, rawTarget: unescapedPlus, now }, lookup, {
      baseDomain: 's3.amazonaws.com',
    });
    expectS3Error(() => verifyRequest({ ...req, now }, lookup), 'SignatureDoesNotMatch');
    const err = expectS3Error(
      () =>
        verifyRequest({ ...req, now: new Date(1175139621_000) }, lookup, {
          baseDomain: 's3.amazonaws.com',
        }),
      'AccessDenied'
    );
    expect(err.message).toBe('Request has expired');
  });

  it('path-style URLs with sub-resources and overrides verify against the reference', () => {
    const expires = 1900000000;
    const now = new Date((expires - 100) * 1000);
    const path = '/bucket/dir/a%20b%2Bc.txt';
    const cases: [string, string, string][] = [
      [
        'GET',
        'response-content-type=text%2Fplain&x-id=GetObject',
        '?response-content-type=text/plain',
      ],
      ['PUT', 'uploadId=abc%3D&partNumber=3', '?partNumber=3&uploadId=abc='],
      ['GET', 'acl', '?acl'],
      ['HEAD', '', ''],
    ];
    for (const [method, query, subresources] of cases) {
      const sig = sigV2Reference(TEST_CREDS.secretAccessKey, method, expires, path + subresources);
      const auth = `AWSAccessKeyId=${TEST_CREDS.accessKeyId}&Expires=${expires}&Signature=${encodeURIComponent(sig)}`;
      const rawTarget = `${path}?${query ? query + '&' : ''}${auth}`;
      const result = verifyRequest({ method, rawTarget, headers: { host: HOST }, now }, lookup);
      expect(result.accessKeyId).toBe(TEST_CREDS.accessKeyId);
      const tampered = rawTarget.replace('a%20b', 'a%20c');
      const err = expectS3Error(
        () => verifyRequest({ method, rawTarget: tampered, headers: { host: HOST }, now }, lookup),
        'SignatureDoesNotMatch'
      );
      expect(err.detail.StringToSign).toContain('/bucket/dir/a%20c%2Bc.txt');
    }
  });

  it('signed content-type and x-amz-* headers must be sent as signed', () => {
    const expires = 1900000000;
    const now = new Date((expires - 100) * 1000);
    const sts = `PUT\n\ntext/plain\n${expires}\nx-amz-acl:private\n/bucket/k`;
    const sig = createHmac('sha1', TEST_CREDS.secretAccessKey).update(sts).digest('base64');
    const rawTarget = `/bucket/k?AWSAccessKeyId=${TEST_CREDS.accessKeyId}&Expires=${expires}&Signature=${encodeURIComponent(sig)}`;
    const headers = { host: HOST, 'content-type': 'text/plain', 'x-amz-acl': 'private' };
    verifyRequest({ method: 'PUT', rawTarget, headers, now }, lookup);
    expectS3Error(
      () =>
        verifyRequest(
          { method: 'PUT', rawTarget, headers: { ...headers, 'content-type': 'text/html' }, now },
          lookup
        ),
      'SignatureDoesNotMatch'
    );
  });

  it('a URL valid for more than 7 days from now is refused for every method (year 3000 included)', () => {
    const now = new Date(1900000000_000);
    const week = 7 * 24 * 3600;
    for (const method of ['GET', 'PUT', 'DELETE', 'HEAD']) {
      for (const [expires, ok] of [
        [1900000000 + week, true],
        [1900000000 + week + 1, false],
        [32503680000, false], // 3000-01-01
      ] as const) {
        const sig = sigV2Reference(TEST_CREDS.secretAccessKey, method, expires, '/b/k');
        const rawTarget = `/b/k?AWSAccessKeyId=${TEST_CREDS.accessKeyId}&Expires=${expires}&Signature=${encodeURIComponent(sig)}`;
        const run = () => verifyRequest({ method, rawTarget, headers: { host: HOST }, now }, lookup);
        if (ok) expect(run().accessKeyId).toBe(TEST_CREDS.accessKeyId);
        else expectS3Error(run, 'AccessDenied');
      }
    }
  });

  /** What a request may do once routed: the permission and policy action it needs ('refused': the router refuses it). */
  function needOf(method: string, target: string): string {
    try {
      const e = route({ method, rawTarget: target, headers: { host: HOST } });
      const rule = ACCESS_RULES[e.op];
      return `${NEEDS[e.op]} ${'action' in rule ? rule.action : ''}`;
    } catch {
      return 'refused';
    }
  }

  it('no query parameter left out of the signature changes what the request may do', () => {
    // Regression: `encryption`, `publicAccessBlock`, `ownershipControls`, `policyStatus` and
    // `attributes` were not signed, so a URL presigned for GET /bucket (ListObjects) also
    // read the bucket's access configuration, and PUT/DELETE URLs changed it.
    const source = ['../../../src/s3/router.ts', '../../../src/s3/router/params.ts'].map((f) => readFileSync(new URL(f, import.meta.url), 'utf8')).join('\n');
    const names = new Set([...source.matchAll(/q\.(?:has|get)\('([^']+)'\)/g)].map((m) => m[1]!));
    for (const n of [...BUCKET_NOT_IMPLEMENTED, ...OBJECT_NOT_IMPLEMENTED]) names.add(n);
    expect(names.size).toBeGreaterThan(20);
    const unsigned: string[] = [];
    for (const name of names) {
      for (const method of ['GET', 'HEAD', 'PUT', 'POST', 'DELETE']) {
        for (const path of ['/', '/bkt', '/bkt/k']) {
          for (const base of ['', 'uploadId=u', 'partNumber=1', 'uploadId=u&partNumber=1', 'uploads']) {
            for (const value of ['', '=', '=1', '=2', '=url']) {
              const without = needOf(method, base ? `${path}?${base}` : path);
              const withIt = needOf(method, `${path}?${base ? `${base}&` : ''}${name}${value}`);
              if (withIt !== 'refused' && withIt !== without && !SIGV2_SUBRESOURCES.has(name)) unsigned.push(`${method} ${path}?${base}&${name}${value}: ${without} -> ${withIt}`);
            }
          }
        }
      }
    }
    expect(unsigned).toEqual([]);
  });

  it('sub-resource names are decoded as the router decodes them: an escaped name is still signed', () => {
    // Regression: names were compared undecoded, so `?%61cl` (the router's `acl`) was left
    // out of the signature and a URL presigned for PutObject could set the object's ACL.
    for (const name of SIGV2_SUBRESOURCES) {
      const escaped = `%${name.charCodeAt(0).toString(16).toUpperCase()}${name.slice(1)}`;
      expect(sigV2Resource(readTarget(`/b/k?${escaped}=v&x-id=Op`), undefined), name).toBe(`/b/k?${name}=v`);
    }
    const expires = 1900000000;
    const now = new Date((expires - 100) * 1000);
    const sig = sigV2Reference(TEST_CREDS.secretAccessKey, 'PUT', expires, '/bucket/k');
    const auth = `AWSAccessKeyId=${TEST_CREDS.accessKeyId}&Expires=${expires}&Signature=${encodeURIComponent(sig)}`;
    verifyRequest({ method: 'PUT', rawTarget: `/bucket/k?${auth}`, headers: { host: HOST }, now }, lookup);
    for (const extra of ['acl', '%61cl', '%61cl=', 'tagging', '%74agging', 'publicAccessBlock', 'encryption', 'attributes', 'ownershipControls']) {
      expectS3Error(() => verifyRequest({ method: 'PUT', rawTarget: `/bucket/k?${extra}&${auth}`, headers: { host: HOST }, now }, lookup), 'SignatureDoesNotMatch');
    }
    // A value signed as `a+b` (sent %2B) cannot be replayed as a raw `+`, which the router reads as a space.
    const withPlus = sigV2Reference(TEST_CREDS.secretAccessKey, 'PUT', expires, '/bucket/k?partNumber=1&uploadId=a+b');
    const plusAuth = `AWSAccessKeyId=${TEST_CREDS.accessKeyId}&Expires=${expires}&Signature=${encodeURIComponent(withPlus)}`;
    verifyRequest({ method: 'PUT', rawTarget: `/bucket/k?partNumber=1&uploadId=a%2Bb&${plusAuth}`, headers: { host: HOST }, now }, lookup);
    expectS3Error(() => verifyRequest({ method: 'PUT', rawTarget: `/bucket/k?partNumber=1&uploadId=a+b&${plusAuth}`, headers: { host: HOST }, now }, lookup), 'SignatureDoesNotMatch');
  });

  it('missing parameters, bad Expires and unknown keys are refused', () => {
    const now = new Date(1900000000_000);
    const run = (q: string) =>
      verifyRequest(
        { method: 'GET', rawTarget: `/b/k?${q}`, headers: { host: HOST }, now },
        lookup
      );
    expectS3Error(() => run('AWSAccessKeyId=AKIDSTRATA&Signature=x'), 'AccessDenied');
    expectS3Error(() => run('AWSAccessKeyId=AKIDSTRATA&Signature=x&Expires=soon'), 'AccessDenied');
    expectS3Error(
      () => run('AWSAccessKeyId=AKIDNOPE&Signature=x&Expires=1900000001'),
      'InvalidAccessKeyId'
    );
    expectS3Error(
      () => run('AWSAccessKeyId=AKIDSTRATA&Signature=x&Expires=1900000001&X-Amz-Signature=y'),
      'InvalidArgument'
    );
  });
});
