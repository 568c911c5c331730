/**
 * @module Multipart upload documents: the CompleteMultipartUpload request body and the
 * Initiate / Complete / CopyPart / ListParts results.
 *
 * Keys in results echo what the client sent; characters XML 1.0 cannot carry are replaced
 * by U+FFFD there (see escape.ts).
 */
import { S3Error } from '../errors.js';
import { MAX_COMPLETE_MULTIPART_BODY_BYTES, MAX_PART_NUMBER } from '../limits.js';
import { el, leaf, quoteEtag, s3DocumentChunks, s3Root, xmlDocument, type XmlChunks } from './build.js';
import {
  checksumLeaves,
  readChecksums,
  type ChecksumType,
  type ChecksumValues,
} from './checksums.js';
import { replaceUnsafeXmlChars as safe } from './escape.js';
import { ownerXml, type OwnerInfo } from './owner.js';
import { malformedXml } from './parse.js';
import { childrenNamed, parseRoot, requiredLeafText } from './read.js';

/** Elements a Part may hold: Part, PartNumber, ETag and five checksums. */
const ELEMENTS_PER_PART = 8;

export interface CompletedPart {
  partNumber: number;
  /** Normalised: surrounding quotes removed, lower case (see {@link normalizeEtag}). */
  etag: string;
  checksums: ChecksumValues;
}

/**
 * An ETag as clients write it, normalised for comparison: whitespace trimmed, one pair of
 * surrounding double quotes removed, lower-cased. SDK v3 sends `&quot;hex&quot;`, botocore
 * `"hex"`, rclone `&#34;hex&#34;`, s3cmd bare `hex` (entities are already decoded). Pure.
 */
export function normalizeEtag(raw: string): string {
  let v = raw.trim();
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
  return v.toLowerCase();
}

function partNumberOf(text: string): number {
  const v = text.trim();
  if (!/^[0-9]{1,15}$/.test(v)) throw malformedXml('<PartNumber> must be an integer');
  const n = Number(v);
  if (n < 1 || n > MAX_PART_NUMBER) {
    throw new S3Error(
      'InvalidArgument',
      `Part number must be an integer between 1 and ${MAX_PART_NUMBER}, inclusive`,
      { ArgumentName: 'partNumber', ArgumentValue: v }
    );
  }
  return n;
}

/**
 * Parses a CompleteMultipartUpload body (with or without the S3 namespace). Pure. Throws
 * S3Error: `MalformedXML` (not XML, no parts, a part without PartNumber or ETag, more than
 * 10 000 parts), `InvalidArgument` (part number outside 1..10000), `InvalidPartOrder` (part
 * numbers not strictly ascending), `MaxMessageLengthExceeded` (body over
 * {@link MAX_COMPLETE_MULTIPART_BODY_BYTES}). Whether the parts exist and their ETags
 * match is for the caller (`InvalidPart`).
 */
export function parseCompleteMultipartUpload(body: string | Uint8Array): {
  parts: CompletedPart[];
} {
  const root = parseRoot(body, 'CompleteMultipartUpload', {
    maxBytes: MAX_COMPLETE_MULTIPART_BODY_BYTES,
    maxElements: MAX_PART_NUMBER * ELEMENTS_PER_PART + 1,
  });
  const partElements = childrenNamed(root, 'Part');
  if (partElements.length === 0) throw malformedXml('no <Part> elements');
  if (partElements.length > MAX_PART_NUMBER)
    throw malformedXml(`more than ${MAX_PART_NUMBER} parts`);
  const parts: CompletedPart[] = [];
  let previous = 0;
  for (const p of partElements) {
    const partNumber = partNumberOf(requiredLeafText(p, 'PartNumber'));
    if (partNumber <= previous) throw new S3Error('InvalidPartOrder');
    previous = partNumber;
    parts.push({
      partNumber,
      etag: normalizeEtag(requiredLeafText(p, 'ETag')),
      checksums: readChecksums(p),
    });
  }
  return { parts };
}

/** `InitiateMultipartUploadResult`. Pure. */
export function renderInitiateMultipartUploadResult(r: {
  bucket: string;
  key: string;
  uploadId: string;
}): string {
  return xmlDocument(
    s3Root(
      'InitiateMultipartUploadResult',
      leaf('Bucket', r.bucket),
      leaf('Key', safe(r.key)),
      leaf('UploadId', r.uploadId)
    )
  );
}

/** `CompleteMultipartUploadResult`; `etag` is quoted for the document. Pure. */
export function renderCompleteMultipartUploadResult(r: {
  location: string;
  bucket: string;
  key: string;
  etag: string;
  checksums?: ChecksumValues;
  checksumType?: ChecksumType;
}): string {
  return xmlDocument(
    s3Root(
      'CompleteMultipartUploadResult',
      leaf('Location', safe(r.location)),
      leaf('Bucket', r.bucket),
      leaf('Key', safe(r.key)),
      leaf('ETag', quoteEtag(r.etag)),
      checksumLeaves(r.checksums),
      leaf('ChecksumType', r.checksumType)
    )
  );
}

/** `CopyPartResult` (UploadPartCopy). Pure. */
export function renderCopyPartResult(r: {
  etag: string;
  lastModified: Date;
  checksums?: ChecksumValues;
}): string {
  return xmlDocument(
    s3Root(
      'CopyPartResult',
      leaf('ETag', quoteEtag(r.etag)),
      leaf('LastModified', r.lastModified),
      checksumLeaves(r.checksums)
    )
  );
}

export interface ListedPart {
  partNumber: number;
  lastModified: Date;
  etag: string;
  size: number;
  checksums?: ChecksumValues;
}

export interface ListPartsData {
  bucket: string;
  key: string;
  uploadId: string;
  partNumberMarker: number;
  nextPartNumberMarker?: number;
  maxParts: number;
  isTruncated: boolean;
  parts: readonly ListedPart[];
  initiator?: OwnerInfo;
  owner?: OwnerInfo;
  /** Default `STANDARD`. */
  storageClass?: string;
  /** Upper case as S3 writes it (`CRC32`), when the upload was created with one. */
  checksumAlgorithm?: string;
  checksumType?: ChecksumType;
}

/** `ListPartsResult`. Pure. */
export function renderListPartsResult(r: ListPartsData): XmlChunks {
  return s3DocumentChunks(
    'ListPartsResult',
    leaf('Bucket', r.bucket),
    leaf('Key', safe(r.key)),
    leaf('UploadId', r.uploadId),
    leaf('PartNumberMarker', r.partNumberMarker),
    leaf('NextPartNumberMarker', r.nextPartNumberMarker),
    leaf('MaxParts', r.maxParts),
    leaf('IsTruncated', r.isTruncated),
    r.parts.map((p) =>
      el(
        'Part',
        leaf('PartNumber', p.partNumber),
        leaf('LastModified', p.lastModified),
        leaf('ETag', quoteEtag(p.etag)),
        leaf('Size', p.size),
        checksumLeaves(p.checksums)
      )
    ),
    ownerXml('Initiator', r.initiator),
    ownerXml('Owner', r.owner),
    leaf('StorageClass', r.storageClass ?? 'STANDARD'),
    leaf('ChecksumAlgorithm', r.checksumAlgorithm),
    leaf('ChecksumType', r.checksumType)
  );
}
