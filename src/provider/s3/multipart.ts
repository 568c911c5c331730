/**
 * @module Writing one blob by S3 multipart upload: create, upload parts one at a time,
 * complete; abort on any failure.
 *
 * Used by the s3 provider for bodies a single PUT cannot carry: streams of unknown length
 * over one part (S3 needs a Content-Length up front, and buffering a whole body would be
 * unbounded) and sized bodies over S3's 5 GiB single-PUT limit. Parts are read through a
 * PartReader; the next part is read while the previous one uploads (a compaction's merge
 * goes on while its output travels to the backend), so at most two parts are held in
 * memory and one part request is in flight. Each part is sent with its Content-MD5, so the
 * server refuses a part that arrived damaged.
 *
 * Which blobs may take this path: only blobs written under names nobody else writes —
 * runs, carrier chunks, roots, commit blobs and packs all carry a fresh unique id. It is
 * never used for a replace (`ifMatch`: the anchor), which the caller refuses. A create
 * (`ifNoneMatch: '*'`) is checked with a HEAD before the upload starts and sent as
 * `If-None-Match: *` on CompleteMultipartUpload, which AWS S3 and Strata enforce but Ceph
 * RGW 16.2 ignores: on RGW a multipart create is NOT atomic against a concurrent creator
 * of the same key, which is harmless only because those keys are unique.
 */
import { createHash } from 'node:crypto';
import { ProviderError, type BlobInfo } from '../provider.js';
import { sha256Hex, UNSIGNED_PAYLOAD } from '../../sigv4/index.js';
import { header, readText, type S3Client, type S3Response } from './client.js';
import { errorFromResponse } from './errors.js';
import { unquoteEtag } from './list.js';
import { PartReader } from './parts.js';
import { infoFromHeaders, contentLength } from './response.js';
import { child, childText, parseXml } from './xml.js';

/** S3's most parts in one upload. */
export const MAX_PARTS = 10_000;
/** S3's smallest part (all parts but the last), bytes. */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
/** Largest answer read from Create/Complete (a few hundred bytes in practice). */
const ANSWER_MAX_BYTES = 64 * 1024;

export interface MultipartTarget {
  client: S3Client;
  /** Decoded `/bucket/key` path of the blob. */
  path: string;
  /** The blob key as the caller named it (for messages and BlobInfo). */
  key: string;
}

export interface MultipartOptions {
  /** Refuse if the key exists (see the module doc for how far that holds). */
  ifNoneMatch?: '*';
  /** Exact total length, when known (checked by the caller's chunk source). */
  contentLength?: number;
  signal?: AbortSignal;
}

async function answerXml(res: S3Response, what: string) {
  const text = await readText(res.body, ANSWER_MAX_BYTES, what);
  return parseXml(text);
}

function md5Base64(chunks: readonly Uint8Array[]): string {
  const h = createHash('md5');
  for (const c of chunks) h.update(c);
  return h.digest('base64');
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Uploads the parts `reader` yields as one multipart upload at `target`, then completes
 * it. The caller has already read the first part (so it knows the body needs more than
 * one) and still owns `reader` (closes it). On any failure the upload is aborted (best
 * effort) before the error is thrown. Returns the blob's info (etag from the completion
 * answer, or a HEAD when the server sends none, as RGW does). Throws ProviderError:
 * 'PreconditionFailed' (ifNoneMatch and the key exists), 'LengthMismatch' (more than
 * MAX_PARTS parts, or a stored size that differs from what was sent), 'Aborted',
 * 'Unavailable', 'Io'.
 */
export async function putMultipart(
  target: MultipartTarget,
  reader: PartReader,
  options: MultipartOptions
): Promise<BlobInfo> {
  const { client, path, key } = target;
  const signal = options.signal;
  if (options.ifNoneMatch === '*') {
    const head = await client.request({ method: 'HEAD', path, retry: 'always', signal });
    head.body.resume();
    if (head.status < 300)
      throw new ProviderError('PreconditionFailed', `${key}: exists (ifNoneMatch: '*')`);
    if (head.status !== 404) throw errorFromResponse(head, `${key}: head before upload`);
  }
  // A retried Create may leave an orphan empty upload behind; a lifecycle rule for
  // incomplete uploads on the backend bucket (or GC of the backend) reclaims it.
  const created = await client.request({
    method: 'POST',
    path,
    query: [['uploads', '']],
    headers: { 'content-type': 'application/octet-stream' },
    retry: 'always',
    signal,
  });
  if (created.status >= 300) throw errorFromResponse(created, `${key}: create multipart upload`);
  const uploadId = childText(await answerXml(created, `${key}: create`), 'UploadId');
  if (!uploadId) throw new ProviderError('Io', `${key}: create multipart upload: no UploadId`);
  const parts: { number: number; etag: string }[] = [];
  let total = 0;
  const uploadPart = async (number: number, chunks: Uint8Array[]): Promise<void> => {
    const length = chunks.reduce((n, c) => n + c.byteLength, 0);
    const res = await client.request({
      method: 'PUT',
      path,
      query: [
        ['partNumber', String(number)],
        ['uploadId', uploadId],
      ],
      headers: { 'content-md5': md5Base64(chunks) },
      body: { kind: 'bytes', chunks, length },
      // Content-MD5 protects the part; hashing it again for the signature would add nothing.
      payloadHash: UNSIGNED_PAYLOAD,
      retry: 'always', // the part is in memory, so a retry resends the same bytes
      signal,
    });
    if (res.status >= 300) throw errorFromResponse(res, `${key}: upload part ${number}`);
    res.body.resume();
    const etag = header(res, 'etag');
    if (!etag) throw new ProviderError('Io', `${key}: part ${number} answered without an ETag`);
    parts.push({ number, etag: unquoteEtag(etag) });
    total += length;
  };
  // The part being uploaded; the next one is read meanwhile (at most two parts in memory).
  let uploading: Promise<void> | undefined;
  try {
    for (let number = 1; ; number++) {
      const chunks = await reader.next();
      if (uploading) {
        const previous = uploading;
        uploading = undefined;
        await previous;
      }
      if (!chunks) break;
      if (number > MAX_PARTS)
        throw new ProviderError(
          'LengthMismatch',
          `${key}: body needs more than ${MAX_PARTS} parts (over ${MAX_PARTS} x part size)`
        );
      uploading = uploadPart(number, chunks);
      uploading.catch(() => undefined); // awaited before the next part or on failure
    }
    const xml =
      '<CompleteMultipartUpload>' +
      parts
        .map(
          (p) => `<Part><PartNumber>${p.number}</PartNumber><ETag>"${escapeXml(p.etag)}"</ETag></Part>`
        )
        .join('') +
      '</CompleteMultipartUpload>';
    const done = await client.request({
      method: 'POST',
      path,
      query: [['uploadId', uploadId]],
      headers: {
        'content-type': 'application/xml',
        ...(options.ifNoneMatch === '*' ? { 'if-none-match': '*' } : {}),
      },
      body: { kind: 'bytes', chunks: [Buffer.from(xml)], length: Buffer.byteLength(xml) },
      payloadHash: sha256Hex([Buffer.from(xml)]),
      // Completing twice is not idempotent (the second finds no upload): retry only what
      // surely was not applied.
      retry: 'not-applied',
      signal,
    });
    if (done.status >= 300) {
      if (options.ifNoneMatch === '*' && (done.status === 412 || done.status === 409))
        throw new ProviderError('PreconditionFailed', `${key}: exists (ifNoneMatch: '*')`);
      throw errorFromResponse(done, `${key}: complete multipart upload`);
    }
    // S3 may answer 200 and still fail the completion, with an <Error> body.
    const answer = await answerXml(done, `${key}: complete`);
    if (answer.name === 'Error') {
      throw errorFromResponse(
        {
          ...done,
          status: 500,
          error: { code: childText(answer, 'Code'), message: childText(answer, 'Message') },
        },
        `${key}: complete multipart upload`
      );
    }
    const etag = unquoteEtag(child(answer, 'ETag')?.text);
    if (etag) return { ...infoFromHeaders(done, key, total), etag };
  } catch (err) {
    // A part still uploading would race the abort: let it settle first.
    if (uploading) await uploading.catch(() => undefined);
    await abort(client, path, uploadId);
    throw err;
  }
  // No ETag in the completion answer (RGW 16.2): ask for it, and check the size on the way.
  const head = await client.request({ method: 'HEAD', path, retry: 'always', signal });
  if (head.status >= 300) throw errorFromResponse(head, `${key}: head after upload`);
  head.body.resume();
  const size = contentLength(head, `${key}: head after upload`);
  if (size !== total)
    throw new ProviderError('LengthMismatch', `${key}: stored ${size} bytes, sent ${total}`);
  return infoFromHeaders(head, key, total);
}

/** AbortMultipartUpload, best effort: a failure leaves an incomplete upload, never a blob. */
async function abort(client: S3Client, path: string, uploadId: string): Promise<void> {
  try {
    const res = await client.request({
      method: 'DELETE',
      path,
      query: [['uploadId', uploadId]],
      retry: 'always',
    });
    res.body.resume();
  } catch {
    // nothing more to do: the upload is invisible to readers and lists
  }
}
