/**
 * @module Drafts of S3 requests for the fuzzer: one generator per operation family, each
 * producing a plausible request with random (often invalid) parameters, headers and bodies.
 * A draft is not signed yet (see mutate.ts): pre-sign changes then pass authentication and
 * reach the handlers.
 *
 * Safety rule: a draft that may write (`writes`) targets the play bucket, a bucket that does
 * not exist or an invalid name — never the known bucket, whose objects must survive.
 */
import { createHash } from 'node:crypto';
import type { Rng } from './rng.js';
import type { FuzzContext } from './context.js';

export type PayloadMode = 'hex' | 'unsigned' | 'streaming-signed' | 'streaming-signed-trailer' | 'streaming-unsigned-trailer' | 'bogus';

export interface Draft {
  method: string;
  /** Undefined: the service (`/`). */
  bucket?: string;
  key?: string;
  query: [string, string][];
  headers: Record<string, string>;
  body?: Buffer;
  /** May change state: must not target the known bucket. */
  writes: boolean;
  payload: PayloadMode;
  /** The handler reads the body (so a changed body must fail its payload hash). */
  readsBody?: boolean;
}

const CHECKSUMS = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256'] as const;
const DIGEST_BYTES = { crc32: 4, crc32c: 4, crc64nvme: 8, sha1: 20, sha256: 32 } as const;

export const WEIRD_KEYS = [
  'a/../b',
  './x',
  '//double//slash',
  'trailing/',
  ' space ',
  'ü€𝄞',
  '\u0000nul',
  '\u0001\u001f',
  'x'.repeat(1024),
  'x'.repeat(1025),
  'é'.repeat(513),
  '%',
  '%25zz',
  '+plus+',
  '?q=1',
  '#hash',
  'a\\b',
  '\r\nx',
  '<Key>&amp;</Key>',
  '..',
  '.',
];

const BOGUS_BUCKETS = ['no-such-bucket-fuzz', 'ab', 'UPPER', 'under_score', '-dash', 'a..b', '192.168.0.1', 'xn--x', 'x'.repeat(64), 'sthree-x'];

/** A bucket for a draft: the play bucket mostly; reads may also hit the known one. */
function bucketFor(ctx: FuzzContext, rng: Rng, writes: boolean): string {
  if (!writes && rng.chance(0.5)) return ctx.knownBucket;
  return rng.chance(0.85) ? ctx.playBucket : rng.pick(BOGUS_BUCKETS);
}

function keyFor(ctx: FuzzContext, rng: Rng, bucket: string): string {
  if (bucket === ctx.knownBucket && rng.chance(0.7)) return rng.pick(ctx.knownKeys);
  if (rng.chance(0.2)) return rng.pick(WEIRD_KEYS);
  return rng.chance(0.5) ? `p/${rng.int(0, 30)}` : rng.pick(ctx.knownKeys);
}

export function b64Digest(rng: Rng, alg: keyof typeof DIGEST_BYTES, body?: Buffer): string {
  if (body && rng.chance(0.3) && (alg === 'sha1' || alg === 'sha256')) return createHash(alg).update(body).digest('base64');
  return rng.pick([
    () => rng.bytes(DIGEST_BYTES[alg]).toString('base64'),
    () => rng.bytes(rng.int(0, 40)).toString('base64'),
    () => rng.nasty(),
  ])();
}

/** SSE-C headers under `prefix`: usually a valid key and MD5, sometimes broken in one way. */
function sseCustomerHeaders(rng: Rng, prefix: string): Record<string, string> {
  const key = rng.chance(0.8) ? rng.bytes(32) : rng.bytes(rng.pick([0, 16, 31, 33]));
  const h: Record<string, string> = {
    [`${prefix}algorithm`]: rng.pick(['AES256', 'AES256', 'AES256', 'AES128', '', rng.nasty()]),
    [`${prefix}key`]: rng.chance(0.9) ? key.toString('base64') : rng.nasty(),
    [`${prefix}key-md5`]: rng.chance(0.8) ? createHash('md5').update(key).digest('base64') : rng.pick(['AAAAAAAAAAAAAAAAAAAAAA==', '', rng.nasty()]),
  };
  // Drop one of the three now and then.
  if (rng.chance(0.2)) delete h[`${prefix}${rng.pick(['algorithm', 'key', 'key-md5'])}`];
  return h;
}

/** Headers a write may carry, with random values. */
export function writeHeaders(rng: Rng, body?: Buffer): Record<string, string> {
  const h: Record<string, string> = {};
  for (let i = rng.int(0, 4); i > 0; i--) {
    rng.pick<() => void>([
      () => (h['content-md5'] = body && rng.chance(0.4) ? createHash('md5').update(body).digest('base64') : rng.pick([rng.bytes(16).toString('base64'), rng.nasty()])),
      () => {
        const alg = rng.pick(CHECKSUMS);
        h[`x-amz-checksum-${alg}`] = b64Digest(rng, alg, body);
      },
      () => (h['x-amz-sdk-checksum-algorithm'] = rng.pick([...CHECKSUMS, 'CRC32', 'md5', '', rng.nasty()])),
      () => (h['x-amz-checksum-algorithm'] = rng.pick([...CHECKSUMS, 'CRC32C', 'bogus'])),
      () => (h['x-amz-checksum-type'] = rng.pick(['COMPOSITE', 'FULL_OBJECT', 'full_object', 'x'])),
      () => (h['x-amz-trailer'] = rng.pick(['x-amz-checksum-crc32', 'x-amz-checksum-bogus', 'content-md5', '', 'x-amz-checksum-crc32,x-amz-checksum-sha1'])),
      () => (h['content-type'] = rng.pick(['text/plain', 'application/xml', '', rng.nasty()])),
      () => {
        for (let k = rng.int(1, 40); k > 0; k--) h[`x-amz-meta-${rng.text(rng.int(1, 12))}`] = rng.chance(0.2) ? 'v'.repeat(rng.int(100, 3000)) : rng.text(rng.int(0, 20));
      },
      () => (h['x-amz-tagging'] = rng.pick(['a=b', 'a=b&a=c', 'aws:x=1', `${'k'.repeat(129)}=v`, 'a=%ZZ', '=', '&&&', rng.nasty(), Array.from({ length: 11 }, (_, i) => `k${i}=v`).join('&')])),
      () => (h['if-none-match'] = rng.pick(['*', '"abc"', '', rng.nasty()])),
      () => (h['if-match'] = rng.pick(['*', '"abc"', '', rng.nasty()])),
      () => (h['cache-control'] = rng.nasty()),
      () => (h['content-encoding'] = rng.pick(['aws-chunked', 'gzip', 'aws-chunked,gzip', ''])),
      () => (h['content-disposition'] = rng.nasty()),
      () => (h['expires'] = rng.pick(['Thu, 01 Jan 1970 00:00:00 GMT', 'garbage', ''])),
      () => (h['x-amz-storage-class'] = rng.pick(['STANDARD', 'GLACIER', 'BOGUS'])),
      () => (h['x-amz-acl'] = rng.pick(['private', 'public-read', 'x'])),
      () => (h['x-amz-server-side-encryption'] = rng.pick(['AES256', 'aws:kms', 'aws:kms:dsse', 'x', ''])),
      () => Object.assign(h, sseCustomerHeaders(rng, rng.chance(0.3) ? 'x-amz-copy-source-server-side-encryption-customer-' : 'x-amz-server-side-encryption-customer-')),
      () => (h[rng.pick(['x-amz-server-side-encryption-aws-kms-key-id', 'x-amz-server-side-encryption-context', 'x-amz-server-side-encryption-bucket-key-enabled'])] = rng.pick(['true', 'k1', '', rng.nasty()])),
      () => (h['x-amz-website-redirect-location'] = rng.nasty()),
      () => (h['x-amz-object-lock-mode'] = 'GOVERNANCE'),
      () => (h['x-amz-decoded-content-length'] = rng.pick(['0', '1', '-1', '1e3', String(2 ** 53), rng.nasty()])),
    ])();
  }
  return h;
}

/** Headers a read may carry. */
export function readHeaders(rng: Rng): Record<string, string> {
  const h: Record<string, string> = {};
  for (let i = rng.int(0, 3); i > 0; i--) {
    rng.pick<() => void>([
      () =>
        (h.range = rng.pick([
          `bytes=${rng.int(0, 2000)}-${rng.int(0, 2000)}`,
          `bytes=${rng.int(0, 800_000)}-`,
          `bytes=-${rng.int(0, 800_000)}`,
          'bytes=0-0',
          'bytes=-0',
          'bytes=0-1,2-3',
          'bytes=abc',
          'items=0-1',
          `bytes=${'9'.repeat(30)}-`,
          rng.nasty(),
        ])),
      () => (h['if-match'] = rng.pick(['*', '"abc"', '', rng.nasty()])),
      () => (h['if-none-match'] = rng.pick(['*', '"abc"', '', rng.nasty()])),
      () => (h['if-modified-since'] = rng.pick(['Thu, 01 Jan 1970 00:00:00 GMT', 'Fri, 01 Jan 2100 00:00:00 GMT', 'garbage', rng.nasty()])),
      () => (h['if-unmodified-since'] = rng.pick(['Thu, 01 Jan 1970 00:00:00 GMT', 'garbage'])),
      () => (h['x-amz-checksum-mode'] = rng.pick(['ENABLED', 'enabled', 'x'])),
      () => Object.assign(h, sseCustomerHeaders(rng, 'x-amz-server-side-encryption-customer-')),
      () => (h['x-amz-server-side-encryption'] = rng.pick(['AES256', 'aws:kms'])),
      () => (h['x-amz-expected-bucket-owner'] = rng.nasty()),
      () => (h['x-amz-request-payer'] = 'requester'),
    ])();
  }
  return h;
}

const LIST_PARAMS = ['prefix', 'delimiter', 'marker', 'max-keys', 'continuation-token', 'start-after', 'encoding-type', 'fetch-owner', 'key-marker', 'upload-id-marker', 'max-uploads', 'max-parts', 'part-number-marker', 'max-buckets', 'list-type', 'x-id'];

export function listQuery(rng: Rng): [string, string][] {
  const q: [string, string][] = [];
  for (let i = rng.int(0, 4); i > 0; i--) {
    const name = rng.pick(LIST_PARAMS);
    const value = rng.pick([
      () => String(rng.int(0, 1100)),
      () => rng.pick(['-1', '2147483648', '99999999999', '1.5', 'abc', '']),
      () => rng.pick(['/', 'p/', '', 'url', 'true', '2', '1', '3']),
      () => rng.bytes(rng.int(1, 60)).toString('base64'),
      () => rng.nasty(),
    ])();
    q.push([name, value]);
  }
  return q;
}

/** A random XML document, sometimes valid for `root`. */
export function xmlBody(rng: Rng, root: string, valid: () => string): Buffer {
  return Buffer.from(
    rng.weighted<() => string>([
      [4, valid],
      [1, () => valid().slice(0, rng.int(0, valid().length))],
      [1, () => valid().replace(root, rng.pick(['Other', 'a:' + root, root.toLowerCase()]))],
      [1, () => `<!DOCTYPE x [<!ENTITY a "${'b'.repeat(100)}">]><${root}>&a;</${root}>`],
      [1, () => `<${root}>${'<a>'.repeat(rng.int(10, 50_000))}</${root}>`],
      [1, () => rng.nasty()],
      [1, () => `<?xml version="1.0" encoding="${rng.pick(['UTF-16', 'latin1', 'x'])}"?><${root}/>`],
      [1, () => `<${root}>${rng.bytes(rng.int(1, 400)).toString('latin1')}</${root}>`],
      [1, () => `<${root}><![CDATA[${rng.nasty()}]]></${root}>`],
    ])(),
    rng.chance(0.1) ? 'latin1' : 'utf8'
  );
}

/** A CompleteMultipartUpload document; with `realEtag` (part 1's) it can succeed. */
function completeXml(rng: Rng, realEtag?: string): string {
  let parts = '';
  const n = realEtag && rng.chance(0.5) ? 1 : rng.pick([0, 1, 2, 3, 10_001, rng.int(1, 50)]);
  let pn = 0;
  for (let i = 0; i < n; i++) {
    pn += rng.chance(0.9) ? 1 : rng.int(-1, 3);
    const etag =
      realEtag && pn === 1 && rng.chance(0.7)
        ? rng.pick([realEtag, realEtag.replace(/"/g, ''), realEtag.toUpperCase(), `&quot;${realEtag.replace(/"/g, '')}&quot;`])
        : rng.pick([`"${rng.bytes(16).toString('hex')}"`, rng.bytes(16).toString('hex'), '', rng.nasty()]);
    const ck = rng.chance(0.2) ? `<ChecksumCRC32>${rng.bytes(4).toString('base64')}</ChecksumCRC32>` : '';
    parts += `<Part><PartNumber>${rng.chance(0.95) ? pn : rng.nasty()}</PartNumber><ETag>${etag}</ETag>${ck}</Part>`;
  }
  return `<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${parts}</CompleteMultipartUpload>`;
}

function deleteXml(ctx: FuzzContext, rng: Rng): string {
  let objects = '';
  for (let i = rng.pick([0, 1, 3, 1001, rng.int(1, 20)]); i > 0; i--) {
    objects += `<Object><Key>${rng.chance(0.7) ? `p/${rng.int(0, 30)}` : rng.pick([...ctx.knownKeys, '', '&#0;', '&#1;x'])}</Key>${rng.chance(0.1) ? '<VersionId>v</VersionId>' : ''}</Object>`;
  }
  return `<Delete>${rng.chance(0.3) ? `<Quiet>${rng.pick(['true', 'false', 'x'])}</Quiet>` : ''}${objects}</Delete>`;
}

function corsXml(rng: Rng): string {
  let rules = '';
  for (let i = rng.pick([0, 1, 2, 101]); i > 0; i--) {
    rules += `<CORSRule><AllowedMethod>${rng.pick(['GET', 'PUT', 'PATCH', ''])}</AllowedMethod><AllowedOrigin>${rng.pick(['*', 'http://a.example', 'http://*.x', ''])}</AllowedOrigin>${rng.chance(0.5) ? `<AllowedHeader>${rng.pick(['*', 'x-amz-*', rng.nasty()])}</AllowedHeader>` : ''}${rng.chance(0.3) ? `<MaxAgeSeconds>${rng.pick(['10', '-1', 'x', '99999999999'])}</MaxAgeSeconds>` : ''}${rng.chance(0.4) ? `<ExposeHeader>${rng.pick(['etag', 'x-amz-meta-a', '&#10;', '&#13;&#10;x: y', 'ü€', '&#1;', rng.nasty()])}</ExposeHeader>` : ''}${rng.chance(0.2) ? `<ID>${rng.nasty()}</ID>` : ''}</CORSRule>`;
  }
  return `<CORSConfiguration>${rules}</CORSConfiguration>`;
}

function taggingXml(rng: Rng): string {
  let tags = '';
  for (let i = rng.pick([0, 1, 2, 11, 51]); i > 0; i--) {
    tags += `<Tag><Key>${rng.pick([`k${i}`, 'k1', '', 'aws:x', 'k'.repeat(129)])}</Key><Value>${rng.pick(['v', '', 'v'.repeat(257)])}</Value></Tag>`;
  }
  return `<Tagging><TagSet>${tags}</TagSet></Tagging>`;
}

/** One draft from a random operation family. */
export function draftOp(ctx: FuzzContext, rng: Rng): { family: string; draft: Draft } {
  const body = () => rng.bytes(rng.weighted([[20, () => rng.size(8 * 1024)], [3, () => rng.int(500_000, 700_000)], [1, () => rng.size(3 * 1024 * 1024)]] as const)());
  const families: [number, string, () => Draft][] = [
    [2, 'ListBuckets', () => ({ method: 'GET', query: listQuery(rng), headers: {}, writes: false, payload: 'hex' })],
    [6, 'ListObjects', () => ({ method: 'GET', bucket: bucketFor(ctx, rng, false), query: listQuery(rng), headers: {}, writes: false, payload: 'hex' })],
    [2, 'ListMultipartUploads', () => ({ method: 'GET', bucket: bucketFor(ctx, rng, false), query: [['uploads', ''], ...listQuery(rng)], headers: {}, writes: false, payload: 'hex' })],
    [
      3,
      'BucketReads',
      () => ({
        method: rng.pick(['GET', 'HEAD']),
        bucket: bucketFor(ctx, rng, false),
        query: rng.pick<[string, string][]>([[], [['location', '']], [['cors', '']], [['tagging', '']], [['versioning', '']], [['policy', '']], [['acl', '']], [['lifecycle', '']]]),
        headers: {},
        writes: false,
        payload: 'hex',
      }),
    ],
    [
      10,
      'GetObject',
      () => {
        const bucket = bucketFor(ctx, rng, false);
        const q: [string, string][] = [];
        if (rng.chance(0.2)) q.push(['partNumber', rng.pick(['1', '2', '0', '10001', 'x'])]);
        if (rng.chance(0.3)) q.push([rng.pick(['response-content-type', 'response-content-disposition', 'response-cache-control', 'response-expires', 'response-content-language', 'response-content-encoding']), rng.nasty()]);
        if (rng.chance(0.1)) q.push(['versionId', rng.pick(['null', 'v1', ''])]);
        if (rng.chance(0.1)) q.push([rng.pick(['acl', 'torrent', 'attributes', 'tagging', 'retention']), '']);
        return { method: rng.pick(['GET', 'GET', 'HEAD']), bucket, key: keyFor(ctx, rng, bucket), query: q, headers: readHeaders(rng), writes: false, payload: 'hex' };
      },
    ],
    [
      10,
      'PutObject',
      () => {
        const b = body();
        return { method: 'PUT', bucket: bucketFor(ctx, rng, true), key: keyFor(ctx, rng, ctx.playBucket), query: [], headers: writeHeaders(rng, b), body: b, writes: true, payload: 'hex', readsBody: true };
      },
    ],
    [
      3,
      'CopyObject',
      () => {
        const src = rng.pick([
          () => `/${ctx.knownBucket}/${encodeURIComponent(rng.pick(ctx.knownKeys))}`,
          () => `${ctx.knownBucket}/${rng.pick(ctx.knownKeys)}`,
          () => `${ctx.playBucket}/p/${rng.int(0, 30)}`,
          () => `${ctx.knownBucket}/${rng.pick(ctx.knownKeys)}?versionId=${rng.pick(['null', 'x'])}`,
          () => rng.pick(['', '/', 'bucket', '/b/', 'arn:aws:s3:::x/y', '%zz/%zz', `no-such-bucket-fuzz/x`, `${ctx.knownBucket}/${'k'.repeat(1100)}`]),
          () => rng.nasty(),
        ])();
        const h: Record<string, string> = { 'x-amz-copy-source': src, ...(rng.chance(0.3) ? writeHeaders(rng) : {}) };
        if (rng.chance(0.3)) h['x-amz-metadata-directive'] = rng.pick(['COPY', 'REPLACE', 'x']);
        if (rng.chance(0.2)) h['x-amz-tagging-directive'] = rng.pick(['COPY', 'REPLACE', 'x']);
        if (rng.chance(0.2)) h[rng.pick(['x-amz-copy-source-if-match', 'x-amz-copy-source-if-none-match', 'x-amz-copy-source-if-modified-since'])] = rng.nasty();
        if (rng.chance(0.2)) h['x-amz-copy-source-range'] = rng.pick(['bytes=0-10', 'bytes=5-1', 'bytes=0-99999999', 'garbage']);
        return { method: 'PUT', bucket: bucketFor(ctx, rng, true), key: keyFor(ctx, rng, ctx.playBucket), query: [], headers: h, writes: true, payload: 'hex' };
      },
    ],
    [3, 'DeleteObject', () => ({ method: 'DELETE', bucket: bucketFor(ctx, rng, true), key: keyFor(ctx, rng, ctx.playBucket), query: [], headers: rng.chance(0.2) ? { 'if-match': rng.nasty() } : {}, writes: true, payload: 'hex' })],
    [
      3,
      'DeleteObjects',
      () => {
        const b = xmlBody(rng, 'Delete', () => deleteXml(ctx, rng));
        const h: Record<string, string> = {};
        if (rng.chance(0.7)) h['content-md5'] = rng.chance(0.8) ? createHash('md5').update(b).digest('base64') : rng.nasty();
        else if (rng.chance(0.5)) h['x-amz-checksum-sha256'] = rng.chance(0.7) ? createHash('sha256').update(b).digest('base64') : rng.nasty();
        return { method: 'POST', bucket: bucketFor(ctx, rng, true), query: [['delete', '']], headers: h, body: b, writes: true, payload: 'hex', readsBody: true };
      },
    ],
    [
      6,
      'Multipart',
      () => {
        const bucket = bucketFor(ctx, rng, true);
        const up = ctx.uploads.length && rng.chance(0.7) ? rng.pick(ctx.uploads) : undefined;
        const key = up && rng.chance(0.8) ? up.key : keyFor(ctx, rng, ctx.playBucket);
        const uploadId = up && rng.chance(0.8) ? up.uploadId : rng.pick(['', 'bogus', rng.bytes(20).toString('base64'), rng.nasty()]);
        return rng.pick<() => Draft>([
          () => ({ method: 'POST', bucket, key, query: [['uploads', '']], headers: writeHeaders(rng), writes: true, payload: 'hex' }),
          () => {
            const b = body();
            return { method: 'PUT', bucket, key, query: [['partNumber', rng.pick(['1', '2', '3', '0', '10000', '10001', 'x', ''])], ['uploadId', uploadId]], headers: writeHeaders(rng, b), body: b, writes: true, payload: 'hex', readsBody: true };
          },
          () => ({
            method: 'PUT',
            bucket,
            key,
            query: [['partNumber', rng.pick(['1', '2', '0'])], ['uploadId', uploadId]],
            headers: {
              'x-amz-copy-source': rng.pick([`${ctx.knownBucket}/${rng.pick(ctx.knownKeys)}`, 'garbage', `${ctx.playBucket}/p/1`]),
              ...(rng.chance(0.6) ? { 'x-amz-copy-source-range': rng.pick(['bytes=0-10', 'bytes=0-0', 'bytes=10-5', 'bytes=0-99999999', 'bytes=abc', `bytes=${rng.int(0, 800_000)}-${rng.int(0, 800_000)}`]) } : {}),
            },
            writes: true,
            payload: 'hex',
          }),
          () => ({ method: 'POST', bucket, key, query: [['uploadId', uploadId]], headers: rng.chance(0.3) ? writeHeaders(rng) : {}, body: xmlBody(rng, 'CompleteMultipartUpload', () => completeXml(rng, up && uploadId === up.uploadId ? up.etag : undefined)), writes: true, payload: 'hex', readsBody: true }),
          () => ({ method: 'DELETE', bucket, key, query: [['uploadId', uploadId]], headers: {}, writes: true, payload: 'hex' }),
          () => ({ method: 'GET', bucket: rng.chance(0.7) ? bucket : ctx.knownBucket, key, query: [['uploadId', uploadId], ...listQuery(rng)], headers: {}, writes: false, payload: 'hex' }),
        ])();
      },
    ],
    [
      4,
      'Tagging',
      () => {
        const write = rng.chance(0.6);
        const bucket = bucketFor(ctx, rng, write);
        const method = write ? rng.pick(['PUT', 'PUT', 'DELETE']) : 'GET';
        const b = method === 'PUT' ? xmlBody(rng, 'Tagging', () => taggingXml(rng)) : undefined;
        return { method, bucket, key: keyFor(ctx, rng, bucket), query: [['tagging', '']], headers: {}, ...(b ? { body: b } : {}), writes: write, payload: 'hex', readsBody: method === 'PUT' };
      },
    ],
    [
      3,
      'Cors',
      () => {
        const write = rng.chance(0.6);
        const method = write ? rng.pick(['PUT', 'PUT', 'DELETE']) : 'GET';
        const b = method === 'PUT' ? xmlBody(rng, 'CORSConfiguration', () => corsXml(rng)) : undefined;
        return { method, bucket: bucketFor(ctx, rng, write), query: [['cors', '']], headers: {}, ...(b ? { body: b } : {}), writes: write, payload: 'hex', readsBody: method === 'PUT' };
      },
    ],
    [
      2,
      'CreateBucket',
      () => {
        const name = rng.pick([ctx.playBucket, `fuzz-new-${rng.int(0, 5)}`, ...BOGUS_BUCKETS]);
        const b = rng.chance(0.5) ? xmlBody(rng, 'CreateBucketConfiguration', () => `<CreateBucketConfiguration><LocationConstraint>${rng.pick(['us-east-1', 'eu-west-1', '', rng.nasty()])}</LocationConstraint></CreateBucketConfiguration>`) : undefined;
        return { method: 'PUT', bucket: name, query: [], headers: rng.chance(0.2) ? { 'x-amz-acl': 'private', 'x-amz-bucket-object-lock-enabled': 'true' } : {}, ...(b ? { body: b } : {}), writes: true, payload: 'hex', readsBody: true };
      },
    ],
    [1, 'DeleteBucket', () => ({ method: 'DELETE', bucket: rng.pick([`fuzz-new-${rng.int(0, 5)}`, ...BOGUS_BUCKETS]), query: [], headers: {}, writes: true, payload: 'hex' })],
    [
      2,
      'Unsupported',
      () => {
        const write = rng.chance(0.5);
        const bucket = bucketFor(ctx, rng, write);
        const sub = rng.pick(['versioning', 'policy', 'lifecycle', 'acl', 'website', 'replication', 'notification', 'encryption', 'object-lock', 'retention', 'legal-hold', 'restore', 'select', 'torrent', 'attributes']);
        return {
          method: write ? rng.pick(['PUT', 'POST', 'DELETE']) : 'GET',
          bucket,
          ...(rng.chance(0.5) ? { key: keyFor(ctx, rng, bucket) } : {}),
          query: [[sub, ''], ...(sub === 'select' ? ([['select-type', '2']] as [string, string][]) : [])],
          headers: {},
          ...(write ? { body: Buffer.from('<x/>') } : {}),
          writes: write,
          payload: 'hex',
        };
      },
    ],
    [1, 'PostObject', () => ({ method: 'POST', bucket: bucketFor(ctx, rng, true), query: [], headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: Buffer.from('--x\r\n\r\n--x--'), writes: true, payload: 'hex' })],
    [
      2,
      'OddMethod',
      () => {
        const bucket = bucketFor(ctx, rng, true);
        return { method: rng.pick(['PATCH', 'PROPFIND', 'TRACE', 'MKCOL', 'COPY', 'LOCK']), bucket, ...(rng.chance(0.5) ? { key: keyFor(ctx, rng, bucket) } : {}), query: [], headers: {}, writes: true, payload: 'hex' };
      },
    ],
  ];
  const [, family, make] = rng.weighted(families.map(([w, name, f]) => [w, [w, name, f] as const] as const));
  return { family, draft: make() };
}
