/**
 * @module From a draft (ops.ts) to a request on the wire: random pre-sign changes (they are
 * signed, so the request passes authentication and reaches the handlers), a payload mode
 * (hex, unsigned, aws-chunked signed or with trailers, framing broken or not), an auth form
 * (header, presigned, SigV2 presigned, anonymous, garbage), and sometimes post-sign
 * tampering — which must make the request fail (`mustFail`), whatever it targets.
 */
import { createHash, createHmac } from 'node:crypto';
import { presignUrl, sha256Hex, formatAmzDate } from '../../../src/sigv4/index.js';
import { sigV2Resource, sigV2StringToSign } from '../../../src/s3/auth/index.js';
import { readTarget } from '../../../src/s3/auth/target.js';
import { signV4, signedChunked, unsignedChunked, framesOf, type ChunkFrame, type SignedWire } from '../../integration/wire.js';
import type { Rng } from './rng.js';
import type { FuzzContext } from './context.js';
import type { FuzzCase, HttpCase } from './transport.js';
import { b64Digest, draftOp, listQuery, readHeaders, writeHeaders, type Draft, type PayloadMode } from './ops.js';

const S3_PARAMS = [
  'uploads', 'uploadId', 'partNumber', 'tagging', 'cors', 'delete', 'location', 'versionId', 'list-type', 'acl', 'versioning',
  'x-id', 'response-content-type', 'X-Amz-Signature', 'X-Amz-Credential', 'Signature', 'AWSAccessKeyId', 'x-amz-checksum-crc32',
  'x-amz-sdk-checksum-algorithm', 'select', 'restore', 'max-keys', 'prefix',
];

function pathOf(d: Draft): string {
  if (d.bucket === undefined) return '/';
  return d.key === undefined ? `/${d.bucket}` : `/${d.bucket}/${d.key}`;
}

/** Changes that are signed with the request (reads stay reads: no write-only params are added to reads of the known bucket). */
function preSign(ctx: FuzzContext, rng: Rng, d: Draft): void {
  for (let i = rng.weighted([[5, 0], [4, 1], [2, 2], [1, 3]] as const); i > 0; i--) {
    rng.pick<() => void>([
      () => {
        const name = rng.pick(S3_PARAMS);
        // Query params can turn a read into a write (?uploads, ?delete …): keep the known bucket read-only.
        if (d.bucket === ctx.knownBucket && ['uploads', 'uploadId', 'partNumber', 'tagging', 'cors', 'delete', 'acl', 'versioning', 'restore', 'select'].includes(name) && d.method !== 'GET' && d.method !== 'HEAD') return;
        d.query.push([name, rng.chance(0.5) ? '' : rng.nasty()]);
      },
      () => d.query.push(...listQuery(rng)),
      () => Object.assign(d.headers, d.writes ? writeHeaders(rng, d.body) : readHeaders(rng)),
      () => (d.headers[`x-amz-${rng.text(rng.int(1, 10))}`] = rng.nasty()),
      () => (d.headers['x-amz-checksum-crc32'] = b64Digest(rng, 'crc32', d.body)),
      () => (d.headers['content-type'] = rng.nasty()),
      () => {
        if (d.writes) d.body = rng.pick([Buffer.alloc(0), rng.bytes(rng.size(2048)), Buffer.alloc(1024 * 1024 + 1, 0x3c)]);
      },
      () => (d.payload = rng.pick<PayloadMode>(['unsigned', 'streaming-signed', 'streaming-signed-trailer', 'streaming-unsigned-trailer', 'bogus'])),
      () => {
        if (d.bucket !== undefined && rng.chance(0.5)) d.key = rng.pick(['x', '%', 'ü', ' ', 'a/../b', 'k'.repeat(1100)]);
      },
    ])();
  }
}

/** The x-amz-content-sha256 value a payload mode signs. */
function payloadHashOf(d: Draft, rng: Rng): string {
  switch (d.payload) {
    case 'hex':
      return rng.chance(0.97) ? sha256Hex(d.body ?? Buffer.alloc(0)) : sha256Hex(rng.bytes(8));
    case 'unsigned':
      return 'UNSIGNED-PAYLOAD';
    case 'streaming-signed':
      return 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD';
    case 'streaming-signed-trailer':
      return 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER';
    case 'streaming-unsigned-trailer':
      return 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';
    case 'bogus':
      return rng.pick(['', 'abc', 'STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD', 'e3b0c442', 'X'.repeat(64), 'unsigned-payload']);
  }
}

function crc32b64(data: Uint8Array): string {
  let c = ~0;
  for (const b of data) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  const out = Buffer.alloc(4);
  out.writeUInt32BE(~c >>> 0);
  return out.toString('base64');
}

/** Streaming modes: the aws-chunked body for `data`, framing intact or broken. */
function chunkedBody(rng: Rng, d: Draft, signed: SignedWire, data: Buffer): Buffer {
  const frames: ChunkFrame[] = framesOf(data, rng.pick([1, 100, 8192, 65536, 1 << 20]));
  const trailers: [string, string][] = [['x-amz-checksum-crc32', rng.chance(0.8) ? crc32b64(data) : rng.nasty()]];
  let final = true;
  if (rng.chance(0.4) && frames.length) {
    const f = rng.pick(frames);
    rng.pick<() => void>([
      () => (f.sizeText = rng.pick(['zz', '', '-1', '0', 'fffffffffffffffff', (f.data.length + 1).toString(16), (f.data.length - 1).toString(16), `${f.data.length.toString(16)};x=y`])),
      () => (f.signature = rng.pick(['0'.repeat(64), 'zz', ''])),
      () => (f.data = f.data.subarray(0, rng.int(0, f.data.length))),
      () => (final = false),
      () => trailers.push([rng.pick(['x-amz-checksum-sha1', 'x-bogus', 'x-amz-checksum-crc32']), rng.nasty()]),
    ])();
  }
  if (d.payload === 'streaming-unsigned-trailer') return unsignedChunked(frames, trailers, { final });
  const body = signedChunked(signed.chain, signed.signature, frames, { final, ...(d.payload === 'streaming-signed-trailer' ? { trailers } : {}) });
  return rng.chance(0.05) ? Buffer.concat([body, rng.bytes(rng.int(1, 50))]) : body;
}

/** Changes after signing; each one must make the request fail. */
function tamper(rng: Rng, c: HttpCase): void {
  const signedNames = /SignedHeaders=([^,\s]+)/.exec(c.headers.authorization ?? '')?.[1]?.split(';').filter((n) => n !== 'host' && n !== 'content-length') ?? [];
  rng.pick<() => void>([
    () => {
      const name = signedNames.length ? rng.pick(signedNames) : 'x-amz-date';
      c.headers[name] = `${c.headers[name] ?? ''}x`;
    },
    () => (c.method = rng.pick(['GET', 'PUT', 'DELETE', 'POST', 'HEAD'].filter((m) => m !== c.method))),
    () => {
      const q = c.target.indexOf('?');
      c.target = q < 0 ? `${c.target}x` : `${c.target.slice(0, q)}x${c.target.slice(q)}`;
    },
    () => (c.target += `${c.target.includes('?') ? '&' : '?'}${rng.pick(['acl', 'x=1', 'uploads', 'delete', 'tagging'])}`),
    () => delete c.headers.authorization,
    () => (c.headers.authorization = (c.headers.authorization ?? '').replace(/Signature=([0-9a-f])/, (_, h: string) => `Signature=${h === '0' ? '1' : '0'}`)),
    () => (c.headers['x-amz-date'] = formatAmzDate(new Date(Date.now() + rng.pick([-1, 1]) * rng.int(1, 3600) * 1000))),
  ])();
}

function authGarbage(rng: Rng, ctx: FuzzContext): Record<string, string> {
  const cred = `${ctx.credentials.accessKeyId}/${formatAmzDate(new Date()).slice(0, 8)}/${ctx.region}/s3/aws4_request`;
  return {
    authorization: rng.pick([
      'AWS4-HMAC-SHA256',
      'AWS4-HMAC-SHA256 ',
      `AWS4-HMAC-SHA256 Credential=${cred}`,
      `AWS4-HMAC-SHA256 Credential=${cred}, SignedHeaders=host, Signature=${'0'.repeat(64)}`,
      `AWS4-HMAC-SHA256 Credential=${cred}, SignedHeaders=, Signature=x`,
      `AWS4-HMAC-SHA256 Credential=${cred}, SignedHeaders=HOST, Signature=x, Signature=y`,
      `AWS4-HMAC-SHA256 Credential=/////, SignedHeaders=host, Signature=x`,
      `AWS ${ctx.credentials.accessKeyId}:abc`,
      'AWS4-ECDSA-P256-SHA256 x',
      'Bearer x',
      rng.nasty(),
    ]),
    'x-amz-date': rng.pick([formatAmzDate(new Date()), 'garbage', '', '20200101T000000Z']),
    'x-amz-content-sha256': rng.pick(['UNSIGNED-PAYLOAD', rng.nasty()]),
  };
}

/** One S3-level case: a drafted operation, mutated, signed some way, perhaps tampered. */
export function s3Case(ctx: FuzzContext, rng: Rng): FuzzCase {
  const { family, draft: d } = draftOp(ctx, rng);
  preSign(ctx, rng, d);
  // Virtual-hosted style sometimes: the bucket moves from the path into Host.
  const vhost = d.bucket !== undefined && rng.chance(0.12);
  const host = vhost ? `${d.bucket}.${ctx.baseDomain}:${ctx.host.split(':')[1]}` : ctx.host;
  const path = vhost ? `/${d.key ?? ''}` : pathOf(d);
  const form = rng.weighted([[80, 'header'], [9, 'presigned'], [3, 'sigv2'], [4, 'anonymous'], [4, 'garbage']] as const);
  const date = rng.chance(0.95) ? new Date() : new Date(Date.now() + rng.pick([-1, 1]) * rng.pick([14, 16, 60 * 24]) * 60_000);
  let c: HttpCase;
  let mustFail = false;
  const streaming = d.payload.startsWith('streaming');
  if (form === 'header') {
    const headers = { ...d.headers };
    if (streaming) {
      headers['content-encoding'] ??= 'aws-chunked';
      headers['x-amz-decoded-content-length'] ??= String(rng.chance(0.9) ? (d.body?.length ?? 0) : rng.int(0, 100_000));
      if (d.payload !== 'streaming-signed') headers['x-amz-trailer'] ??= 'x-amz-checksum-crc32';
    }
    const signed = signV4({
      method: d.method,
      path,
      query: d.query,
      headers,
      ...(d.body && !streaming ? { body: d.body } : {}),
      payloadHash: payloadHashOf(d, rng),
      host,
      credentials: ctx.credentials,
      region: ctx.region,
      date,
    });
    const body = streaming ? chunkedBody(rng, d, signed, d.body ?? Buffer.alloc(0)) : d.body;
    c = { kind: 'http', method: d.method, target: signed.target, headers: signed.headers, ...(body ? { body } : {}) };
    if (rng.chance(0.2)) {
      tamper(rng, c);
      mustFail = true;
    } else if (rng.chance(0.05) && d.readsBody && d.body && d.payload === 'hex') {
      c.body = Buffer.concat([d.body, Buffer.from('x')]);
      delete c.headers['content-length'];
      mustFail = true;
    }
  } else if (form === 'presigned') {
    let url = presignUrl(
      { method: d.method, protocol: 'http:', host, path, query: d.query, headers: d.headers, expiresSeconds: rng.pick([1, 60, 604_800]) },
      { credentials: ctx.credentials, region: ctx.region, service: 's3', date }
    );
    if (rng.chance(0.3)) {
      const signedUrl = url;
      // [change, whether it must fail]: a second X-Amz-Signature is ignored (the first one
      // is checked, and the canonical query leaves every X-Amz-Signature out), like S3.
      const [change, fails] = rng.pick<[() => string, boolean]>([
        [() => url.replace(/X-Amz-Expires=\d+/, `X-Amz-Expires=${rng.pick(['0', '604801', 'x', '-1', ''])}`), true],
        [() => url.replace(/X-Amz-Signature=[0-9a-f]/, 'X-Amz-Signature=g'), true],
        [() => url.replace(/X-Amz-Date=[^&]+/, `X-Amz-Date=${rng.pick(['20200101T000000Z', 'x', ''])}`), true],
        [() => url.replace(/X-Amz-Credential=[^&]+/, `X-Amz-Credential=${encodeURIComponent(rng.nasty())}`), true],
        [() => url.replace(/X-Amz-Algorithm=[^&]+/, `X-Amz-Algorithm=${rng.pick(['AWS4-ECDSA-P256-SHA256', 'x'])}`), true],
        [() => url.replace(/&X-Amz-SignedHeaders=[^&]+/, ''), true],
        [() => `${url}&X-Amz-Signature=${'0'.repeat(64)}`, false],
      ]);
      url = change();
      mustFail = fails && url !== signedUrl;
    }
    const target = url.slice(`http://${host}`.length);
    c = { kind: 'http', method: d.method, target, headers: { host, ...d.headers }, ...(d.body ? { body: d.body } : {}) };
  } else if (form === 'sigv2') {
    const expires = String(Math.floor(Date.now() / 1000) + rng.pick([60, -60, 3600]));
    const qs = d.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
    const rawPath = path.split('/').map(encodeURIComponent).join('/');
    const headers: Record<string, string> = { host, ...d.headers };
    const sts = sigV2StringToSign({ method: d.method, rawTarget: '', headers, now: new Date() }, expires, sigV2Resource(readTarget(`${rawPath}?${qs}`), vhost ? d.bucket : undefined));
    let sig = createHmac('sha1', ctx.credentials.secretAccessKey).update(sts, 'utf8').digest('base64');
    if (rng.chance(0.3)) {
      sig = createHash('sha1').update(sig).digest('base64');
      mustFail = true;
    }
    const auth = `AWSAccessKeyId=${encodeURIComponent(ctx.credentials.accessKeyId)}&Expires=${expires}&Signature=${encodeURIComponent(sig)}`;
    c = { kind: 'http', method: d.method, target: `${rawPath}?${qs ? `${qs}&` : ''}${auth}`, headers, ...(d.body ? { body: d.body } : {}) };
  } else {
    const qs = d.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
    const headers = { host, ...d.headers, ...(form === 'garbage' ? authGarbage(rng, ctx) : {}) };
    c = { kind: 'http', method: d.method, target: `${path.split('/').map(encodeURIComponent).join('/')}${qs ? `?${qs}` : ''}`, headers, ...(d.body ? { body: d.body } : {}) };
    mustFail = true;
  }
  if (rng.chance(0.05)) c.raw = true;
  // Preflight requests are not authenticated (CORS), so they are never "must fail".
  if (c.method === 'OPTIONS') mustFail = false;
  return { ...c, family: `${family}/${form}${vhost ? '/vhost' : ''}${mustFail ? '/tampered' : ''}`, mustFail };
}

/** A CORS preflight: unauthenticated by design. */
export function preflightCase(ctx: FuzzContext, rng: Rng): FuzzCase {
  const bucket = rng.pick([ctx.knownBucket, ctx.playBucket, 'no-such-bucket-fuzz', 'UPPER']);
  const headers: Record<string, string> = { host: ctx.host };
  if (rng.chance(0.9)) headers.origin = rng.pick(['http://a.example', '*', 'null', '', rng.nasty()]);
  if (rng.chance(0.9)) headers['access-control-request-method'] = rng.pick(['GET', 'PUT', 'DELETE', 'PATCH', '', rng.nasty()]);
  if (rng.chance(0.5)) headers['access-control-request-headers'] = rng.pick(['x-amz-date, authorization', '*', rng.nasty()]);
  const target = rng.chance(0.5) ? `/${bucket}/${encodeURIComponent(rng.pick(ctx.knownKeys))}` : `/${bucket}`;
  return { kind: 'http', method: 'OPTIONS', target, headers, family: 'Preflight' };
}
