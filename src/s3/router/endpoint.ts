/**
 * @module The Endpoint union: what route() makes of a request, one variant per S3
 * operation, carrying the bucket, the key and the already-validated query parameters.
 * Dispatch with one exhaustive `switch (endpoint.op)`.
 */
import type { EncodingType } from '../xml/listing.js';

export interface ListBucketsParams {
  prefix?: string;
  continuationToken?: string;
  /** 1..10000 when given. */
  maxBuckets?: number;
}

export interface ListObjectsV1Params {
  prefix: string;
  /** Undefined when absent or empty (restic sends `delimiter=`). */
  delimiter?: string;
  marker: string;
  /** 0..1000 (larger requests are clamped to 1000, as S3 does). */
  maxKeys: number;
  encodingType?: EncodingType;
}

export interface ListObjectsV2Params {
  prefix: string;
  delimiter?: string;
  maxKeys: number;
  /** Opaque, as sent; empty lists from the start (and is echoed). */
  continuationToken?: string;
  startAfter?: string;
  fetchOwner: boolean;
  encodingType?: EncodingType;
}

export interface ListMultipartUploadsParams {
  prefix: string;
  delimiter?: string;
  keyMarker: string;
  uploadIdMarker: string;
  /** 0..1000, clamped. */
  maxUploads: number;
  encodingType?: EncodingType;
}

export interface ListPartsParams {
  /** 0..1000, clamped. */
  maxParts: number;
  /** Parts after this number are listed; 0 = from the start. */
  partNumberMarker: number;
}

/** Response header → value, from the `response-*` query parameters of GET/HEAD Object. */
export type ResponseOverrides = Partial<
  Record<
    | 'content-type'
    | 'content-language'
    | 'expires'
    | 'cache-control'
    | 'content-disposition'
    | 'content-encoding',
    string
  >
>;

/** The source named by `x-amz-copy-source`. */
export interface CopySource {
  bucket: string;
  key: string;
  /** `?versionId=` of the source: `null` or a well-formed id. */
  versionId?: string;
}

export interface ListObjectVersionsParams {
  prefix: string;
  delimiter?: string;
  keyMarker: string;
  versionIdMarker: string;
  /** 0..1000, clamped. */
  maxKeys: number;
  encodingType?: EncodingType;
}

/** An inclusive byte range `bytes=first-last` (x-amz-copy-source-range). */
export interface ByteRange {
  first: number;
  last: number;
}

type B = { bucket: string };
/** `versionId`: the version an object operation names (absent: the current one). */
type K = { bucket: string; key: string; versionId?: string };
type U = { bucket: string; key: string; uploadId: string };
/** An object, or one version of it (`versionId` undefined: the current one). */
type V = { bucket: string; key: string; versionId?: string };

export type Endpoint =
  | { op: 'ListBuckets'; params: ListBucketsParams }
  | ({ op: 'CreateBucket' } & B)
  | ({ op: 'DeleteBucket' } & B)
  | ({ op: 'HeadBucket' } & B)
  | ({ op: 'GetBucketLocation' } & B)
  | ({ op: 'GetBucketVersioning' } & B)
  | ({ op: 'PutBucketVersioning' } & B)
  | ({ op: 'ListObjectVersions'; params: ListObjectVersionsParams } & B)
  | ({ op: 'ListObjects'; params: ListObjectsV1Params } & B)
  | ({ op: 'ListObjectsV2'; params: ListObjectsV2Params } & B)
  | ({ op: 'ListMultipartUploads'; params: ListMultipartUploadsParams } & B)
  | ({ op: 'DeleteObjects' } & B)
  | ({ op: 'GetBucketCors' } & B)
  | ({ op: 'PutBucketCors' } & B)
  | ({ op: 'DeleteBucketCors' } & B)
  | ({ op: 'GetBucketTagging' } & B)
  | ({ op: 'PutBucketTagging' } & B)
  | ({ op: 'DeleteBucketTagging' } & B)
  | ({ op: 'GetBucketAcl' } & B)
  | ({ op: 'PutBucketAcl' } & B)
  | ({ op: 'GetBucketPolicy' } & B)
  | ({ op: 'PutBucketPolicy' } & B)
  | ({ op: 'DeleteBucketPolicy' } & B)
  | ({ op: 'GetBucketPolicyStatus' } & B)
  | ({ op: 'GetPublicAccessBlock' } & B)
  | ({ op: 'PutPublicAccessBlock' } & B)
  | ({ op: 'DeletePublicAccessBlock' } & B)
  | ({ op: 'GetBucketOwnershipControls' } & B)
  | ({ op: 'PutBucketOwnershipControls' } & B)
  | ({ op: 'DeleteBucketOwnershipControls' } & B)
  | ({ op: 'GetBucketLifecycle' } & B)
  | ({ op: 'PutBucketLifecycle' } & B)
  | ({ op: 'DeleteBucketLifecycle' } & B)
  | ({ op: 'GetBucketEncryption' } & B)
  | ({ op: 'PutBucketEncryption' } & B)
  | ({ op: 'DeleteBucketEncryption' } & B)
  | ({ op: 'PutObject' } & K)
  | ({ op: 'GetObject'; partNumber?: number; overrides: ResponseOverrides } & K)
  | ({ op: 'HeadObject'; partNumber?: number; overrides: ResponseOverrides } & K)
  | ({ op: 'DeleteObject' } & K)
  | ({ op: 'CopyObject'; source: CopySource } & K)
  | ({ op: 'CreateMultipartUpload' } & K)
  | ({ op: 'UploadPart'; partNumber: number } & U)
  | ({ op: 'UploadPartCopy'; partNumber: number; source: CopySource; sourceRange?: ByteRange } & U)
  | ({ op: 'CompleteMultipartUpload' } & U)
  | ({ op: 'AbortMultipartUpload' } & U)
  | ({ op: 'ListParts'; params: ListPartsParams } & U)
  | ({ op: 'GetObjectAttributes' } & K)
  | ({ op: 'GetObjectTorrent' } & K)
  | ({ op: 'PostObject' } & B)
  | ({ op: 'GetObjectTagging' } & K)
  | ({ op: 'PutObjectTagging' } & K)
  | ({ op: 'DeleteObjectTagging' } & K)
  | ({ op: 'GetObjectAcl' } & K)
  | ({ op: 'PutObjectAcl' } & K)
  | ({ op: 'GetObjectLockConfiguration' } & B)
  | ({ op: 'PutObjectLockConfiguration' } & B)
  | ({ op: 'GetObjectRetention' } & V)
  | ({ op: 'PutObjectRetention' } & V)
  | ({ op: 'GetObjectLegalHold' } & V)
  | ({ op: 'PutObjectLegalHold' } & V)
  | { op: 'CorsPreflight'; bucket?: string; key?: string };

/** Every operation name. */
export type Operation = Endpoint['op'];
