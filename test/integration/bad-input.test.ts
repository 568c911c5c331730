/**
 * Bad input (issue 4): every malformed, unauthenticated, lying or truncated request gets its
 * S3 error (status + `<Code>`; HEAD: status only, no body), nothing it carried becomes
 * visible, and the server keeps serving: after every test a normal PUT/GET works, the
 * objects stored at the start read back byte-exact and the listing is unchanged.
 *
 * Requests are signed with our own signer (src/sigv4) so that the checks *behind*
 * authentication are reached; byte-level cases go over `node:net`.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { sha256Hex, presignUrl } from '../../src/sigv4/index.js';
import { randomBytes } from '../support/random.js';
import { ACCESS_KEY, METRICS_AUTH, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import {
  errorCode,
  framesOf,
  md5Base64,
  rawExchange,
  requestHead,
  signedChunked,
  signV4,
  unsignedChunked,
  type SignOptions,
  type WireRequest,
} from './wire.js';

const BUCKET = 'bad-input';
/** Writes of the after-each health probe go here, so BUCKET's listing stays exact. */
const PROBE_BUCKET = 'bad-input-probe';
const CREDS = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY };

/** Objects stored before anything else; they must survive every test byte-exact. */
const KNOWN: Record<string, Uint8Array> = {
  'keep/small': randomBytes(1000, 1),
  'keep/empty': new Uint8Array(0),
  'keep/packed': randomBytes(100 * 1024, 2),
  'keep/carrier': randomBytes(700 * 1024, 3), // over PACK_MAX_BODY (512 KiB): a carrier
};

let s: TestServer;
let host: string;

interface Reply {
  status: number;
  headers: Record<string, string>;
  text: string;
  body: Buffer;
}

async function send(r: WireRequest): Promise<Reply> {
  const res = await request(`${s.url}${r.target}`, {
    method: r.method,
    headers: r.headers,
    ...(r.body ? { body: r.body } : {}),
  });
  const body = Buffer.from(await res.body.arrayBuffer());
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(',') : String(v);
  return { status: res.statusCode, headers, body, text: body.toString('utf8') };
}

type Sign = Omit<SignOptions, 'host' | 'credentials' | 'region'> & Partial<Pick<SignOptions, 'credentials' | 'region'>>;
const signed = (o: Sign) => signV4({ host, credentials: CREDS, region: REGION, ...o });
const call = (o: Sign) => send(signed(o));

/** Asserts an S3 error reply: status, and for non-HEAD the XML `<Code>`. */
function expectError(r: Pick<Reply, 'status' | 'text'>, status: number, code: string, method = 'GET'): void {
  const where = `${status} ${code} expected, got ${r.status}: ${r.text.slice(0, 300)}`;
  expect(r.status, where).toBe(status);
  if (method === 'HEAD') expect(r.text, 'HEAD error responses have no body').toBe('');
  else {
    expect(errorCode(r.text), where).toBe(code);
    expect(r.text.startsWith('<?xml')).toBe(true);
  }
}

async function expectAbsent(bucket: string, key: string): Promise<void> {
  const head = await call({ method: 'HEAD', path: `/${bucket}/${key}` });
  expect(head.status, `${bucket}/${key} must not exist`).toBe(404);
  const list = await call({ method: 'GET', path: `/${bucket}`, query: { 'list-type': '2', prefix: key } });
  expect(list.text).not.toContain(`<Key>${key}</Key>`);
}

async function metric(name: string): Promise<number> {
  const text = await (await request(`${s.url}/metrics`, { headers: METRICS_AUTH })).body.text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (!m) throw new Error(`metric ${name} missing`);
  return Number(m[1]);
}

/** Waits until strata_pending_bytes is 0 (in-flight writes release their reservation). */
async function expectBudgetReleased(): Promise<void> {
  const deadline = Date.now() + 10_000;
  let v = await metric('strata_pending_bytes');
  while (v !== 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    v = await metric('strata_pending_bytes');
  }
  expect(v, 'strata_pending_bytes').toBe(0);
}

async function listKeys(bucket: string): Promise<string[]> {
  const r = await call({ method: 'GET', path: `/${bucket}`, query: { 'list-type': '2' } });
  expect(r.status).toBe(200);
  return [...r.text.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!);
}

let probe = 0;
/** The server still serves: a fresh PUT/GET round-trips, known objects and listing intact. */
async function expectServing(): Promise<void> {
  const health = await request(`${s.url}/health`);
  expect(health.statusCode).toBe(200);
  await health.body.dump();
  const data = randomBytes(5000, 1000 + probe);
  const key = `probe-${probe++}`;
  const put = await call({ method: 'PUT', path: `/${PROBE_BUCKET}/${key}`, body: data });
  expect(put.status, put.text).toBe(200);
  const get = await call({ method: 'GET', path: `/${PROBE_BUCKET}/${key}` });
  expect(get.status).toBe(200);
  expect(get.body.equals(data)).toBe(true);
  for (const [k, v] of Object.entries(KNOWN)) {
    const r = await call({ method: 'GET', path: `/${BUCKET}/${k}` });
    expect(r.status, k).toBe(200);
    expect(r.body.equals(Buffer.from(v)), `${k} changed`).toBe(true);
  }
  expect(await listKeys(BUCKET)).toEqual(Object.keys(KNOWN).sort());
  // Bad input is the client's fault: never an internal error, never a 5xx other than 501.
  const internal = s.logs.slice(logsBefore).filter((l) => l.includes('"msg":"internal error"'));
  expect(internal, internal.join('\n')).toEqual([]);
  expect(await serverErrors(), 'requests answered 5xx (other than 501) during this test').toBe(serverErrorsBefore);
}

/** Requests answered with a 5xx other than 501 NotImplemented so far (from /metrics). */
async function serverErrors(): Promise<number> {
  const metrics = await (await request(`${s.url}/metrics`, { headers: METRICS_AUTH })).body.text();
  let n = 0;
  for (const m of metrics.matchAll(/^strata_requests_total\{.*status="(5\d\d)"\} (\d+)$/gm)) if (m[1] !== '501') n += Number(m[2]);
  return n;
}
let logsBefore = 0;
let serverErrorsBefore = 0;

beforeAll(async () => {
  s = await startTestServer();
  host = new URL(s.url).host;
  for (const b of [BUCKET, PROBE_BUCKET]) expect((await call({ method: 'PUT', path: `/${b}` })).status).toBe(200);
  for (const [k, v] of Object.entries(KNOWN)) {
    const r = await call({ method: 'PUT', path: `/${BUCKET}/${k}`, body: v });
    expect(r.status, r.text).toBe(200);
  }
});
afterAll(async () => {
  await s?.stop();
});
beforeEach(async () => {
  logsBefore = s.logs.length;
  serverErrorsBefore = await serverErrors();
});
afterEach(async () => {
  await expectServing();
});

// ---------------------------------------------------------------------------------------
describe('malformed XML bodies', () => {
  const LOCKED = 'bad-input-xml-locked';
  const DEEP = '<a>'.repeat(100_000) + '</a>'.repeat(100_000);
  const LAUGHS =
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">' +
    '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>';
  const EXTERNAL = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>';

  /** Each operation with a valid document (to derive the bad ones from) and its request. */
  const ops: { name: string; valid: string; make: (body: Uint8Array) => Sign; after?: () => Promise<void> }[] = [
    {
      name: 'DeleteObjects',
      valid: '<Delete><Object><Key>keep/small</Key></Object></Delete>',
      make: (body) => ({ method: 'POST', path: `/${BUCKET}`, query: { delete: '' }, body, headers: { 'content-md5': md5Base64(body) } }),
    },
    {
      name: 'CompleteMultipartUpload',
      valid: '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>',
      make: (body) => ({ method: 'POST', path: `/${BUCKET}/mpu-xml`, query: { uploadId: uploadId }, body }),
      after: async () => {
        // The upload is untouched: still listable, nothing completed.
        expect((await call({ method: 'GET', path: `/${BUCKET}/mpu-xml`, query: { uploadId } })).status).toBe(200);
        await expectAbsent(BUCKET, 'mpu-xml');
      },
    },
    {
      name: 'PutBucketCors',
      valid: '<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod><AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>',
      make: (body) => ({ method: 'PUT', path: `/${BUCKET}`, query: { cors: '' }, body }),
      after: async () => expectError(await call({ method: 'GET', path: `/${BUCKET}`, query: { cors: '' } }), 404, 'NoSuchCORSConfiguration'),
    },
    {
      name: 'PutObjectTagging',
      valid: '<Tagging><TagSet><Tag><Key>a</Key><Value>b</Value></Tag></TagSet></Tagging>',
      make: (body) => ({ method: 'PUT', path: `/${BUCKET}/keep/small`, query: { tagging: '' }, body }),
      after: async () => {
        const r = await call({ method: 'GET', path: `/${BUCKET}/keep/small`, query: { tagging: '' } });
        expect(r.status).toBe(200);
        expect(r.text).not.toContain('<Tag>');
      },
    },
    {
      name: 'PutPublicAccessBlock',
      valid: '<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls></PublicAccessBlockConfiguration>',
      make: (body) => ({ method: 'PUT', path: `/${BUCKET}`, query: { publicAccessBlock: '' }, body }),
      after: async () => expectError(await call({ method: 'GET', path: `/${BUCKET}`, query: { publicAccessBlock: '' } }), 404, 'NoSuchPublicAccessBlockConfiguration'),
    },
    {
      name: 'PutBucketOwnershipControls',
      valid: '<OwnershipControls><Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule></OwnershipControls>',
      make: (body) => ({ method: 'PUT', path: `/${BUCKET}`, query: { ownershipControls: '' }, body }),
      after: async () => expectError(await call({ method: 'GET', path: `/${BUCKET}`, query: { ownershipControls: '' } }), 404, 'OwnershipControlsNotFoundError'),
    },
    {
      name: 'PutObjectLockConfiguration',
      valid: '<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>',
      make: (body) => ({ method: 'PUT', path: `/${LOCKED}`, query: { 'object-lock': '' }, body }),
      after: async () => {
        const r = await call({ method: 'GET', path: `/${LOCKED}`, query: { 'object-lock': '' } });
        expect(r.status).toBe(200);
        expect(r.text).not.toContain('<Rule>');
      },
    },
    {
      name: 'PutObjectRetention',
      valid: '<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>2099-01-01T00:00:00Z</RetainUntilDate></Retention>',
      make: (body) => ({ method: 'PUT', path: `/${LOCKED}/obj`, query: { retention: '' }, body }),
      after: async () => expectError(await call({ method: 'GET', path: `/${LOCKED}/obj`, query: { retention: '' } }), 404, 'NoSuchObjectLockConfiguration'),
    },
    {
      name: 'PutObjectLegalHold',
      valid: '<LegalHold><Status>ON</Status></LegalHold>',
      make: (body) => ({ method: 'PUT', path: `/${LOCKED}/obj`, query: { 'legal-hold': '' }, body }),
      after: async () => expectError(await call({ method: 'GET', path: `/${LOCKED}/obj`, query: { 'legal-hold': '' } }), 404, 'NoSuchObjectLockConfiguration'),
    },
    {
      name: 'CreateBucket',
      valid: '<CreateBucketConfiguration><LocationConstraint>us-east-1</LocationConstraint></CreateBucketConfiguration>',
      make: (body) => ({ method: 'PUT', path: '/bad-input-new', body }),
      after: async () => expect((await call({ method: 'HEAD', path: '/bad-input-new' })).status).toBe(404),
    },
  ];
  let uploadId = '';
  beforeAll(async () => {
    // Object Lock documents are tried on a lock-enabled bucket holding one unlocked object.
    expect((await call({ method: 'PUT', path: `/${LOCKED}`, headers: { 'x-amz-bucket-object-lock-enabled': 'true' } })).status).toBe(200);
    expect((await call({ method: 'PUT', path: `/${LOCKED}/obj`, body: Buffer.from('x') })).status).toBe(200);
    const r = await call({ method: 'POST', path: `/${BUCKET}/mpu-xml`, query: { uploads: '' } });
    uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(r.text)![1]!;
  });
  afterAll(async () => {
    await call({ method: 'DELETE', path: `/${BUCKET}/mpu-xml`, query: { uploadId } });
  });

  const variants = (valid: string): [string, string][] => {
    const root = /^<([A-Za-z]+)/.exec(valid)![1]!;
    return [
      ['not XML', 'this is not xml at all {"json": true}'],
      ['truncated', valid.slice(0, Math.floor(valid.length * 0.6))],
      ['wrong root', valid.replace(new RegExp(`^<${root}>`), '<WrongRoot>').replace(new RegExp(`</${root}>$`), '</WrongRoot>')],
      ['a DOCTYPE with entity expansion', `${LAUGHS}${valid.replace(/<\/(\w+)>$/, '&lol3;</$1>')}`],
      ['an external entity', `${EXTERNAL}${valid.replace(/<\/(\w+)>$/, '&x;</$1>')}`],
      ['deeply nested', valid.replace(/<\/(\w+)>$/, `${DEEP}</$1>`)],
      ['binary garbage', Buffer.from(randomBytes(300, 9)).toString('latin1')],
    ];
  };
  for (const op of ops) {
    for (const [what, text] of variants(op.valid)) {
      it(`${op.name}: ${what} -> 400 MalformedXML`, async () => {
        const body = Buffer.from(text, what === 'binary garbage' ? 'latin1' : 'utf8');
        expectError(await call(op.make(body)), 400, 'MalformedXML');
        await op.after?.();
      });
    }
  }

  for (const op of ops) {
    it(`${op.name}: a properly signed body over the limit -> 400 MaxMessageLengthExceeded, nothing changed`, async () => {
      // CompleteMultipartUpload allows 8 MiB (10 000 parts with checksums); the others 1 MiB.
      const limit = op.name === 'CompleteMultipartUpload' ? 8 * 1024 * 1024 : 1024 * 1024;
      const filler = `<!--${'x'.repeat(limit)}-->`;
      const body = Buffer.from(op.valid.replace(/<\/(\w+)>$/, `${filler}</$1>`));
      expect(body.length).toBeGreaterThan(limit);
      expectError(await call(op.make(body)), 400, 'MaxMessageLengthExceeded');
      await op.after?.();
    });
  }

  it('CompleteMultipartUpload listing more than 10 000 parts -> 400 MalformedXML', async () => {
    let parts = '';
    for (let n = 1; n <= 10_001; n++) parts += `<Part><PartNumber>${n}</PartNumber><ETag>"${'0'.repeat(32)}"</ETag></Part>`;
    const body = Buffer.from(`<CompleteMultipartUpload>${parts}</CompleteMultipartUpload>`);
    expectError(await call({ method: 'POST', path: `/${BUCKET}/mpu-xml`, query: { uploadId }, body }), 400, 'MalformedXML');
    await ops[1]!.after!();
  });

  it('CompleteMultipartUpload with part number 0 or 10001 -> 400 InvalidArgument', async () => {
    for (const n of [0, 10_001]) {
      const body = Buffer.from(`<CompleteMultipartUpload><Part><PartNumber>${n}</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>`);
      expectError(await call({ method: 'POST', path: `/${BUCKET}/mpu-xml`, query: { uploadId }, body }), 400, 'InvalidArgument');
    }
  });
});

// ---------------------------------------------------------------------------------------
describe('missing or garbled authentication', () => {
  const target = `/${BUCKET}/keep/small`;

  it('no authentication -> 403 AccessDenied (HEAD: status only)', async () => {
    expectError(await send({ method: 'GET', target, headers: {} }), 403, 'AccessDenied');
    expectError(await send({ method: 'PUT', target: `/${BUCKET}/anon`, headers: {}, body: Buffer.from('x') }), 403, 'AccessDenied');
    expectError(await send({ method: 'HEAD', target, headers: {} }), 403, 'AccessDenied', 'HEAD');
    await expectAbsent(BUCKET, 'anon');
  });

  it('a garbage Authorization header -> 400 (InvalidArgument / AuthorizationHeaderMalformed)', async () => {
    const now = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
    expectError(await send({ method: 'GET', target, headers: { authorization: 'Bearer abc.def.ghi' } }), 400, 'InvalidArgument');
    expectError(
      await send({ method: 'GET', target, headers: { authorization: 'AWS4-HMAC-SHA256 garbage', 'x-amz-date': now } }),
      400,
      'AuthorizationHeaderMalformed'
    );
    expectError(
      await send({
        method: 'GET',
        target,
        headers: { authorization: `AWS4-HMAC-SHA256 Credential=${ACCESS_KEY}/bad, SignedHeaders=host, Signature=00`, 'x-amz-date': now },
      }),
      400,
      'AuthorizationHeaderMalformed'
    );
    expectError(await send({ method: 'HEAD', target, headers: { authorization: '\u00ff\u00fe' } }), 400, 'InvalidArgument', 'HEAD');
  });

  it('the wrong secret -> 403 SignatureDoesNotMatch', async () => {
    const r = await call({ method: 'GET', path: target, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: 'not-the-secret' } });
    expectError(r, 403, 'SignatureDoesNotMatch');
    expect(r.text).toContain('<StringToSign>');
    const put = await call({
      method: 'PUT',
      path: `/${BUCKET}/wrong-secret`,
      body: Buffer.from('x'),
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: 'not-the-secret' },
    });
    expectError(put, 403, 'SignatureDoesNotMatch');
    await expectAbsent(BUCKET, 'wrong-secret');
  });

  it('an unknown access key -> 403 InvalidAccessKeyId', async () => {
    expectError(await call({ method: 'GET', path: target, credentials: { accessKeyId: 'AKIDUNKNOWN', secretAccessKey: SECRET_KEY } }), 403, 'InvalidAccessKeyId');
  });

  it('an expired presigned URL -> 403 AccessDenied "Request has expired"', async () => {
    const url = presignUrl(
      { method: 'GET', protocol: 'http:', host, path: target, expiresSeconds: 60 },
      { credentials: CREDS, region: REGION, service: 's3', date: new Date(Date.now() - 120_000) }
    );
    const r = await send({ method: 'GET', target: url.slice(s.url.length), headers: {} });
    expectError(r, 403, 'AccessDenied');
    expect(r.text).toContain('Request has expired');
    // The same URL while valid works (the failure is the expiry, not the signature).
    const ok = presignUrl({ method: 'GET', protocol: 'http:', host, path: target, expiresSeconds: 60 }, { credentials: CREDS, region: REGION, service: 's3' });
    expect((await send({ method: 'GET', target: ok.slice(s.url.length), headers: {} })).status).toBe(200);
  });

  it('X-Amz-Expires over 7 days -> 403 AccessDenied (as S3 answers it)', async () => {
    const url = presignUrl({ method: 'GET', protocol: 'http:', host, path: target, expiresSeconds: 604_800 }, { credentials: CREDS, region: REGION, service: 's3' });
    const r = await send({ method: 'GET', target: url.slice(s.url.length).replace('X-Amz-Expires=604800', 'X-Amz-Expires=604801'), headers: {} });
    expectError(r, 403, 'AccessDenied');
  });

  it('a clock skewed by more than 15 minutes -> 403 RequestTimeTooSkewed with ServerTime', async () => {
    for (const offset of [-16 * 60_000, 16 * 60_000]) {
      const r = await call({ method: 'GET', path: target, date: new Date(Date.now() + offset) });
      expectError(r, 403, 'RequestTimeTooSkewed');
      expect(r.text).toMatch(/<ServerTime>\d{4}-\d\d-\d\dT[^<]+<\/ServerTime>/);
      expect(r.text).toContain('<MaxAllowedSkewMilliseconds>900000</MaxAllowedSkewMilliseconds>');
    }
    // 14 minutes is inside the allowance.
    expect((await call({ method: 'GET', path: target, date: new Date(Date.now() - 14 * 60_000) })).status).toBe(200);
  });

  it('a tampered signed header, path or query -> 403 SignatureDoesNotMatch', async () => {
    const req = signed({ method: 'PUT', path: `/${BUCKET}/tampered`, body: Buffer.from('data'), headers: { 'x-amz-meta-owner': 'alice' } });
    expectError(await send({ ...req, headers: { ...req.headers, 'x-amz-meta-owner': 'mallory' } }), 403, 'SignatureDoesNotMatch');
    expectError(await send({ ...req, target: `/${BUCKET}/tampered2` }), 403, 'SignatureDoesNotMatch');
    expectError(await send({ ...req, target: `${req.target}?tagging` }), 403, 'SignatureDoesNotMatch');
    // An x-amz-* header added without being signed is refused outright.
    expectError(await send({ ...req, headers: { ...req.headers, 'x-amz-meta-extra': '1' } }), 403, 'AccessDenied');
    await expectAbsent(BUCKET, 'tampered');
    await expectAbsent(BUCKET, 'tampered2');
  });

  it('a request without x-amz-content-sha256 -> 400 InvalidRequest', async () => {
    // Signed with it, sent without it (it is checked before the signature).
    const req = signed({ method: 'PUT', path: `/${BUCKET}/no-sha`, body: Buffer.from('data') });
    const headers = { ...req.headers };
    delete headers['x-amz-content-sha256'];
    expectError(await send({ ...req, headers }), 400, 'InvalidRequest');
    // Signed without it, as a signer for another service would.
    const bare = signed({ method: 'GET', path: target });
    const h2 = { ...bare.headers };
    delete h2['x-amz-content-sha256'];
    h2.authorization = h2.authorization!.replace('host;x-amz-content-sha256;x-amz-date', 'host;x-amz-date');
    expectError(await send({ ...bare, headers: h2 }), 400, 'InvalidRequest');
    expectError(await send({ ...bare, method: 'HEAD', headers: h2 }), 400, 'InvalidRequest', 'HEAD');
    await expectAbsent(BUCKET, 'no-sha');
  });
});

// ---------------------------------------------------------------------------------------
describe('truncated or lying aws-chunked bodies', () => {
  const SIGNED = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD';
  const UNSIGNED_TRAILER = 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';
  let n = 0;

  /** Sends a streaming PUT whose body is built from the signed seed (exact Content-Length). */
  async function streamingPut(
    mode: typeof SIGNED | typeof UNSIGNED_TRAILER,
    decodedLength: number,
    build: (seed: string, chain: ReturnType<typeof signV4>['chain']) => Buffer,
    extra: Record<string, string> = {}
  ): Promise<{ reply: Reply; key: string }> {
    const key = `chunked-${n++}`;
    const headers: Record<string, string> = {
      'content-encoding': 'aws-chunked',
      'x-amz-decoded-content-length': String(decodedLength),
      ...extra,
    };
    if (mode === UNSIGNED_TRAILER) headers['x-amz-trailer'] = 'x-amz-checksum-crc32';
    const req = signed({ method: 'PUT', path: `/${BUCKET}/${key}`, headers, payloadHash: mode });
    const body = build(req.signature, req.chain);
    return { reply: await send({ ...req, body }), key };
  }

  const crc32b64 = (data: Uint8Array) => {
    let c = ~0;
    for (const b of data) {
      c ^= b;
      for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
    }
    const out = Buffer.alloc(4);
    out.writeUInt32BE(~c >>> 0);
    return out.toString('base64');
  };

  for (const size of [5000, 600 * 1024]) {
    const data = randomBytes(size, 77 + size);
    const label = size > 512 * 1024 ? 'carrier-size' : 'packed-size';

    it(`signed (${label}): a valid body is stored (control)`, async () => {
      const { reply, key } = await streamingPut(SIGNED, size, (seed, chain) => signedChunked(chain, seed, framesOf(data, 64 * 1024)));
      expect(reply.status, reply.text).toBe(200);
      expect((await call({ method: 'GET', path: `/${BUCKET}/${key}` })).body.equals(Buffer.from(data))).toBe(true);
      expect((await call({ method: 'DELETE', path: `/${BUCKET}/${key}` })).status).toBe(204);
    });

    it(`signed (${label}): a chunk shorter than declared -> 400 IncompleteBody, nothing stored`, async () => {
      const { reply, key } = await streamingPut(SIGNED, size, (seed, chain) => {
        const frames = framesOf(data, 64 * 1024);
        const last = frames[frames.length - 1]!;
        frames[frames.length - 1] = { data: last.data.subarray(0, last.data.length - 10), sizeText: last.data.length.toString(16) };
        return signedChunked(chain, seed, frames, { final: false });
      });
      expectError(reply, 400, 'IncompleteBody');
      await expectAbsent(BUCKET, key);
    });

    it(`signed (${label}): a bad chunk signature -> 403 SignatureDoesNotMatch, nothing stored`, async () => {
      const { reply, key } = await streamingPut(SIGNED, size, (seed, chain) => {
        const frames = framesOf(data, 64 * 1024);
        frames[frames.length - 1]!.signature = 'f'.repeat(64);
        return signedChunked(chain, seed, frames);
      });
      expectError(reply, 403, 'SignatureDoesNotMatch');
      await expectAbsent(BUCKET, key);
    });

    it(`signed (${label}): data with a flipped bit under a valid-looking chain -> 403, nothing stored`, async () => {
      const { reply, key } = await streamingPut(SIGNED, size, (seed, chain) => {
        const body = signedChunked(chain, seed, framesOf(data, 64 * 1024));
        const at = body.length - 200; // inside the last data chunk
        body[at] = body[at]! ^ 1;
        return body;
      });
      expectError(reply, 403, 'SignatureDoesNotMatch');
      await expectAbsent(BUCKET, key);
    });

    it(`signed (${label}): decoded length above / below x-amz-decoded-content-length -> 400 IncompleteBody`, async () => {
      for (const declared of [size + 1, size - 1]) {
        const { reply, key } = await streamingPut(SIGNED, declared, (seed, chain) => signedChunked(chain, seed, framesOf(data, 64 * 1024)));
        expectError(reply, 400, 'IncompleteBody');
        await expectAbsent(BUCKET, key);
      }
    });

    it(`unsigned trailer (${label}): a wrong trailer checksum -> 400 BadDigest, nothing stored`, async () => {
      const { reply, key } = await streamingPut(UNSIGNED_TRAILER, size, () =>
        unsignedChunked(framesOf(data, 64 * 1024), [['x-amz-checksum-crc32', crc32b64(randomBytes(10, 5))]])
      );
      expectError(reply, 400, 'BadDigest');
      await expectAbsent(BUCKET, key);
    });

    it(`unsigned trailer (${label}): decoded length above / below x-amz-decoded-content-length -> 400 IncompleteBody`, async () => {
      for (const declared of [size + 1, size - 1]) {
        const { reply, key } = await streamingPut(UNSIGNED_TRAILER, declared, () =>
          unsignedChunked(framesOf(data, 64 * 1024), [['x-amz-checksum-crc32', crc32b64(data)]])
        );
        expectError(reply, 400, 'IncompleteBody');
        await expectAbsent(BUCKET, key);
      }
    });

    it(`unsigned trailer (${label}): the right trailer checksum is stored (control)`, async () => {
      const { reply, key } = await streamingPut(UNSIGNED_TRAILER, size, () =>
        unsignedChunked(framesOf(data, 64 * 1024), [['x-amz-checksum-crc32', crc32b64(data)]])
      );
      expect(reply.status, reply.text).toBe(200);
      expect((await call({ method: 'DELETE', path: `/${BUCKET}/${key}` })).status).toBe(204);
    });
  }

  it('a bad hex chunk size -> 400 InvalidRequest (signed and unsigned)', async () => {
    const data = randomBytes(100, 8);
    for (const sizeText of ['zz', '-1', '', '0x64', '1'.repeat(17)]) {
      const a = await streamingPut(SIGNED, 100, (seed, chain) => signedChunked(chain, seed, [{ data, sizeText }]));
      expectError(a.reply, 400, 'InvalidRequest');
      await expectAbsent(BUCKET, a.key);
      const b = await streamingPut(UNSIGNED_TRAILER, 100, () => unsignedChunked([{ data, sizeText }], [['x-amz-checksum-crc32', crc32b64(data)]]));
      expectError(b.reply, 400, 'InvalidRequest');
      await expectAbsent(BUCKET, b.key);
    }
  });

  it('unsigned trailer: a chunk shorter than declared / a body cut before the trailers -> 400, nothing stored', async () => {
    const data = randomBytes(3000, 10);
    const short = await streamingPut(UNSIGNED_TRAILER, 3000, () => unsignedChunked([{ data: data.subarray(0, 2000), sizeText: (3000).toString(16) }], [], { final: false }));
    expectError(short.reply, 400, 'IncompleteBody');
    await expectAbsent(BUCKET, short.key);
    const cut = await streamingPut(UNSIGNED_TRAILER, 3000, () => unsignedChunked([{ data }], [], { final: false }));
    expectError(cut.reply, 400, 'IncompleteBody');
    await expectAbsent(BUCKET, cut.key);
  });

  it('signed with trailer: a wrong trailer checksum (validly signed) -> 400 BadDigest, a forged trailer signature -> 403', async () => {
    const data = randomBytes(4000, 11);
    const put = async (checksum: string, forge: boolean) => {
      const key = `chunked-${n++}`;
      const req = signed({
        method: 'PUT',
        path: `/${BUCKET}/${key}`,
        payloadHash: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER',
        headers: { 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': '4000', 'x-amz-trailer': 'x-amz-checksum-crc32' },
      });
      let body = signedChunked(req.chain, req.signature, framesOf(data, 1024), { trailers: [['x-amz-checksum-crc32', checksum]] });
      if (forge) body = Buffer.from(body.toString('latin1').replace(/x-amz-trailer-signature:[0-9a-f]{64}/, `x-amz-trailer-signature:${'0'.repeat(64)}`), 'latin1');
      return { reply: await send({ ...req, body }), key };
    };
    const bad = await put(crc32b64(randomBytes(8, 1)), false);
    expectError(bad.reply, 400, 'BadDigest');
    await expectAbsent(BUCKET, bad.key);
    const forged = await put(crc32b64(data), true);
    expectError(forged.reply, 403, 'SignatureDoesNotMatch');
    await expectAbsent(BUCKET, forged.key);
    const good = await put(crc32b64(data), false);
    expect(good.reply.status, good.reply.text).toBe(200);
    expect((await call({ method: 'DELETE', path: `/${BUCKET}/${good.key}` })).status).toBe(204);
  });

  it('x-amz-decoded-content-length missing or not a number -> 411 / 400', async () => {
    const req = signed({ method: 'PUT', path: `/${BUCKET}/chunked-x`, payloadHash: SIGNED, headers: { 'content-encoding': 'aws-chunked' } });
    expectError(await send({ ...req, body: signedChunked(req.chain, req.signature, [{ data: Buffer.from('abc') }]) }), 411, 'MissingContentLength');
    const req2 = signed({ method: 'PUT', path: `/${BUCKET}/chunked-x`, payloadHash: SIGNED, headers: { 'x-amz-decoded-content-length': '1e3' } });
    expectError(await send({ ...req2, body: signedChunked(req2.chain, req2.signature, [{ data: Buffer.from('abc') }]) }), 400, 'InvalidArgument');
    await expectAbsent(BUCKET, 'chunked-x');
  });
});

// ---------------------------------------------------------------------------------------
describe('Content-Length and digest mismatches', () => {
  it('a body shorter than Content-Length, then the client closes: nothing visible, budget released', async () => {
    for (const close of ['end', 'destroy'] as const) {
      const key = `short-${close}`;
      const data = randomBytes(50_000, 12);
      const req = signed({ method: 'PUT', path: `/${BUCKET}/${key}`, body: data });
      const reply = await rawExchange(s.port, [requestHead(req), data.subarray(0, 20_000)], { close, timeoutMs: 5000 });
      // A half-closed request may still be answered (400 IncompleteBody or similar); never 2xx.
      if (reply) expect(reply.status).toBeGreaterThanOrEqual(400);
      await expectAbsent(BUCKET, key);
    }
    await expectBudgetReleased();
  });

  it('a hex payload hash that does not match the body -> 400 XAmzContentSHA256Mismatch', async () => {
    const data = randomBytes(2000, 13);
    for (const size of [2000, 600 * 1024]) {
      const body = randomBytes(size, 14);
      const r = await call({ method: 'PUT', path: `/${BUCKET}/sha-${size}`, body, payloadHash: sha256Hex(data) });
      expectError(r, 400, 'XAmzContentSHA256Mismatch');
      await expectAbsent(BUCKET, `sha-${size}`);
    }
  });

  it('a wrong Content-MD5 -> 400 BadDigest; an unparseable one -> 400 InvalidDigest', async () => {
    const data = randomBytes(3000, 15);
    const wrong = await call({ method: 'PUT', path: `/${BUCKET}/md5`, body: data, headers: { 'content-md5': md5Base64(Buffer.from('other')) } });
    expectError(wrong, 400, 'BadDigest');
    for (const bad of ['not base64!', 'AAAA', '']) {
      const r = await call({ method: 'PUT', path: `/${BUCKET}/md5`, body: data, headers: { 'content-md5': bad } });
      expectError(r, 400, 'InvalidDigest');
    }
    await expectAbsent(BUCKET, 'md5');
  });

  it('an unparseable Content-Length or chunked without a length -> 400, never a 5xx', async () => {
    const req = signed({ method: 'PUT', path: `/${BUCKET}/cl`, body: Buffer.from('abc') });
    for (const cl of ['abc', '-1', '1, 2', '99999999999999999999']) {
      const r = await rawExchange(s.port, [requestHead({ ...req, headers: { ...req.headers, 'content-length': cl } }), 'abc']);
      expect(r?.status, `Content-Length: ${cl}`).toBe(400);
    }
    await expectAbsent(BUCKET, 'cl');
  });

  it('more bytes than Content-Length: the object is exactly Content-Length bytes, the rest is a (bad) next request', async () => {
    const data = randomBytes(100, 16);
    const garbage = Buffer.from('GARBAGE GARBAGE\r\n\r\n');
    // The extra bytes after the response: a keep-alive connection's next (invalid) request.
    const a = signed({ method: 'PUT', path: `/${BUCKET}/extra-a`, body: data });
    const ra = await rawExchange(s.port, [Buffer.concat([Buffer.from(requestHead(a)), data]), garbage], { gapMs: 300 });
    expect(ra?.status).toBe(200);
    const get = await call({ method: 'GET', path: `/${BUCKET}/extra-a` });
    expect(get.body.equals(Buffer.from(data))).toBe(true);
    expect((await call({ method: 'DELETE', path: `/${BUCKET}/extra-a` })).status).toBe(204);
    // In the same packet: Node's parser may reject the connection (400) before the PUT is
    // answered; either way the object is exact or absent, never longer.
    const b = signed({ method: 'PUT', path: `/${BUCKET}/extra-b`, body: data });
    const rb = await rawExchange(s.port, [Buffer.concat([Buffer.from(requestHead(b)), data, garbage])]);
    expect([200, 400]).toContain(rb?.status);
    const got = await call({ method: 'GET', path: `/${BUCKET}/extra-b` });
    if (got.status === 200) expect(got.body.equals(Buffer.from(data))).toBe(true);
    else expect(got.status).toBe(404);
    await call({ method: 'DELETE', path: `/${BUCKET}/extra-b` });
  });

  it('garbage request lines get 400 from the HTTP layer', async () => {
    for (const line of ['GARBAGE\r\n\r\n', 'GET\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', '\x00\x01\x02\r\n\r\n', `GET /${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`]) {
      const r = await rawExchange(s.port, [line], { close: 'keep', timeoutMs: 3000 });
      if (r) expect(r.status, JSON.stringify(line.slice(0, 30))).toBeGreaterThanOrEqual(400);
      if (r) expect(r.status).toBeLessThan(500);
    }
  });
});

// ---------------------------------------------------------------------------------------
describe('names, ranges, part numbers, methods and sub-resources', () => {
  it('invalid bucket names -> 400 InvalidBucketName', async () => {
    for (const name of ['ab', 'a'.repeat(64), 'Upper', 'under_score', '-dash', 'dash-', 'a..b', '192.168.1.1', 'xn--abc', 'ends-s3alias']) {
      expectError(await call({ method: 'PUT', path: `/${name}` }), 400, 'InvalidBucketName');
      expectError(await call({ method: 'GET', path: `/${name}/key` }), 400, 'InvalidBucketName');
      expectError(await call({ method: 'HEAD', path: `/${name}` }), 400, 'InvalidBucketName', 'HEAD');
    }
  });

  it('keys over 1024 bytes -> 400 KeyTooLongError (1024 bytes is fine)', async () => {
    const long = 'k'.repeat(1025);
    const multibyte = 'é'.repeat(513); // 1026 bytes in 513 characters
    for (const key of [long, multibyte]) {
      expectError(await call({ method: 'PUT', path: `/${BUCKET}/${key}`, body: Buffer.from('x') }), 400, 'KeyTooLongError');
      expectError(await call({ method: 'GET', path: `/${BUCKET}/${key}` }), 400, 'KeyTooLongError');
    }
    const ok = 'k'.repeat(1024);
    expect((await call({ method: 'PUT', path: `/${PROBE_BUCKET}/${ok}`, body: Buffer.from('x') })).status).toBe(200);
  });

  it('a range starting past the end -> 416 InvalidRange with Content-Range bytes */N', async () => {
    const size = KNOWN['keep/small']!.length;
    for (const range of [`bytes=${size}-`, `bytes=${size + 10}-${size + 20}`, 'bytes=99999999999999999999999-']) {
      const r = await call({ method: 'GET', path: `/${BUCKET}/keep/small`, headers: { range } });
      expectError(r, 416, 'InvalidRange');
      expect(r.headers['content-range']).toBe(`bytes */${size}`);
      const h = await call({ method: 'HEAD', path: `/${BUCKET}/keep/small`, headers: { range } });
      expectError(h, 416, 'InvalidRange', 'HEAD');
    }
    // On an empty object every range is unsatisfiable... except that S3 serves it whole.
    const e = await call({ method: 'GET', path: `/${BUCKET}/keep/empty`, headers: { range: 'bytes=0-' } });
    expect([200, 416]).toContain(e.status);
  });

  it('a malformed Range is ignored: 200 with the whole object, as S3 does', async () => {
    const whole = Buffer.from(KNOWN['keep/small']!);
    for (const range of ['bytes=abc', 'bytes=5-2', 'items=0-5', 'bytes=0-1,4-5', 'bytes=-', 'garbage', 'bytes=1-2-3', '']) {
      const r = await call({ method: 'GET', path: `/${BUCKET}/keep/small`, headers: { range } });
      expect(r.status, range).toBe(200);
      expect(r.body.equals(whole), range).toBe(true);
    }
  });

  it('part numbers 0, 10001 and non-numeric -> 400 InvalidArgument (UploadPart and GetObject)', async () => {
    const created = await call({ method: 'POST', path: `/${BUCKET}/mpu-pn`, query: { uploads: '' } });
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(created.text)![1]!;
    try {
      for (const pn of ['0', '10001', 'abc', '-1', '1.5', '', '99999999999']) {
        const r = await call({ method: 'PUT', path: `/${BUCKET}/mpu-pn`, query: { uploadId, partNumber: pn }, body: Buffer.from('x') });
        expectError(r, 400, 'InvalidArgument');
        expectError(await call({ method: 'GET', path: `/${BUCKET}/keep/small`, query: { partNumber: pn } }), 400, 'InvalidArgument');
      }
      const parts = await call({ method: 'GET', path: `/${BUCKET}/mpu-pn`, query: { uploadId } });
      expect(parts.text).not.toContain('<Part>');
    } finally {
      await call({ method: 'DELETE', path: `/${BUCKET}/mpu-pn`, query: { uploadId } });
    }
  });

  it('unknown HTTP methods -> 405 MethodNotAllowed', async () => {
    for (const method of ['PROPFIND', 'PATCH', 'TRACE', 'MKCOL', 'LOCK', 'SEARCH']) {
      expectError(await call({ method, path: `/${BUCKET}/keep/small` }), 405, 'MethodNotAllowed');
      expectError(await call({ method, path: `/${BUCKET}` }), 405, 'MethodNotAllowed');
      expectError(await call({ method, path: '/' }), 405, 'MethodNotAllowed');
    }
    // Tokens that are not HTTP methods at all never reach the app: Node's parser answers 400.
    const r = await rawExchange(s.port, [`FOO /${BUCKET}/keep/small HTTP/1.1\r\nHost: ${host}\r\n\r\n`]);
    expect(r?.status).toBe(400);
  });

  it('unsupported sub-resources -> 501 NotImplemented as XML, and they do not act as the plain operation', async () => {
    for (const sub of ['logging', 'notification', 'website', 'replication']) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        expectError(await call({ method, path: `/${BUCKET}`, query: { [sub]: '' } }), 501, 'NotImplemented');
      }
    }
    // Lifecycle is implemented: a PUT without a document is refused, never a bucket creation.
    expectError(await call({ method: 'GET', path: `/${BUCKET}`, query: { lifecycle: '' } }), 404, 'NoSuchLifecycleConfiguration');
    expectError(await call({ method: 'PUT', path: `/${BUCKET}`, query: { lifecycle: '' }, body: Buffer.from('<x/>') }), 400, 'InvalidRequest'); // no Content-MD5
    // Object Lock sub-resources are implemented: on a bucket without Object Lock they are
    // refused (InvalidRequest; a document that is not theirs is MalformedXML first).
    for (const sub of ['retention', 'legal-hold']) {
      expectError(await call({ method: 'GET', path: `/${BUCKET}/keep/small`, query: { [sub]: '' } }), 400, 'InvalidRequest');
      expectError(await call({ method: 'PUT', path: `/${BUCKET}/keep/small`, query: { [sub]: '' }, body: Buffer.from('<x/>') }), 400, 'MalformedXML');
    }
    for (const sub of ['restore', 'torrent']) {
      // GET ?torrent is GetObjectTorrent (a BitTorrent file, never the object's bytes).
      if (sub !== 'torrent') expectError(await call({ method: 'GET', path: `/${BUCKET}/keep/small`, query: { [sub]: '' } }), 501, 'NotImplemented');
      expectError(await call({ method: 'PUT', path: `/${BUCKET}/keep/small`, query: { [sub]: '' }, body: Buffer.from('<x/>') }), 501, 'NotImplemented');
    }
    const torrent = await call({ method: 'GET', path: `/${BUCKET}/keep/small`, query: { torrent: '' } });
    expect(torrent.status).toBe(200);
    expect(torrent.headers['content-type']).toBe('application/x-bittorrent');
    expect(Buffer.from(torrent.body).subarray(0, 1).toString()).toBe('d');
    // PUT /bucket?versioning on a new name must not have created it; bad documents are refused.
    expectError(await call({ method: 'PUT', path: '/bad-input-ver', query: { versioning: '' }, body: Buffer.from('<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>') }), 404, 'NoSuchBucket');
    expect((await call({ method: 'HEAD', path: '/bad-input-ver' })).status).toBe(404);
    for (const doc of ['', '<VersioningConfiguration/>', '<VersioningConfiguration><Status>On</Status></VersioningConfiguration>', '<VersioningConfiguration><Status>Enabled</Status><Status>Enabled</Status></VersioningConfiguration>', '<VersioningConfiguration><Status>Enabled', '<Other><Status>Enabled</Status></Other>', `<VersioningConfiguration><Status>${'E'.repeat(100_000)}</Status></VersioningConfiguration>`]) {
      const res = await call({ method: 'PUT', path: `/${BUCKET}`, query: { versioning: '' }, body: Buffer.from(doc) });
      expect(res.status, doc.slice(0, 80)).toBe(400);
    }
    for (const id of ['', 'x', '0'.repeat(17), 'NULL', '../etc']) {
      expectError(await call({ method: 'GET', path: `/${BUCKET}/keep/small`, query: { versionId: id } }), 400, 'InvalidArgument');
      expectError(await call({ method: 'GET', path: `/${BUCKET}`, query: { versions: '', 'key-marker': 'a', 'version-id-marker': id || 'x' } }), 400, 'InvalidArgument');
    }
    expect((await call({ method: 'GET', path: `/${BUCKET}`, query: { versions: '' } })).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------
describe('values that would end up in response headers', () => {
  // Regressions (found by fuzz:http): each of these reached res.writeHead() with a character
  // Node refuses to send (ERR_INVALID_CHAR), so the request got a 500 InternalError.

  it('response-* overrides holding CR, LF, NUL or non-Latin-1 characters -> 400 InvalidArgument', async () => {
    for (const [param, value] of [
      ['response-content-type', 'text/plain\r\nx-injected: 1'],
      ['response-cache-control', 'a\u0000b'],
      ['response-content-disposition', 'attachment; filename="€.txt"'],
      ['response-expires', '\n'],
    ] as const) {
      expectError(await call({ method: 'GET', path: `/${BUCKET}/keep/small`, query: { [param]: value } }), 400, 'InvalidArgument');
      expectError(await call({ method: 'HEAD', path: `/${BUCKET}/keep/small`, query: { [param]: value } }), 400, 'InvalidArgument', 'HEAD');
    }
    // Latin-1 and ordinary values still pass through.
    const ok = await call({ method: 'GET', path: `/${BUCKET}/keep/small`, query: { 'response-content-type': 'text/plain; charset=ü', 'response-cache-control': 'no-cache' } });
    expect(ok.status).toBe(200);
    expect(ok.headers['cache-control']).toBe('no-cache');
  });

  it('an x-amz-tagging header with a malformed escape -> 400 InvalidArgument, nothing stored', async () => {
    for (const tagging of ['a=%ZZ', '%=b', 'a=%E2%82', 'k=v&x=%']) {
      const r = await call({ method: 'PUT', path: `/${BUCKET}/bad-tagging`, body: Buffer.from('x'), headers: { 'x-amz-tagging': tagging } });
      expectError(r, 400, 'InvalidArgument');
      const mpu = await call({ method: 'POST', path: `/${BUCKET}/bad-tagging`, query: { uploads: '' }, headers: { 'x-amz-tagging': tagging } });
      expectError(mpu, 400, 'InvalidArgument');
    }
    await expectAbsent(BUCKET, 'bad-tagging');
  });

  it('a CORS ExposeHeader that cannot be sent in a header -> 400 InvalidRequest; cross-origin requests keep working', async () => {
    const rule = (expose: string) =>
      Buffer.from(`<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod><AllowedOrigin>*</AllowedOrigin><ExposeHeader>${expose}</ExposeHeader></CORSRule></CORSConfiguration>`);
    for (const expose of ['a&#10;b', 'x-€', 'a&#13;&#10;set-cookie: x', 'a&#1;']) {
      expectError(await call({ method: 'PUT', path: `/${PROBE_BUCKET}`, query: { cors: '' }, body: rule(expose) }), 400, 'InvalidRequest');
    }
    expectError(await call({ method: 'GET', path: `/${PROBE_BUCKET}`, query: { cors: '' } }), 404, 'NoSuchCORSConfiguration');
    expect((await call({ method: 'PUT', path: `/${PROBE_BUCKET}`, query: { cors: '' }, body: rule('x-amz-meta-ü, etag') })).status).toBe(200);
    try {
      const put = await call({ method: 'PUT', path: `/${PROBE_BUCKET}/cors-object`, body: Buffer.from('x'), headers: { origin: 'http://a.example' } });
      expect(put.status).toBe(200);
      const r = await call({ method: 'GET', path: `/${PROBE_BUCKET}/missing`, headers: { origin: 'http://a.example' } });
      expectError(r, 404, 'NoSuchKey');
      expect(r.headers['access-control-allow-origin']).toBe('*');
      const pre = await send({ method: 'OPTIONS', target: `/${PROBE_BUCKET}/x`, headers: { origin: 'http://a.example', 'access-control-request-method': 'GET' } });
      expect(pre.status).toBe(200);
    } finally {
      await call({ method: 'DELETE', path: `/${PROBE_BUCKET}`, query: { cors: '' } });
    }
  });
});

// ---------------------------------------------------------------------------------------
describe('clients that disconnect mid-download', () => {
  // Regression (found by fuzz:http): pipelined GETs queue their responses behind the first;
  // a queued response has no socket, so when the client left, it never emitted 'close' and
  // its handler waited for 'drain' forever — one leaked in-flight request (and its buffers)
  // per queued GET.
  it('pipelined GETs of a large object, client gone after the first response: every handler finishes', async () => {
    const size = 4 * 1024 * 1024; // large enough for write() to report backpressure on queued responses
    const put = await call({ method: 'PUT', path: `/${PROBE_BUCKET}/pipelined`, body: randomBytes(size, 21) });
    expect(put.status).toBe(200);
    const gets = Array.from({ length: 8 }, () => requestHead(signed({ method: 'GET', path: `/${PROBE_BUCKET}/pipelined` }))).join('');
    const r = await rawExchange(s.port, [gets], { close: 'keep' });
    expect(r?.status).toBe(200);
    expect(r?.body.length).toBe(size);
    const deadline = Date.now() + 5000;
    let inFlight = await metric('strata_requests_in_flight');
    while (inFlight > 1 && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 50));
      inFlight = await metric('strata_requests_in_flight');
    }
    expect(inFlight, 'requests still in flight (the /metrics request itself is 1)').toBe(1);
  });
});

// ---------------------------------------------------------------------------------------
describe('clients that disconnect mid-upload', () => {
  for (const [label, size, sent] of [
    ['packed-size (~100 KiB)', 100 * 1024, 60 * 1024],
    ['carrier-size (~20 MiB)', 20 * 1024 * 1024, 9 * 1024 * 1024],
  ] as const) {
    it(`${label}: nothing visible afterwards and the pending budget is released`, async () => {
      const data = randomBytes(size, size);
      for (const payloadHash of [sha256Hex(data), 'UNSIGNED-PAYLOAD']) {
        const key = `disconnect-${size}-${payloadHash.length}`;
        const req = signed({ method: 'PUT', path: `/${BUCKET}/${key}`, body: data, payloadHash });
        const reply = await rawExchange(s.port, [requestHead(req), data.subarray(0, sent / 2), data.subarray(sent / 2, sent)], {
          close: 'destroy',
          gapMs: 50,
        });
        expect(reply).toBeUndefined();
        await expectBudgetReleased();
        await expectAbsent(BUCKET, key);
      }
      // A client going away is recorded as its IncompleteBody, not as an internal error.
      const last = s.logs.filter((l) => l.includes(`"op":"PutObject"`) && l.includes(`"key":"disconnect-${size}-`)).map((l) => JSON.parse(l) as { code?: string; status?: number });
      expect(last.map((l) => [l.status, l.code])).toEqual([
        [400, 'IncompleteBody'],
        [400, 'IncompleteBody'],
      ]);
    });
  }
});

// ---------------------------------------------------------------------------------------
describe('headers and documents asking for what Strata does not do (issue 8, section 2)', () => {
  const LOCK: Record<string, string>[] = [
    { 'x-amz-object-lock-mode': 'COMPLIANCE', 'x-amz-object-lock-retain-until-date': '2099-01-01T00:00:00Z' },
    { 'x-amz-object-lock-retain-until-date': '2099-01-01T00:00:00Z' },
    { 'x-amz-object-lock-legal-hold': 'ON' },
  ];
  const GRANTS = ['x-amz-grant-read', 'x-amz-grant-write', 'x-amz-grant-read-acp', 'x-amz-grant-write-acp', 'x-amz-grant-full-control'];
  const body = Buffer.from('must not be stored');

  it('Object Lock headers on a bucket without Object Lock (PutObject, CopyObject, CreateMultipartUpload) -> 400 InvalidRequest, nothing stored', async () => {
    for (const [i, headers] of LOCK.entries()) {
      expectError(await call({ method: 'PUT', path: `/${BUCKET}/lock-put-${i}`, body, headers: { ...headers, 'content-md5': md5Base64(body) } }), 400, 'InvalidRequest');
      await expectAbsent(BUCKET, `lock-put-${i}`);
      expectError(await call({ method: 'PUT', path: `/${BUCKET}/lock-copy-${i}`, headers: { ...headers, 'x-amz-copy-source': `/${BUCKET}/keep/small` } }), 400, 'InvalidRequest');
      await expectAbsent(BUCKET, `lock-copy-${i}`);
      expectError(await call({ method: 'POST', path: `/${BUCKET}/lock-mpu-${i}`, query: { uploads: '' }, headers }), 400, 'InvalidRequest');
    }
    const uploads = await call({ method: 'GET', path: `/${BUCKET}`, query: { uploads: '' } });
    expect(uploads.text).not.toContain('<Key>lock-');
  });

  it('malformed Object Lock headers on a lock-enabled bucket -> 400, nothing stored', async () => {
    const locked = 'bad-input-lock-enabled';
    expect((await call({ method: 'PUT', path: `/${locked}`, headers: { 'x-amz-bucket-object-lock-enabled': 'true' } })).status).toBe(200);
    const bad: [Record<string, string>, string][] = [
      [{ 'x-amz-object-lock-retain-until-date': '2099-01-01T00:00:00Z' }, 'InvalidArgument'],
      [{ 'x-amz-object-lock-mode': 'COMPLIANCE' }, 'InvalidArgument'],
      [{ 'x-amz-object-lock-mode': 'Compliance', 'x-amz-object-lock-retain-until-date': '2099-01-01T00:00:00Z' }, 'InvalidArgument'],
      [{ 'x-amz-object-lock-mode': 'COMPLIANCE', 'x-amz-object-lock-retain-until-date': '2001-01-01T00:00:00Z' }, 'InvalidArgument'],
      [{ 'x-amz-object-lock-mode': 'COMPLIANCE', 'x-amz-object-lock-retain-until-date': '2099-02-30T00:00:00Z' }, 'InvalidArgument'],
      [{ 'x-amz-object-lock-mode': 'COMPLIANCE', 'x-amz-object-lock-retain-until-date': 'x'.repeat(4000) }, 'InvalidArgument'],
      [{ 'x-amz-object-lock-legal-hold': 'yes' }, 'InvalidArgument'],
      // A locked body without Content-MD5 or a checksum (S3 requires one).
      [{ 'x-amz-object-lock-legal-hold': 'ON', 'content-md5': '' }, 'InvalidRequest'],
    ];
    for (const [i, [headers, code]] of bad.entries()) {
      const h = { 'content-md5': md5Base64(body), ...headers };
      if (h['content-md5'] === '') delete (h as Record<string, string>)['content-md5'];
      expectError(await call({ method: 'PUT', path: `/${locked}/bad-${i}`, body, headers: h }), 400, code);
      await expectAbsent(locked, `bad-${i}`);
    }
    for (const headers of [{ 'x-amz-bucket-object-lock-enabled': 'yes' }, { 'x-amz-bucket-object-lock-enabled': '' }]) {
      expectError(await call({ method: 'PUT', path: '/bad-input-lock-value', headers }), 400, 'InvalidArgument');
      expect((await call({ method: 'HEAD', path: '/bad-input-lock-value' })).status).toBe(404);
    }
  });

  it('ACL grants to other users (x-amz-grant-*) on every write -> 501, nothing stored', async () => {
    for (const h of GRANTS) {
      const headers = { [h]: 'id=SOMEONEELSE' };
      expectError(await call({ method: 'PUT', path: `/${BUCKET}/grant-put`, body, headers }), 501, 'NotImplemented');
      expectError(await call({ method: 'PUT', path: `/${BUCKET}/grant-copy`, headers: { ...headers, 'x-amz-copy-source': `/${BUCKET}/keep/small` } }), 501, 'NotImplemented');
      expectError(await call({ method: 'POST', path: `/${BUCKET}/grant-mpu`, query: { uploads: '' }, headers }), 501, 'NotImplemented');
      expectError(await call({ method: 'PUT', path: '/bad-input-granted', headers }), 501, 'NotImplemented');
      expectError(await call({ method: 'PUT', path: `/${BUCKET}/keep/small`, query: { acl: '' }, headers }), 501, 'NotImplemented');
    }
    for (const key of ['grant-put', 'grant-copy']) await expectAbsent(BUCKET, key);
    expect((await call({ method: 'HEAD', path: '/bad-input-granted' })).status).toBe(404);
    // Canned ACLs of AWS services, unknown ones, and canned plus explicit grants.
    expectError(await call({ method: 'PUT', path: `/${BUCKET}/acl-exec`, body, headers: { 'x-amz-acl': 'aws-exec-read' } }), 501, 'NotImplemented');
    expectError(await call({ method: 'PUT', path: `/${BUCKET}/acl-bogus`, body, headers: { 'x-amz-acl': 'world-writable' } }), 400, 'InvalidArgument');
    expectError(await call({ method: 'PUT', path: `/${BUCKET}/acl-both`, body, headers: { 'x-amz-acl': 'private', 'x-amz-grant-read': 'id=X' } }), 400, 'InvalidRequest');
    for (const key of ['acl-exec', 'acl-bogus', 'acl-both']) await expectAbsent(BUCKET, key);
  });

  it('an unknown Object Ownership -> 400, no bucket', async () => {
    expectError(await call({ method: 'PUT', path: '/bad-input-locked', headers: { 'x-amz-object-ownership': 'Nobody' } }), 400, 'InvalidArgument');
    expect((await call({ method: 'HEAD', path: '/bad-input-locked' })).status).toBe(404);
  });

  it('hostile bucket policies -> 400 MalformedPolicy, none stored', async () => {
    const policies = [
      '',
      '{"Statement":',
      '{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"*"}]}',
      '{"Statement":' + '['.repeat(5000) + ']'.repeat(5000) + '}',
      JSON.stringify({ Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::${BUCKET}/*`, Condition: { ArnLike: { 'aws:SourceArn': '*' } } }] }),
      Buffer.from(randomBytes(300, 11)).toString('latin1'),
    ];
    for (const p of policies) {
      expectError(await call({ method: 'PUT', path: `/${BUCKET}`, query: { policy: '' }, body: Buffer.from(p, 'latin1') }), 400, 'MalformedPolicy');
      expectError(await call({ method: 'GET', path: `/${BUCKET}`, query: { policy: '' } }), 404, 'NoSuchBucketPolicy');
    }
    const huge = JSON.stringify({ Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: `arn:aws:s3:::${BUCKET}/*` }] }) + ' '.repeat(30 * 1024);
    expectError(await call({ method: 'PUT', path: `/${BUCKET}`, query: { policy: '' }, body: Buffer.from(huge) }), 400, 'MalformedPolicy');
    expectError(await call({ method: 'GET', path: `/${BUCKET}`, query: { policy: '' } }), 404, 'NoSuchBucketPolicy');
  });

  it('ACL documents: malformed -> MalformedACLError, other grantees -> 501/400, the ACL unchanged', async () => {
    const wrap = (grants: string) => `<AccessControlPolicy><Owner><ID>${ACCESS_KEY}</ID></Owner><AccessControlList>${grants}</AccessControlList></AccessControlPolicy>`;
    const grant = (grantee: string, perm: string) => `<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ${grantee}</Grantee><Permission>${perm}</Permission></Grant>`;
    const owner = grant(`xsi:type="CanonicalUser"><ID>${ACCESS_KEY}</ID>`, 'FULL_CONTROL');
    const cases: [string, number, string][] = [
      ['<AccessControlPolicy>', 400, 'MalformedACLError'],
      [wrap(grant('xsi:type="CanonicalUser"><ID>x</ID>', 'EVERYTHING')), 400, 'MalformedACLError'],
      [wrap(owner + grant('xsi:type="CanonicalUser"><ID>NOSUCHKEY</ID>', 'READ')), 400, 'InvalidArgument'],
      [wrap(owner + grant('xsi:type="AmazonCustomerByEmail"><EmailAddress>a@b.c</EmailAddress>', 'READ')), 400, 'UnresolvableGrantByEmailAddress'],
      [wrap(owner + grant('xsi:type="Group"><URI>http://acs.amazonaws.com/groups/s3/LogDelivery</URI>', 'WRITE')), 501, 'NotImplemented'],
      [wrap(''), 501, 'NotImplemented'],
    ];
    for (const [doc, status, code] of cases) {
      expectError(await call({ method: 'PUT', path: `/${BUCKET}`, query: { acl: '' }, body: Buffer.from(doc) }), status, code);
      expectError(await call({ method: 'PUT', path: `/${BUCKET}/keep/small`, query: { acl: '' }, body: Buffer.from(doc) }), status, code);
    }
    for (const path of [`/${BUCKET}`, `/${BUCKET}/keep/small`]) {
      const acl = await call({ method: 'GET', path, query: { acl: '' } });
      expect(acl.status).toBe(200);
      expect(acl.text.match(/<Grant>/g)).toHaveLength(1);
    }
  });
});
