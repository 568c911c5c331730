/**
 * @module Listing documents: ListAllMyBucketsResult, ListBucketResult (V1 and V2) and
 * ListMultipartUploadsResult, rendered from plain data.
 *
 * `encoding-type=url` URL-encodes Key, Prefix (V2 and uploads), Delimiter, StartAfter,
 * Marker, NextMarker (V1), KeyMarker/NextKeyMarker (uploads) and CommonPrefixes — never continuation tokens —
 * and echoes `<EncodingType>url</EncodingType>`. When the client did not ask for it but a
 * string cannot be carried by XML 1.0 (a key with U+001F, say), the whole response is
 * URL-encoded and says so: the document stays parseable and the key stays exact (see
 * escape.ts for why neither raw characters nor `&#x1F;` are acceptable).
 */
import { el, leaf, quoteEtag, s3DocumentChunks, s3Root, xmlDocument, type Xml, type XmlChunks } from './build.js';
import type { ChecksumType } from './checksums.js';
import { escapeSafeXmlText, escapeXmlText, isXmlSafe, replaceUnsafeXmlChars, urlEncodeListingValue } from './escape.js';
import { ownerXml, type OwnerInfo } from './owner.js';

/** What a client may request with `encoding-type`. */
export type EncodingType = 'url';

export interface ListedObject {
  key: string;
  /** A Date, or ms since the epoch (what the store holds: no Date per listed key). */
  lastModified: Date | number;
  /** Unquoted (`hex` or `hex-N`); quoted for the document. */
  etag: string;
  size: number;
  /** Default `STANDARD`. */
  storageClass?: string;
  /** Written when present (V1 always, V2 only with fetch-owner). */
  owner?: OwnerInfo;
  /** Upper case as S3 writes them (`CRC32`). */
  checksumAlgorithms?: readonly string[];
  checksumType?: ChecksumType;
}

type Encode = (value: string) => string;

/**
 * The encoder for one listing: URL encoding when requested or when any of `values` is not
 * XML-safe (then `encodingType` is forced to `url`), identity otherwise.
 */
function chooseEncoding(
  requested: EncodingType | undefined,
  values: Iterable<string | undefined>
): { encodingType: EncodingType | undefined; encode: Encode } {
  let encodingType = requested;
  if (encodingType === undefined) {
    for (const v of values) {
      if (v !== undefined && !isXmlSafe(v)) {
        encodingType = 'url';
        break;
      }
    }
  }
  return encodingType === 'url'
    ? { encodingType, encode: urlEncodeListingValue }
    : { encodingType: undefined, encode: (v) => v };
}

function maybe(encode: Encode, v: string | undefined): string | undefined {
  return v === undefined ? undefined : encode(v);
}

/** An ETag as etagOf makes them (hex MD5, optionally `-N`): nothing in it to escape. */
const PLAIN_ETAG = /^[0-9a-f]{32}(?:-[0-9]+)?$/;

/** "000" to "999": the millisecond field of an ISO time. */
const MILLIS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
/** Last millisecond whose ISO text has a four-digit year (9999-12-31T23:59:59.999Z). */
const MAX_ISO_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * `<LastModified>` text of one listing: keys come in key order, not write order, but a page's
 * objects were mostly written within a few seconds of each other, so the
 * `YYYY-MM-DDTHH:MM:SS.` part is formatted once per second seen (a Date and toISOString per
 * key were the largest item of a 1,000-key page) and the milliseconds come from a table.
 * Times outside 1970..9999 or not whole milliseconds take toISOString itself. Takes a Date or
 * ms since the epoch (what the store holds: no Date per listed key). Shared by every listing
 * document that writes `<LastModified>` per entry (objects V1 and V2, versions).
 */
export function isoTimes(): (time: Date | number) => string {
  const seconds = new Map<number, string>();
  return (time) => {
    const ms = typeof time === 'number' ? time : time.getTime();
    if (!Number.isInteger(ms) || ms < 0 || ms > MAX_ISO_MS) return new Date(ms).toISOString();
    const second = Math.floor(ms / 1000);
    let head = seconds.get(second);
    if (head === undefined) {
      head = new Date(second * 1000).toISOString().slice(0, 20);
      seconds.set(second, head);
    }
    return `${head}${MILLIS[ms - second * 1000]!}Z`;
  };
}

/**
 * One `<Contents>` entry. This is the per-key cost of every listing, so it is written as
 * one template rather than through `el`/`leaf` (same output: text escaped, `<ETag>` as
 * `&quot;…&quot;`, elements in S3's order). `encode` has already been chosen so that every
 * key it returns is XML-safe (chooseEncoding checked them all).
 */
function contentsXml(o: ListedObject, encode: Encode, withOwner: boolean, iso: (time: Date | number) => string): Xml {
  const etag = PLAIN_ETAG.test(o.etag) ? `&quot;${o.etag}&quot;` : escapeXmlText(quoteEtag(o.etag));
  let out = `<Contents><Key>${escapeSafeXmlText(encode(o.key))}</Key><LastModified>${iso(o.lastModified)}</LastModified><ETag>${etag}</ETag>`;
  if (o.checksumAlgorithms) for (const a of o.checksumAlgorithms) out += `<ChecksumAlgorithm>${escapeXmlText(a)}</ChecksumAlgorithm>`;
  if (o.checksumType !== undefined) out += `<ChecksumType>${o.checksumType}</ChecksumType>`;
  out += `<Size>${o.size}</Size>`;
  if (withOwner && o.owner) out += ownerXml('Owner', o.owner)!;
  const storage = o.storageClass === undefined ? 'STANDARD' : escapeXmlText(o.storageClass);
  return `${out}<StorageClass>${storage}</StorageClass></Contents>` as Xml;
}

function commonPrefixesXml(prefixes: readonly string[], encode: Encode): Xml[] {
  return prefixes.map((p) => el('CommonPrefixes', leaf('Prefix', encode(p))));
}

export interface ListObjectsV1Data {
  bucket: string;
  prefix: string;
  marker: string;
  maxKeys: number;
  delimiter?: string;
  isTruncated: boolean;
  /** S3 returns it only when a delimiter was given; clients otherwise use the last Key. */
  nextMarker?: string;
  contents: readonly ListedObject[];
  commonPrefixes: readonly string[];
  encodingType?: EncodingType;
}

/**
 * `ListBucketResult` for ListObjects (V1). Pure. The `<Prefix>` is echoed as sent, never
 * URL-encoded: botocore, which always asks V1 listings for `encoding-type=url`, decodes
 * Marker, NextMarker, Delimiter and keys but not V1's Prefix, because S3 does not encode it.
 */
export function renderListObjectsV1Result(r: ListObjectsV1Data): XmlChunks {
  const { encodingType, encode } = chooseEncoding(r.encodingType, [
    r.marker,
    r.delimiter,
    r.nextMarker,
    ...r.contents.map((o) => o.key),
    ...r.commonPrefixes,
  ]);
  const iso = isoTimes();
  return s3DocumentChunks(
    'ListBucketResult',
    leaf('Name', r.bucket),
    leaf('Prefix', replaceUnsafeXmlChars(r.prefix)),
    leaf('Marker', encode(r.marker)),
    leaf('NextMarker', maybe(encode, r.nextMarker)),
    leaf('MaxKeys', r.maxKeys),
    leaf('Delimiter', maybe(encode, r.delimiter)),
    leaf('IsTruncated', r.isTruncated),
    leaf('EncodingType', encodingType),
    r.contents.map((o) => contentsXml(o, encode, true, iso)),
    commonPrefixesXml(r.commonPrefixes, encode)
  );
}

export interface ListObjectsV2Data {
  bucket: string;
  prefix: string;
  maxKeys: number;
  delimiter?: string;
  isTruncated: boolean;
  /** Echoed as given (never URL-encoded; characters XML cannot carry become U+FFFD). */
  continuationToken?: string;
  /** Opaque; never URL-encoded, so it must itself be XML-safe (e.g. base64url). */
  nextContinuationToken?: string;
  startAfter?: string;
  /** Owners are written only when the request had `fetch-owner=true`. */
  fetchOwner: boolean;
  contents: readonly ListedObject[];
  commonPrefixes: readonly string[];
  encodingType?: EncodingType;
}

/** `ListBucketResult` for ListObjectsV2; KeyCount = contents + common prefixes. Pure. */
export function renderListObjectsV2Result(r: ListObjectsV2Data): XmlChunks {
  const { encodingType, encode } = chooseEncoding(r.encodingType, [
    r.prefix,
    r.delimiter,
    r.startAfter,
    ...r.contents.map((o) => o.key),
    ...r.commonPrefixes,
  ]);
  const iso = isoTimes();
  return s3DocumentChunks(
    'ListBucketResult',
    leaf('Name', r.bucket),
    leaf('Prefix', encode(r.prefix)),
    leaf('ContinuationToken', maybe(replaceUnsafeXmlChars, r.continuationToken)),
    leaf('NextContinuationToken', r.nextContinuationToken),
    leaf('KeyCount', r.contents.length + r.commonPrefixes.length),
    leaf('MaxKeys', r.maxKeys),
    leaf('Delimiter', maybe(encode, r.delimiter)),
    leaf('IsTruncated', r.isTruncated),
    leaf('EncodingType', encodingType),
    leaf('StartAfter', maybe(encode, r.startAfter)),
    r.contents.map((o) => contentsXml(o, encode, r.fetchOwner, iso)),
    commonPrefixesXml(r.commonPrefixes, encode)
  );
}

export interface ListedUpload {
  key: string;
  uploadId: string;
  initiated: Date;
  initiator?: OwnerInfo;
  owner?: OwnerInfo;
  storageClass?: string;
  checksumAlgorithm?: string;
  checksumType?: ChecksumType;
}

export interface ListMultipartUploadsData {
  bucket: string;
  keyMarker: string;
  uploadIdMarker: string;
  nextKeyMarker?: string;
  nextUploadIdMarker?: string;
  delimiter?: string;
  prefix?: string;
  maxUploads: number;
  isTruncated: boolean;
  uploads: readonly ListedUpload[];
  commonPrefixes: readonly string[];
  encodingType?: EncodingType;
}

/** `ListMultipartUploadsResult`. Pure. */
export function renderListMultipartUploadsResult(r: ListMultipartUploadsData): XmlChunks {
  const { encodingType, encode } = chooseEncoding(r.encodingType, [
    r.keyMarker,
    r.nextKeyMarker,
    r.delimiter,
    r.prefix,
    ...r.uploads.map((u) => u.key),
    ...r.commonPrefixes,
  ]);
  return s3DocumentChunks(
    'ListMultipartUploadsResult',
    leaf('Bucket', r.bucket),
    leaf('KeyMarker', encode(r.keyMarker)),
    leaf('UploadIdMarker', replaceUnsafeXmlChars(r.uploadIdMarker)),
    leaf('NextKeyMarker', maybe(encode, r.nextKeyMarker)),
    leaf('NextUploadIdMarker', r.nextUploadIdMarker),
    leaf('Delimiter', maybe(encode, r.delimiter)),
    leaf('Prefix', maybe(encode, r.prefix)),
    leaf('MaxUploads', r.maxUploads),
    leaf('IsTruncated', r.isTruncated),
    leaf('EncodingType', encodingType),
    r.uploads.map((u) =>
      el(
        'Upload',
        leaf('Key', encode(u.key)),
        leaf('UploadId', u.uploadId),
        ownerXml('Initiator', u.initiator),
        ownerXml('Owner', u.owner),
        leaf('StorageClass', u.storageClass ?? 'STANDARD'),
        leaf('Initiated', u.initiated),
        leaf('ChecksumAlgorithm', u.checksumAlgorithm),
        leaf('ChecksumType', u.checksumType)
      )
    ),
    commonPrefixesXml(r.commonPrefixes, encode)
  );
}

export interface ListBucketsData {
  owner: OwnerInfo;
  buckets: readonly { name: string; creationDate: Date; region?: string }[];
  continuationToken?: string;
  prefix?: string;
}

/** `ListAllMyBucketsResult`. Pure. */
export function renderListAllMyBucketsResult(r: ListBucketsData): string {
  return xmlDocument(
    s3Root(
      'ListAllMyBucketsResult',
      ownerXml('Owner', r.owner),
      el(
        'Buckets',
        r.buckets.map((b) =>
          el(
            'Bucket',
            leaf('Name', b.name),
            leaf('CreationDate', b.creationDate),
            leaf('BucketRegion', b.region)
          )
        )
      ),
      leaf('ContinuationToken', r.continuationToken),
      leaf('Prefix', r.prefix === undefined ? undefined : replaceUnsafeXmlChars(r.prefix))
    )
  );
}
