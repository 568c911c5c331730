/**
 * @module POST Object: a browser form upload to `POST /bucket` (multipart/form-data).
 *
 *   fields up to the `file` part (bounded, charged to the pending budget)
 *   -> the form's signature (SigV4 / SigV2 fields, or anonymous) and its policy
 *      (expiration, conditions, every field accounted for)
 *   -> key (`${filename}` expanded) -> authorizeEndpoint(PutObject, signer)
 *   -> the file streamed through putFromHeaders (the PutObject write path) with the
 *      policy's content-length-range -> success_action_redirect (303) or
 *      success_action_status 200 / 201 (PostResponse XML) / 204.
 *
 * app.ts does not authenticate these requests (they carry no Authorization header): this
 * handler authenticates the form's signer itself. Fields after the file are ignored, as S3
 * ignores them. https://docs.aws.amazon.com/AmazonS3/latest/API/RESTObjectPOST.html
 */
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { S3Error } from '../errors.js';
import { authorizeEndpoint } from '../authorize.js';
import { checksumHeaders, counted, type MaybeSizedBody } from '../body.js';
import { putFromHeaders, type WriteBounds } from '../ops/objects.js';
import { encryptionHeaders } from '../sse.js';
import { sendEmpty, sendXml } from '../respond.js';
import { validateKey } from '../router/key.js';
import { bucketFromHost } from '../router/virtual-host.js';
import { el, leaf, quoteEtag, xmlDocument } from '../xml/index.js';
import { FormDataReader, formBoundary, type FormLimits, type PartHead } from './form-data.js';
import { checkPolicy, contentLengthRange, parsePolicy } from './policy.js';
import { verifyFormSignature, type FormSigner } from './signature.js';
import { headersFromFields } from './fields.js';
import type { ChecksumName } from '../../store/records.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

/**
 * Limits on what precedes the file. 64 KiB of fields holds any real form (a policy with
 * dozens of conditions is a few KiB); each field at most 20 KiB (the policy is the largest);
 * 100 fields; 8 KiB of headers per part. This is all a POST holds in memory besides the
 * file's current piece, and it is charged to the pending budget up front.
 */
export const FORM_LIMITS: FormLimits = { maxParts: 100, maxPreDataBytes: 64 * 1024, maxHeaderBytes: 8 * 1024 };
export const MAX_FIELD_BYTES = 20 * 1024;
/** Bytes after the file (ignored fields, epilogue) read before giving up on the connection. */
const MAX_TRAILING_BYTES = 64 * 1024;

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A field's bytes as text: UTF-8 when valid (browsers send UTF-8), else one char per byte. */
function fieldText(bytes: Buffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

/** The name part of a file name as browsers may send it (old ones send a whole path). */
const baseName = (filename: string) => filename.slice(Math.max(filename.lastIndexOf('/'), filename.lastIndexOf('\\')) + 1);

/** Reads the fields before the file part; returns them (lower-case names) and the file's headers. */
async function readFields(form: FormDataReader): Promise<{ fields: Map<string, string>; file: PartHead }> {
  const fields = new Map<string, string>();
  for (;;) {
    const part = await form.next();
    if (!part) throw new S3Error('IncorrectNumberOfFilesInPostRequest');
    const name = part.name.toLowerCase();
    if (name === 'file') return { fields, file: part };
    if (fields.has(name)) {
      throw new S3Error('InvalidArgument', `POST form field "${part.name}" appears more than once.`, { ArgumentName: part.name, ArgumentValue: '' });
    }
    fields.set(name, fieldText(await form.fieldValue(MAX_FIELD_BYTES)));
  }
}

/** The object key: the `key` field with `${filename}` replaced by the file's name. */
function objectKey(fields: ReadonlyMap<string, string>, file: PartHead): string {
  const template = fields.get('key');
  if (template === undefined) {
    throw new S3Error('InvalidArgument', "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.", {
      ArgumentName: 'key',
      ArgumentValue: '',
    });
  }
  const key = template.split('${filename}').join(baseName(file.filename ?? ''));
  if (key === '') throw new S3Error('InvalidArgument', 'User key must have a length greater than 0.', { ArgumentName: 'key', ArgumentValue: '' });
  validateKey(key);
  return key;
}

/** The policy's checks (when signed) and the file's size bounds. Throws AccessDenied / InvalidPolicyDocument. */
function applyPolicy(signer: FormSigner, fields: ReadonlyMap<string, string>, bucket: string, key: string): WriteBounds {
  if (signer.kind === 'anonymous') return {};
  const policy = parsePolicy(signer.policy);
  const seen = new Map(fields);
  seen.set('bucket', bucket); // the bucket is the URL's, whatever a `bucket` field says
  seen.set('key', key);
  checkPolicy(policy, seen, new Date());
  const range = contentLengthRange(policy);
  return range ? { minBytes: range.min, maxBytes: range.max } : {};
}

/** The object's URL (path- or virtual-hosted-style, as the request was), for Location and 201. */
function objectUrl(r: RequestContext, bucket: string, key: string): string {
  const tls = (r.incoming.socket as { encrypted?: boolean } | null)?.encrypted === true;
  const host = r.headers.host ?? 'localhost';
  const path = key.split('/').map(encodeURIComponent).join('/');
  const vhost = bucketFromHost(host, r.deps.baseDomain) !== undefined;
  return `${tls ? 'https' : 'http'}://${host}/${vhost ? '' : `${encodeURIComponent(bucket)}/`}${path}`;
}

/** `success_action_redirect` (or the older `redirect`) when it is an http(s) URL. */
function redirectTarget(fields: ReadonlyMap<string, string>): URL | undefined {
  const raw = fields.get('success_action_redirect') ?? fields.get('redirect');
  if (!raw) return undefined;
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u : undefined;
  } catch {
    return undefined; // S3 ignores an unusable redirect and answers with the status
  }
}

function respond(r: RequestContext, fields: ReadonlyMap<string, string>, bucket: string, key: string, etag: string, extra: Record<string, string>): void {
  const location = objectUrl(r, bucket, key);
  const headers = { etag: quoteEtag(etag), location, ...extra };
  const redirect = redirectTarget(fields);
  if (redirect) {
    const q = `bucket=${encodeURIComponent(bucket)}&key=${encodeURIComponent(key)}&etag=${encodeURIComponent(quoteEtag(etag))}`;
    const href = redirect.href.replace(/#.*$/, '');
    sendEmpty(r, 303, { ...headers, location: href + (redirect.search ? '&' : '?') + q });
    return;
  }
  const status = fields.get('success_action_status');
  if (status === '201') {
    const xml = xmlDocument(el('PostResponse', leaf('Location', location), leaf('Bucket', bucket), leaf('Key', key), leaf('ETag', quoteEtag(etag))));
    sendXml(r, 201, xml, headers);
    return;
  }
  sendEmpty(r, status === '200' ? 200 : 204, headers);
}

export async function handlePostObject(r: RequestContext, e: Op<'PostObject'>): Promise<void> {
  const boundary = formBoundary(r.headers['content-type']);
  if (boundary === undefined) {
    throw new S3Error('PreconditionFailed', undefined, { Condition: 'Bucket POST must be of the enclosure-type multipart/form-data' });
  }
  // What the fields may hold is charged before a byte of them is read.
  const release = r.budget.reserve(FORM_LIMITS.maxPreDataBytes);
  const form = new FormDataReader(counted(r), boundary, FORM_LIMITS);
  try {
    const { fields, file } = await readFields(form);
    const signer = verifyFormSignature(fields, (id) => r.deps.secrets.get(id), r.deps.region);
    if (signer.kind === 'signed') {
      r.auth = { accessKeyId: signer.accessKeyId, region: r.deps.region ?? 'us-east-1', signatureVersion: signer.signatureVersion, form: 'post-form', payload: { mode: 'unsigned' } };
      // From here the upload counts against its signer's share, no longer the anonymous one.
      r.enterKeyShare(signer.accessKeyId);
    }
    const key = objectKey(fields, file);
    r.key = key;
    const bounds = applyPolicy(signer, fields, e.bucket, key);
    const h = headersFromFields(fields);
    // Authorized as a PutObject of the signer, with the form's fields standing for the
    // headers (its acl, tagging, conditions: what bucket policies and Block Public Access read).
    await authorizeEndpoint(r, { op: 'PutObject', bucket: e.bucket, key }, signer.kind === 'signed' ? signer.accessKeyId : null, { headers: h });
    const { checksums, checksumAlgorithm } = checksumHeaders(h);
    const body: MaybeSizedBody = { body: form.fileBody(), claims: { checksums } };
    // The object's checksum algorithm: the one announced, else the one claimed.
    const alg = checksumAlgorithm ?? (Object.keys(checksums)[0] as ChecksumName | undefined);
    if (alg) body.checksumAlgorithm = alg;
    const { result, enc } = await putFromHeaders(r, e.bucket, key, h, body, bounds);
    const ended = await form.discardRest(MAX_TRAILING_BYTES);
    const extra = { ...encryptionHeaders(result.version.encryption?.mode, enc.customer), ...(ended ? {} : { connection: 'close' }) };
    respond(r, fields, e.bucket, key, result.etag, extra);
  } catch (err) {
    await form.cancel().catch(() => undefined);
    throw err;
  } finally {
    release();
  }
}
