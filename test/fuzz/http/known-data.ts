/**
 * @module The data the fuzzer must not disturb: objects stored before the first malformed
 * request (packed and carrier bodies, an empty one, a multipart one, odd keys, metadata and
 * tags), and the check at the end that every one reads back byte-exact with the same ETag,
 * Content-Type, metadata and tags, that the known bucket lists exactly them, and that no
 * bucket exists that the fuzzer was not allowed to create.
 */
import { createHash } from 'node:crypto';
import { request, type Dispatcher } from 'undici';
import { signV4 } from '../../integration/wire.js';
import type { FuzzContext } from './context.js';
import type { Rng } from './rng.js';

export interface KnownObject {
  key: string;
  body: Buffer;
  etag: string;
  contentType: string;
  meta: Record<string, string>;
  tags: Record<string, string>;
}

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Attempts of a setup/verification request refused with 503 SlowDown (the fuzz run keeps the budget small). */
const SLOWDOWN_ATTEMPTS = 50;

/** A signed request with the fuzz credentials (for setup and verification only); retries SlowDown. */
export async function s3(
  url: string,
  ctx: FuzzContext,
  dispatcher: Dispatcher,
  o: { method: string; path: string; query?: [string, string][]; headers?: Record<string, string>; body?: Buffer }
): Promise<Reply> {
  for (let attempt = 1; ; attempt++) {
    const s = signV4({ ...o, host: ctx.host, credentials: ctx.credentials, region: ctx.region });
    const res = await request(`${url}${s.target}`, { method: s.method, headers: s.headers, dispatcher, ...(o.body ? { body: o.body } : {}) });
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(',') : String(v);
    const reply = { status: res.statusCode, headers, body: Buffer.from(await res.body.arrayBuffer()) };
    if (reply.status !== 503 || attempt >= SLOWDOWN_ATTEMPTS) return reply;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function expectOk(r: Reply, what: string): Reply {
  if (r.status >= 300) throw new Error(`setup: ${what} answered ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`);
  return r;
}

const xmlValues = (xml: string, tag: string) => [...xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, 'g'))].map((m) => m[1]!);

/** Creates both buckets, the known objects and a few open uploads in the play bucket. */
export async function seedKnownData(url: string, ctx: FuzzContext, dispatcher: Dispatcher, rng: Rng, quick: boolean): Promise<KnownObject[]> {
  for (const b of [ctx.knownBucket, ctx.playBucket]) expectOk(await s3(url, ctx, dispatcher, { method: 'PUT', path: `/${b}` }), `CreateBucket ${b}`);
  const sizes = [0, 1, 1000, 64 * 1024, 300 * 1024, 600 * 1024, quick ? 1024 * 1024 : 3 * 1024 * 1024];
  const keys = ['empty', 'one', 'small', 'dir/packed-64k', 'dir/packed-300k', 'carrier 600k', 'ü/carrier+big'];
  const known: KnownObject[] = [];
  for (let i = 0; i < sizes.length; i++) {
    const body = rng.bytes(sizes[i]!);
    const meta = { colour: `c${i}`, note: rng.text(10) };
    const o: KnownObject = { key: keys[i]!, body, etag: '', contentType: `application/x-fuzz-${i}`, meta, tags: { t: String(i) } };
    const r = expectOk(
      await s3(url, ctx, dispatcher, {
        method: 'PUT',
        path: `/${ctx.knownBucket}/${o.key}`,
        body,
        headers: { 'content-type': o.contentType, 'x-amz-meta-colour': meta.colour, 'x-amz-meta-note': meta.note, 'x-amz-tagging': `t=${i}` },
      }),
      `PutObject ${o.key}`
    );
    o.etag = r.headers.etag!;
    known.push(o);
  }
  // A multipart object: 5 MiB + 1 KiB.
  const key = 'multipart/object';
  const init = expectOk(await s3(url, ctx, dispatcher, { method: 'POST', path: `/${ctx.knownBucket}/${key}`, query: [['uploads', '']], headers: { 'content-type': 'application/x-mpu' } }), 'CreateMultipartUpload');
  const uploadId = xmlValues(init.body.toString('utf8'), 'UploadId')[0]!;
  const parts = [rng.bytes(5 * 1024 * 1024), rng.bytes(1024)];
  const etags: string[] = [];
  for (let n = 0; n < parts.length; n++) {
    const r = expectOk(await s3(url, ctx, dispatcher, { method: 'PUT', path: `/${ctx.knownBucket}/${key}`, query: [['partNumber', String(n + 1)], ['uploadId', uploadId]], body: parts[n]! }), 'UploadPart');
    etags.push(r.headers.etag!);
  }
  const xml = `<CompleteMultipartUpload>${etags.map((e, n) => `<Part><PartNumber>${n + 1}</PartNumber><ETag>${e}</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
  const done = expectOk(await s3(url, ctx, dispatcher, { method: 'POST', path: `/${ctx.knownBucket}/${key}`, query: [['uploadId', uploadId]], body: Buffer.from(xml) }), 'CompleteMultipartUpload');
  known.push({ key, body: Buffer.concat(parts), etag: `"${xmlValues(done.body.toString('utf8'), 'ETag')[0]!.replace(/&quot;|"/g, '')}"`, contentType: 'application/x-mpu', meta: {}, tags: {} });
  await openUploads(url, ctx, dispatcher, rng, 0);
  ctx.knownKeys.push(...known.map((o) => o.key));
  return known;
}

/**
 * Replaces `ctx.uploads` with three new uploads in the play bucket (keys `mpu/<generation>/<i>`),
 * each with a 1000-byte part 1, for UploadPart / Complete / Abort / ListParts to find.
 */
export async function openUploads(url: string, ctx: FuzzContext, dispatcher: Dispatcher, rng: Rng, generation: number): Promise<void> {
  const uploads: FuzzContext['uploads'] = [];
  for (let i = 0; i < 3; i++) {
    const k = `mpu/${generation}/${i}`;
    const r = expectOk(await s3(url, ctx, dispatcher, { method: 'POST', path: `/${ctx.playBucket}/${k}`, query: [['uploads', '']] }), 'CreateMultipartUpload');
    const id = xmlValues(r.body.toString('utf8'), 'UploadId')[0]!;
    const part = expectOk(await s3(url, ctx, dispatcher, { method: 'PUT', path: `/${ctx.playBucket}/${k}`, query: [['partNumber', '1'], ['uploadId', id]], body: rng.bytes(1000) }), 'UploadPart');
    uploads.push({ key: k, uploadId: id, etag: part.headers.etag! });
  }
  ctx.uploads = uploads;
}

/**
 * Everything that differs from what was stored: byte-exact bodies, ETags, Content-Type,
 * metadata, tags; the known bucket's listing (paged) and uploads; the buckets that exist.
 */
export async function checkKnownData(url: string, ctx: FuzzContext, dispatcher: Dispatcher, known: KnownObject[], allowedBuckets: ReadonlySet<string>): Promise<string[]> {
  const problems: string[] = [];
  for (const o of known) {
    const r = await s3(url, ctx, dispatcher, { method: 'GET', path: `/${ctx.knownBucket}/${o.key}` });
    if (r.status !== 200) {
      problems.push(`${o.key}: GET answered ${r.status}`);
      continue;
    }
    if (!r.body.equals(o.body)) problems.push(`${o.key}: body differs (${r.body.length} bytes, sha256 ${createHash('sha256').update(r.body).digest('hex').slice(0, 16)}…, want ${o.body.length})`);
    if (r.headers.etag !== o.etag) problems.push(`${o.key}: ETag ${r.headers.etag}, want ${o.etag}`);
    if (r.headers['content-type'] !== o.contentType) problems.push(`${o.key}: Content-Type ${r.headers['content-type']}, want ${o.contentType}`);
    for (const [k, v] of Object.entries(o.meta)) if (r.headers[`x-amz-meta-${k}`] !== v) problems.push(`${o.key}: x-amz-meta-${k} ${r.headers[`x-amz-meta-${k}`]}, want ${v}`);
    const extraMeta = Object.keys(r.headers).filter((h) => h.startsWith('x-amz-meta-') && !(h.slice(11) in o.meta));
    if (extraMeta.length) problems.push(`${o.key}: unexpected metadata ${extraMeta.join(', ')}`);
    const t = await s3(url, ctx, dispatcher, { method: 'GET', path: `/${ctx.knownBucket}/${o.key}`, query: [['tagging', '']] });
    const text = t.body.toString('utf8');
    const tags = Object.fromEntries(xmlValues(text, 'Key').map((k, i) => [k, xmlValues(text, 'Value')[i]!]));
    if (JSON.stringify(tags) !== JSON.stringify(o.tags)) problems.push(`${o.key}: tags ${JSON.stringify(tags)}, want ${JSON.stringify(o.tags)}`);
  }
  // The listing, two keys per page (exercises continuation tokens too).
  const listed: string[] = [];
  let token: string | undefined;
  for (let page = 0; page < 100; page++) {
    const q: [string, string][] = [['list-type', '2'], ['max-keys', '2']];
    if (token) q.push(['continuation-token', token]);
    const r = await s3(url, ctx, dispatcher, { method: 'GET', path: `/${ctx.knownBucket}`, query: q });
    const text = r.body.toString('utf8');
    listed.push(...xmlValues(text, 'Key'));
    token = xmlValues(text, 'NextContinuationToken')[0];
    if (!token) break;
  }
  const want = known.map((o) => o.key).sort();
  if (JSON.stringify(listed) !== JSON.stringify(want)) problems.push(`listing of ${ctx.knownBucket}: ${JSON.stringify(listed)}, want ${JSON.stringify(want)}`);
  const uploads = await s3(url, ctx, dispatcher, { method: 'GET', path: `/${ctx.knownBucket}`, query: [['uploads', '']] });
  const open = xmlValues(uploads.body.toString('utf8'), 'UploadId');
  if (open.length) problems.push(`${ctx.knownBucket} has ${open.length} open multipart uploads`);
  const cors = await s3(url, ctx, dispatcher, { method: 'GET', path: `/${ctx.knownBucket}`, query: [['cors', '']] });
  if (cors.status !== 404) problems.push(`${ctx.knownBucket} has a CORS configuration (GetBucketCors ${cors.status})`);
  const buckets = xmlValues((await s3(url, ctx, dispatcher, { method: 'GET', path: '/' })).body.toString('utf8'), 'Name');
  const unexpected = buckets.filter((b) => !allowedBuckets.has(b));
  if (unexpected.length) problems.push(`unexpected buckets: ${unexpected.join(', ')}`);
  if (!buckets.includes(ctx.knownBucket)) problems.push(`${ctx.knownBucket} is gone`);
  return problems;
}
