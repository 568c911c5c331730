/**
 * @module CopyObject: a new version pointing at the source's body (no byte is copied, unless
 * the encryption changes or x-amz-checksum-algorithm names a checksum the source does not
 * carry), with COPY/REPLACE metadata and tagging directives and x-amz-copy-source-if-*
 * conditions.
 */
import { expirationHeader } from './lifecycle.js';
import { copySourceVersionHeader, writtenVersionHeader } from './versions.js';
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { metadataFromRequest } from '../object-headers.js';
import { readConditions, writeConditions } from '../conditions.js';
import { sendXml } from '../respond.js';
import { renderCopyObjectResult } from '../xml/index.js';
import { S3Error } from '../errors.js';
import { etagOf } from '../../store/records.js';
import type { CopyOptions } from '../../store/objects-misc.js';
import { versionChecksums } from './multipart.js';
import { encryptionHeaders, readKeys, writeEncryption } from '../sse.js';
import { COPY_SOURCE_CUSTOMER_PREFIX } from '../sse-headers.js';
import { checksumName } from '../body.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

function directive(v: string | undefined, header: string): 'COPY' | 'REPLACE' {
  const d = (v ?? 'COPY').trim().toUpperCase();
  if (d !== 'COPY' && d !== 'REPLACE') throw new S3Error('InvalidArgument', `Unknown ${header}`, { ArgumentName: header, ArgumentValue: v ?? '' });
  return d;
}

export async function handleCopyObject(r: RequestContext, e: Op<'CopyObject'>): Promise<void> {
  const h = r.headers;
  const opts: CopyOptions = {
    metadataDirective: directive(h['x-amz-metadata-directive'], 'x-amz-metadata-directive'),
    taggingDirective: directive(h['x-amz-tagging-directive'], 'x-amz-tagging-directive'),
  };
  const meta = metadataFromRequest(r, e.bucket);
  if (meta.access) opts.access = meta.access;
  // The copy's lock: its own headers, or the destination bucket's default (never the source's).
  if (meta.lock) opts.lock = meta.lock;
  if (opts.metadataDirective === 'REPLACE') {
    opts.metadata = { system: meta.system ?? {}, userMetadata: meta.userMetadata ?? {} };
    if (meta.contentType !== undefined) opts.metadata.contentType = meta.contentType;
  }
  if (opts.taggingDirective === 'REPLACE') opts.tags = meta.tags ?? {};
  // A checksum algorithm the source does not carry makes the store hash the body again.
  const alg = checksumName(h['x-amz-checksum-algorithm'], 'x-amz-checksum-algorithm');
  if (alg) opts.checksumAlgorithm = alg;
  const src = readConditions(h, 'x-amz-copy-source-');
  if (src) opts.sourceConditions = src;
  const dst = writeConditions(h);
  if (dst) opts.conditions = dst;
  // The source is opened with the copy-source SSE-C key (if any) and the server's key; the
  // copy is encrypted as its own headers or the destination bucket's default say.
  const enc = writeEncryption(r, e.bucket);
  opts.sourceKeys = readKeys(r, COPY_SOURCE_CUSTOMER_PREFIX).keys;
  if (enc.request) opts.encryption = enc.request;
  opts.encryptionExplicit = enc.explicit;
  opts.budget = r.budget;
  const v = await r.store.copyObject(e.source, { bucket: e.bucket, key: e.key }, opts);
  const { checksums, checksumType } = versionChecksums(v);
  const out: Parameters<typeof renderCopyObjectResult>[0] = { etag: etagOf(v), lastModified: new Date(v.lastModified), checksums };
  if (checksumType) out.checksumType = checksumType;
  sendXml(r, 200, renderCopyObjectResult(out), {
    ...encryptionHeaders(v.encryption?.mode, enc.customer),
    ...writtenVersionHeader(v.versionId),
    ...copySourceVersionHeader(r, e.source, v.copySourceVersionId),
    ...expirationHeader(r, e.bucket, e.key, v),
  });
}
