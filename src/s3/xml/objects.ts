/**
 * @module Object documents: the DeleteObjects request body, DeleteResult and
 * CopyObjectResult.
 */
import { MAX_DELETE_OBJECTS } from '../limits.js';
import { el, leaf, quoteEtag, s3DocumentChunks, s3Root, xmlDocument, type XmlChunks } from './build.js';
import { checksumLeaves, type ChecksumType, type ChecksumValues } from './checksums.js';
import { replaceUnsafeXmlChars as safe } from './escape.js';
import { malformedXml } from './parse.js';
import { S3Error } from '../errors.js';
import { booleanLeaf, childrenNamed, leafText, parseRoot, requiredLeafText } from './read.js';

export interface ObjectToDelete {
  /** Exact (not trimmed); may be any string the client sent, even '' — the caller decides. */
  key: string;
  /** As sent; `null` names the null version. */
  versionId?: string;
  /** Conditional delete (`<ETag>`), normalised only by trimming. */
  etag?: string;
}

export interface DeleteRequest {
  objects: ObjectToDelete[];
  /** With Quiet, DeleteResult lists only the errors. */
  quiet: boolean;
}

/**
 * Parses a DeleteObjects (`POST ?delete`) body. Pure. Throws S3Error `MalformedXML` for a
 * document that is not `<Delete>`, has no `<Object>`, more than {@link MAX_DELETE_OBJECTS},
 * an Object without `<Key>`, or a Quiet that is not true/false; `MaxMessageLengthExceeded`
 * for a body over 1 MiB; `NotImplemented` for an Object conditioned on its `<Size>` or
 * `<LastModifiedTime>` (S3 Express conditions, not evaluated here: ignoring them would
 * delete unconditionally).
 */
export function parseDelete(body: string | Uint8Array): DeleteRequest {
  const root = parseRoot(body, 'Delete');
  const objectElements = childrenNamed(root, 'Object');
  if (objectElements.length === 0) throw malformedXml('no <Object> elements');
  if (objectElements.length > MAX_DELETE_OBJECTS)
    throw malformedXml(`more than ${MAX_DELETE_OBJECTS} objects`);
  const objects = objectElements.map((o) => {
    const entry: ObjectToDelete = { key: requiredLeafText(o, 'Key') };
    const versionId = leafText(o, 'VersionId')?.trim();
    if (versionId) entry.versionId = versionId;
    const etag = leafText(o, 'ETag')?.trim();
    if (etag) entry.etag = etag;
    for (const condition of ['Size', 'LastModifiedTime']) {
      if (leafText(o, condition) !== undefined) {
        throw new S3Error('NotImplemented', `Deleting on the condition of an object's <${condition}> is not supported: nothing was deleted.`);
      }
    }
    return entry;
  });
  return { objects, quiet: booleanLeaf(root, 'Quiet', false) };
}

export interface DeletedEntry {
  key: string;
  versionId?: string;
  deleteMarker?: boolean;
  deleteMarkerVersionId?: string;
}

export interface DeleteErrorEntry {
  key: string;
  versionId?: string;
  code: string;
  message: string;
}

/**
 * `DeleteResult`: one `<Deleted>` per success (omit them for Quiet requests) and one
 * `<Error>` per failure. Keys echo the request; characters XML 1.0 cannot carry become
 * U+FFFD. Pure.
 */
export function renderDeleteResult(r: {
  deleted: readonly DeletedEntry[];
  errors: readonly DeleteErrorEntry[];
}): XmlChunks {
  return s3DocumentChunks(
    'DeleteResult',
    r.deleted.map((d) =>
      el(
        'Deleted',
        leaf('Key', safe(d.key)),
        leaf('VersionId', d.versionId === undefined ? undefined : safe(d.versionId)),
        leaf('DeleteMarker', d.deleteMarker),
        leaf('DeleteMarkerVersionId', d.deleteMarkerVersionId)
      )
    ),
    r.errors.map((e) =>
      el(
        'Error',
        leaf('Key', safe(e.key)),
        leaf('VersionId', e.versionId === undefined ? undefined : safe(e.versionId)),
        leaf('Code', e.code),
        leaf('Message', safe(e.message))
      )
    )
  );
}

/** `CopyObjectResult`. Pure. */
export function renderCopyObjectResult(r: {
  etag: string;
  lastModified: Date;
  checksums?: ChecksumValues;
  checksumType?: ChecksumType;
}): string {
  return xmlDocument(
    s3Root(
      'CopyObjectResult',
      leaf('ETag', quoteEtag(r.etag)),
      leaf('LastModified', r.lastModified),
      leaf('ChecksumType', r.checksumType),
      checksumLeaves(r.checksums)
    )
  );
}
