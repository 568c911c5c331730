/**
 * @module Versioning documents: VersioningConfiguration (PutBucketVersioning's body and
 * GetBucketVersioning's answer) and ListVersionsResult (ListObjectVersions).
 *
 * `encoding-type=url` (or a key XML cannot carry) URL-encodes Key, Prefix, Delimiter,
 * KeyMarker, NextKeyMarker and CommonPrefixes, as S3 does; version ids are XML-safe.
 */
import { el, leaf, quoteEtag, s3DocumentChunks, s3Root, xmlDocument, type Xml, type XmlChunks } from './build.js';
import { escapeXmlText, isXmlSafe, urlEncodeListingValue } from './escape.js';
import { ownerXml, type OwnerInfo } from './owner.js';
import { leafText, parseRoot } from './read.js';
import { malformedXml } from './parse.js';
import { S3Error } from '../errors.js';
import { isoTimes, type EncodingType } from './listing.js';

export type VersioningStatus = 'Enabled' | 'Suspended';

/** The body of PutBucketVersioning. */
export interface VersioningRequest {
  status: VersioningStatus;
}

/**
 * Parses a VersioningConfiguration. Status must be `Enabled` or `Suspended` (MalformedXML
 * otherwise, or when absent); `MfaDelete` `Enabled` is NotImplemented (Strata has no MFA),
 * `Disabled` is accepted; anything else MalformedXML. Pure.
 */
export function parseVersioningConfiguration(body: Uint8Array): VersioningRequest {
  const root = parseRoot(body, 'VersioningConfiguration');
  const status = leafText(root, 'Status')?.trim();
  const mfa = leafText(root, 'MfaDelete')?.trim();
  if (mfa !== undefined && mfa !== 'Disabled') {
    if (mfa === 'Enabled') throw new S3Error('NotImplemented', 'MFA Delete is not implemented');
    throw malformedXml('MfaDelete must be Enabled or Disabled');
  }
  if (status !== 'Enabled' && status !== 'Suspended') throw malformedXml('Status must be Enabled or Suspended');
  for (const c of root.children) if (c.name !== 'Status' && c.name !== 'MfaDelete') throw malformedXml(`unexpected <${c.name}>`);
  return { status };
}

/** GetBucketVersioning: no Status element when versioning was never enabled. Pure. */
export function renderVersioningStatus(status: VersioningStatus | undefined): string {
  return xmlDocument(s3Root('VersioningConfiguration', leaf('Status', status)));
}

/** One `<Version>` or `<DeleteMarker>`. */
export interface ListedVersion {
  key: string;
  versionId: string;
  isLatest: boolean;
  /** A Date, or ms since the epoch (listing.ts isoTimes). */
  lastModified: Date | number;
  deleteMarker: boolean;
  /** Versions only. */
  etag?: string;
  size?: number;
  checksumAlgorithms?: readonly string[];
  checksumType?: string;
  owner?: OwnerInfo;
}

export interface ListVersionsData {
  bucket: string;
  prefix: string;
  keyMarker: string;
  versionIdMarker: string;
  maxKeys: number;
  delimiter?: string;
  isTruncated: boolean;
  nextKeyMarker?: string;
  nextVersionIdMarker?: string;
  versions: readonly ListedVersion[];
  commonPrefixes: readonly string[];
  encodingType?: EncodingType;
}

function versionXml(v: ListedVersion, encode: (s: string) => string, iso: (time: Date | number) => string): Xml {
  const common = `<Key>${escapeXmlText(encode(v.key))}</Key><VersionId>${escapeXmlText(v.versionId)}</VersionId><IsLatest>${v.isLatest}</IsLatest><LastModified>${iso(v.lastModified)}</LastModified>`;
  const owner = v.owner ? ownerXml('Owner', v.owner)! : '';
  if (v.deleteMarker) return `<DeleteMarker>${common}${owner}</DeleteMarker>` as Xml;
  let out = `<Version>${common}<ETag>${escapeXmlText(quoteEtag(v.etag ?? ''))}</ETag>`;
  if (v.checksumAlgorithms) for (const a of v.checksumAlgorithms) out += `<ChecksumAlgorithm>${escapeXmlText(a)}</ChecksumAlgorithm>`;
  if (v.checksumType !== undefined) out += `<ChecksumType>${escapeXmlText(v.checksumType)}</ChecksumType>`;
  return `${out}<Size>${v.size ?? 0}</Size><StorageClass>STANDARD</StorageClass>${owner}</Version>` as Xml;
}

/** `ListVersionsResult`, entries in listing order. Pure. */
export function renderListVersionsResult(r: ListVersionsData): XmlChunks {
  const values = [r.prefix, r.keyMarker, r.delimiter, r.nextKeyMarker, ...r.versions.map((v) => v.key), ...r.commonPrefixes];
  const url = r.encodingType === 'url' || values.some((v) => v !== undefined && !isXmlSafe(v));
  const encode = url ? urlEncodeListingValue : (s: string) => s;
  const maybe = (v: string | undefined) => (v === undefined ? undefined : encode(v));
  const iso = isoTimes();
  return s3DocumentChunks(
    'ListVersionsResult',
    leaf('Name', r.bucket),
    leaf('Prefix', encode(r.prefix)),
    leaf('KeyMarker', encode(r.keyMarker)),
    leaf('VersionIdMarker', r.versionIdMarker),
    leaf('NextKeyMarker', maybe(r.nextKeyMarker)),
    leaf('NextVersionIdMarker', r.nextVersionIdMarker),
    leaf('MaxKeys', r.maxKeys),
    leaf('Delimiter', maybe(r.delimiter)),
    leaf('IsTruncated', r.isTruncated),
    leaf('EncodingType', url ? 'url' : undefined),
    r.versions.map((v) => versionXml(v, encode, iso)),
    r.commonPrefixes.map((p) => el('CommonPrefixes', leaf('Prefix', encode(p))))
  );
}
