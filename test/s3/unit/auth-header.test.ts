/**
 * Server-side SigV4 (Authorization header): AWS's published S3 examples, requests signed by
 * the SDK's own signer (@smithy/signature-v4) with awkward keys and queries, tampering,
 * clock skew, scope errors and payload modes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyRequest } from '../../../src/s3/auth/index.js';
import {
  canonicalHeaders,
  canonicalRequest,
  computeSignature,
  credentialScope,
  lowerCaseHeaders,
  sha256Hex,
  stringToSign,
} from '../../../src/sigv4/index.js';
import {
  AWS_EXAMPLE,
  expectS3Error,
  lookup,
  sdkPath,
  signHeader,
  TEST_CREDS,
  type SignedTestRequest,
} from './helpers.js';

const EMPTY = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const EXAMPLE_DATE = new Date('2013-05-24T00:00:00Z');
const DATE = new Date('2025-06-01T12:00:00Z');

function verify(req: SignedTestRequest, now = DATE, options = {}) {
  return verifyRequest({ ...req, now }, lookup, options);
}

function exampleAuth(signedHeaders: string, signature: string): string {
  return (
    `AWS4-HMAC-SHA256 Credential=${AWS_EXAMPLE.accessKeyId}/20130524/us-east-1/s3/aws4_request, ` +
    `SignedHeaders=${signedHeaders}, Signature=${signature}`
  );
}

describe('AWS published examples (sig-v4-header-based-auth)', () => {
  const base = {
    host: 'examplebucket.s3.amazonaws.com',
    'x-amz-date': '20130524T000000Z',
  };

  it('GET Object with a range verifies', () => {
    const result = verify(
      {
        method: 'GET',
        rawTarget: '/test.txt',
        headers: {
          ...base,
          range: 'bytes=0-9',
          'x-amz-content-sha256': EMPTY,
          authorization: exampleAuth(
            'host;range;x-amz-content-sha256;x-amz-date',
            'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41'
          ),
        },
      },
      EXAMPLE_DATE
    );
    expect(result).toMatchObject({
      accessKeyId: AWS_EXAMPLE.accessKeyId,
      region: 'us-east-1',
      signatureVersion: 4,
      form: 'header',
      payload: { mode: 'sha256', hex: EMPTY },
    });
  });

  it('PUT Object (Date header, storage class, `$` in the key) verifies', () => {
    const body = 'Welcome to Amazon S3.';
    const result = verify(
      {
        method: 'PUT',
        rawTarget: '/test%24file.text',
        headers: {
          ...base,
          date: 'Fri, 24 May 2013 00:00:00 GMT',
          'x-amz-storage-class': 'REDUCED_REDUNDANCY',
          'x-amz-content-sha256': sha256Hex(body),
          authorization: exampleAuth(
            'date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class',
            '98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd'
          ),
        },
      },
      EXAMPLE_DATE
    );
    expect(result.payload).toEqual({ mode: 'sha256', hex: sha256Hex(body) });
  });

  it('GET Bucket lifecycle (valueless sub-resource) and ListObjects verify', () => {
    const headers = { ...base, 'x-amz-content-sha256': EMPTY };
    const lifecycle = exampleAuth(
      'host;x-amz-content-sha256;x-amz-date',
      'fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543'
    );
    for (const rawTarget of ['/?lifecycle', '/?lifecycle=']) {
      verify(
        { method: 'GET', rawTarget, headers: { ...headers, authorization: lifecycle } },
        EXAMPLE_DATE
      );
    }
    verify(
      {
        method: 'GET',
        rawTarget: '/?prefix=J&max-keys=2',
        headers: {
          ...headers,
          authorization: exampleAuth(
            'host;x-amz-content-sha256;x-amz-date',
            '34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7'
          ),
        },
      },
      EXAMPLE_DATE
    );
  });

  it('the streaming PUT example yields its seed signature and signing context', () => {
    const result = verify(
      {
        method: 'PUT',
        rawTarget: '/examplebucket/chunkObject.txt',
        headers: {
          host: 's3.amazonaws.com',
          'x-amz-date': '20130524T000000Z',
          'x-amz-storage-class': 'REDUCED_REDUNDANCY',
          'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
          'content-encoding': 'aws-chunked',
          'x-amz-decoded-content-length': '66560',
          'content-length': '66824',
          authorization: exampleAuth(
            'content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;' +
              'x-amz-decoded-content-length;x-amz-storage-class',
            '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9'
          ),
        },
      },
      EXAMPLE_DATE
    );
    expect(result.payload).toMatchObject({
      mode: 'streaming-signed',
      trailer: false,
      seedSignature: '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9',
      scope: '20130524/us-east-1/s3/aws4_request',
      amzDate: '20130524T000000Z',
    });
  });
});

describe('requests signed by @smithy/signature-v4', () => {
  const KEYS = [
    'plain.txt',
    'dir/../x',
    './k',
    'a//b///c',
    'trailing/',
    'with space and  two',
    'a+b+c',
    'ünïcödé/😀/中文',
    "dir/a b+c!*'()~$&=,;:@[]ü%.txt",
    '%2F literal percent',
    '?#[]',
    ' leading and trailing ',
  ];

  for (const key of KEYS) {
    it(`verifies PUT of key ${JSON.stringify(key)}`, async () => {
      const body = `body of ${key}`;
      const req = await signHeader({
        method: 'PUT',
        path: sdkPath('bucket', key),
        query: { 'x-id': 'PutObject' },
        headers: { 'content-type': 'text/plain', 'x-amz-meta-a': '  spaced   value ' },
        payloadHash: sha256Hex(body),
        date: DATE,
      });
      expect(verify(req).payload).toEqual({ mode: 'sha256', hex: sha256Hex(body) });
    });
  }

  it('verifies a path sent with %2F for "/" (raw path signed as sent)', async () => {
    const req = await signHeader({ method: 'GET', path: '/bucket/a%2Fb', date: DATE });
    expect(verify(req).accessKeyId).toBe(TEST_CREDS.accessKeyId);
  });

  it('verifies a path with unescaped sub-delimiters signed as sent', async () => {
    const req = await signHeader({ method: 'GET', path: "/bucket/a!b*c'(d)", date: DATE });
    verify(req);
  });

  it('accepts + or %20 for a space in query values, and %2B for a plus', async () => {
    const query = { prefix: 'a b', 'continuation-token': 'x+y/z=', delimiter: '/' };
    const req = await signHeader({ method: 'GET', path: '/bucket', query, date: DATE });
    verify(req);
    verify({ ...req, rawTarget: req.rawTarget.replace('a%20b', 'a+b') });
    expect(req.rawTarget).toContain('x%2By%2Fz%3D');
  });

  it('verifies valueless sub-resources sent with or without "="', async () => {
    const req = await signHeader({
      method: 'POST',
      path: '/bucket/k',
      query: { uploads: '' },
      date: DATE,
    });
    expect(req.rawTarget).toBe('/bucket/k?uploads=');
    verify(req);
    verify({ ...req, rawTarget: '/bucket/k?uploads' });
  });

  it('accepts both ", " and "," between Authorization components', async () => {
    const req = await signHeader({ method: 'GET', path: '/bucket/k', date: DATE });
    expect(req.headers.authorization).toContain(', SignedHeaders=');
    verify(req);
    const compact = req.headers.authorization!.replace(/, /g, ',');
    verify({ ...req, headers: { ...req.headers, authorization: compact } });
  });

  it('accepts any region by default and reports it', async () => {
    const req = await signHeader({
      method: 'GET',
      path: '/bucket/k',
      date: DATE,
      region: 'garage',
    });
    expect(verify(req).region).toBe('garage');
  });

  it('refuses another region in strict mode with <Region>', async () => {
    const req = await signHeader({
      method: 'GET',
      path: '/bucket/k',
      date: DATE,
      region: 'us-east-1',
    });
    const err = expectS3Error(
      () => verify(req, DATE, { region: 'eu-west-1' }),
      'AuthorizationHeaderMalformed'
    );
    expect(err.detail.Region).toBe('eu-west-1');
    verify(req, DATE, { region: 'us-east-1' });
  });
});

describe('tampering fails with SignatureDoesNotMatch', () => {
  const sign = () =>
    signHeader({
      method: 'PUT',
      path: sdkPath('bucket', 'dir/key.txt'),
      query: { 'x-id': 'PutObject', tagging: '' },
      headers: { 'content-type': 'text/plain', 'x-amz-meta-color': 'blue' },
      payloadHash: sha256Hex('hello'),
      date: DATE,
    });

  const tampers: [string, (r: SignedTestRequest) => SignedTestRequest][] = [
    ['method', (r) => ({ ...r, method: 'POST' })],
    ['path', (r) => ({ ...r, rawTarget: r.rawTarget.replace('key.txt', 'key.txT') })],
    ['path normalisation', (r) => ({ ...r, rawTarget: r.rawTarget.replace('/dir/', '/dir/./') })],
    ['query value', (r) => ({ ...r, rawTarget: r.rawTarget.replace('PutObject', 'GetObject') })],
    ['added query parameter', (r) => ({ ...r, rawTarget: r.rawTarget + '&acl=' })],
    ['signed header', (r) => ({ ...r, headers: { ...r.headers, 'content-type': 'text/html' } })],
    ['x-amz-meta header', (r) => ({ ...r, headers: { ...r.headers, 'x-amz-meta-color': 'red' } })],
    ['host', (r) => ({ ...r, headers: { ...r.headers, host: '127.0.0.1:9001' } })],
    [
      'date (one second)',
      (r) => ({ ...r, headers: { ...r.headers, 'x-amz-date': '20250601T120001Z' } }),
    ],
    [
      'body hash',
      (r) => ({ ...r, headers: { ...r.headers, 'x-amz-content-sha256': sha256Hex('hellO') } }),
    ],
    [
      'signature',
      (r) => ({
        ...r,
        headers: {
          ...r.headers,
          authorization: r.headers.authorization!.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
        },
      }),
    ],
  ];

  it('verifies untouched', async () => {
    verify(await sign());
  });
  for (const [what, tamper] of tampers) {
    it(`when the ${what} changes`, async () => {
      const err = expectS3Error(() => verify(tamper(req)), 'SignatureDoesNotMatch');
      expect(err.detail.CanonicalRequest).toBeTypeOf('string');
      expect(err.detail.StringToSign).toMatch(/^AWS4-HMAC-SHA256\n/);
    });
  }
  let req: SignedTestRequest;
  beforeAll(async () => {
    req = await sign();
  });
});

describe('other failures', () => {
  const sign = (extra: Partial<Parameters<typeof signHeader>[0]> = {}) =>
    signHeader({ method: 'GET', path: '/bucket/k', date: DATE, ...extra });

  it('an unsigned x-amz-* header is AccessDenied naming it', async () => {
    const req = await sign();
    const err = expectS3Error(
      () => verify({ ...req, headers: { ...req.headers, 'x-amz-copy-source': 'other/key' } }),
      'AccessDenied'
    );
    expect(err.detail.HeadersNotSigned).toBe('x-amz-copy-source');
  });

  it('clock skew beyond 15 minutes is RequestTimeTooSkewed with ServerTime', async () => {
    const req = await sign();
    const min = 60_000;
    verify(req, new Date(DATE.getTime() + 14 * min));
    verify(req, new Date(DATE.getTime() - 14 * min));
    const err = expectS3Error(
      () => verify(req, new Date(DATE.getTime() + 16 * min)),
      'RequestTimeTooSkewed'
    );
    expect(err.status).toBe(403);
    expect(err.detail).toMatchObject({
      RequestTime: '20250601T120000Z',
      ServerTime: '2025-06-01T12:16:00.000Z',
      MaxAllowedSkewMilliseconds: 900000,
    });
    expectS3Error(() => verify(req, new Date(DATE.getTime() - 16 * min)), 'RequestTimeTooSkewed');
    verify(req, new Date(DATE.getTime() + 16 * min), { maxSkewMs: 20 * min });
  });

  it('an unknown access key is InvalidAccessKeyId', async () => {
    const req = await sign();
    const auth = req.headers.authorization!.replace(TEST_CREDS.accessKeyId, 'AKIDUNKNOWN');
    const err = expectS3Error(
      () => verify({ ...req, headers: { ...req.headers, authorization: auth } }),
      'InvalidAccessKeyId'
    );
    expect(err.detail.AWSAccessKeyId).toBe('AKIDUNKNOWN');
  });

  it('no authentication at all is anonymous (authorization decides), its body contract kept', () => {
    const anon = verify({ method: 'GET', rawTarget: '/bucket/k', headers: { host: 'h' } });
    expect(anon).toMatchObject({ accessKeyId: null, form: 'anonymous', signatureVersion: null, payload: { mode: 'unsigned' } });
    const hex = 'a'.repeat(64);
    expect(verify({ method: 'PUT', rawTarget: '/b/k', headers: { host: 'h', 'x-amz-content-sha256': hex } }).payload).toEqual({ mode: 'sha256', hex });
    expect(verify({ method: 'PUT', rawTarget: '/b/k', headers: { host: 'h', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } }).payload).toEqual({ mode: 'unsigned' });
    // Chunk signatures need a signature to chain from: an anonymous request cannot have one.
    expectS3Error(
      () => verify({ method: 'PUT', rawTarget: '/b/k', headers: { host: 'h', 'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' } }),
      'AccessDenied'
    );
    expectS3Error(() => verify({ method: 'PUT', rawTarget: '/b/k', headers: { host: 'h', 'x-amz-content-sha256': 'nonsense' } }), 'InvalidArgument');
  });

  it('header and query authentication together is InvalidArgument', async () => {
    const req = await sign();
    expectS3Error(
      () => verify({ ...req, rawTarget: req.rawTarget + '?X-Amz-Algorithm=AWS4-HMAC-SHA256' }),
      'InvalidArgument'
    );
  });

  it('a missing x-amz-content-sha256 is InvalidRequest', async () => {
    const req = await sign();
    const headers = { ...req.headers };
    delete headers['x-amz-content-sha256'];
    expectS3Error(() => verify({ ...req, headers }), 'InvalidRequest');
  });

  it('classifies every payload mode', async () => {
    const modes: [string, unknown][] = [
      ['UNSIGNED-PAYLOAD', { mode: 'unsigned' }],
      ['STREAMING-UNSIGNED-PAYLOAD-TRAILER', { mode: 'streaming-unsigned-trailer' }],
      ['STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER', { mode: 'streaming-signed', trailer: true }],
      [EMPTY.toUpperCase(), { mode: 'sha256', hex: EMPTY }],
    ];
    for (const [value, expected] of modes) {
      const req = await sign({ method: 'PUT', payloadHash: value });
      expect(verify(req).payload).toMatchObject(expected as object);
    }
    const ecdsa = await sign({
      method: 'PUT',
      payloadHash: 'STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD',
    });
    expectS3Error(() => verify(ecdsa), 'NotImplemented');
    const bogus = await sign({ method: 'PUT', payloadHash: 'not-a-hash' });
    expectS3Error(() => verify(bogus), 'InvalidArgument');
  });

  it('a credential date other than X-Amz-Date is AuthorizationHeaderMalformed', async () => {
    const req = await sign();
    const auth = req.headers.authorization!.replace('/20250601/', '/20250602/');
    expectS3Error(
      () => verify({ ...req, headers: { ...req.headers, authorization: auth } }),
      'AuthorizationHeaderMalformed'
    );
  });

  it('malformed credentials and components are AuthorizationHeaderMalformed', async () => {
    const req = await sign();
    const auth = req.headers.authorization!;
    const variants = [
      auth.replace('/s3/', '/ec2/'),
      auth.replace('/aws4_request', '/aws5_request'),
      auth.replace(/Credential=[^,]+/, 'Credential=AKID/2025'),
      auth.replace(/, SignedHeaders=[^,]+/, ''),
      auth + ', Bogus=1',
      auth.replace(/SignedHeaders=[^,]+/, 'SignedHeaders=x-amz-content-sha256;x-amz-date'),
    ];
    for (const authorization of variants) {
      expectS3Error(
        () => verify({ ...req, headers: { ...req.headers, authorization } }),
        'AuthorizationHeaderMalformed'
      );
    }
  });

  it('falls back to the Date header when x-amz-date is absent', () => {
    const headers: Record<string, string> = {
      host: 'h',
      date: 'Sun, 01 Jun 2025 12:00:00 GMT',
      'x-amz-content-sha256': EMPTY,
    };
    const { canonical, signedHeaders } = canonicalHeaders(
      lowerCaseHeaders(headers),
      Object.keys(headers)
    );
    const amzDate = '20250601T120000Z';
    const creq = canonicalRequest({
      method: 'GET',
      canonicalUri: '/bucket/k',
      canonicalQuery: '',
      canonicalHeaders: canonical,
      signedHeaders,
      payloadHash: EMPTY,
    });
    const scope = credentialScope(amzDate, 'us-east-1', 's3');
    const sig = computeSignature(
      TEST_CREDS.secretAccessKey,
      amzDate,
      'us-east-1',
      's3',
      stringToSign(amzDate, scope, creq)
    );
    const authorization = `AWS4-HMAC-SHA256 Credential=${TEST_CREDS.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${sig}`;
    const result = verify({
      method: 'GET',
      rawTarget: '/bucket/k',
      headers: { ...headers, authorization },
    });
    expect(result.accessKeyId).toBe(TEST_CREDS.accessKeyId);
  });

  it('no valid date is AccessDenied', async () => {
    const req = await sign();
    const headers = { ...req.headers, 'x-amz-date': '2025-06-01T12:00:00Z' };
    expectS3Error(() => verify({ ...req, headers }), 'AccessDenied');
  });

  it('SigV2 and SigV4a headers are refused legibly', () => {
    const headers = { host: 'h', 'x-amz-date': '20250601T120000Z' };
    expectS3Error(
      () =>
        verify({
          method: 'GET',
          rawTarget: '/b',
          headers: { ...headers, authorization: 'AWS AKID:c2ln' },
        }),
      'InvalidRequest'
    );
    expectS3Error(
      () =>
        verify({
          method: 'GET',
          rawTarget: '/b',
          headers: { ...headers, authorization: 'AWS4-ECDSA-P256-SHA256 Credential=x' },
        }),
      'NotImplemented'
    );
    expectS3Error(
      () =>
        verify({
          method: 'GET',
          rawTarget: '/b',
          headers: { ...headers, authorization: 'Bearer x' },
        }),
      'InvalidArgument'
    );
  });

  it('a malformed escape in the target is InvalidURI', async () => {
    const req = await sign();
    expectS3Error(() => verify({ ...req, rawTarget: '/bucket/%zz' }), 'InvalidURI');
    expectS3Error(() => verify({ ...req, rawTarget: '/bucket/%C3' }), 'InvalidURI');
  });
});
