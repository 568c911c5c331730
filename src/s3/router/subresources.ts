/**
 * @module Sub-resources Strata recognises but does not implement: requests naming them get
 * `501 NotImplemented` (clients then fail fast and legibly) instead of being mistaken for
 * the plain operation — `PUT /b?versioning` must not create a bucket, `GET /b/k?acl` must
 * not return the object. Names are S3's query parameters (API reference, one per operation).
 */

import { S3Error } from '../errors.js';

/** Bucket-level sub-resources (a bucket with no key). `tagging` here is bucket tagging. */
export const BUCKET_NOT_IMPLEMENTED: ReadonlySet<string> = new Set([
  'abac',
  'accelerate',
  'analytics',
  'intelligent-tiering',
  'inventory',
  'logging',
  'metadataAnnotationTable',
  'metadataConfiguration',
  'metadataInventoryTable',
  'metadataJournalTable',
  'metadataTable',
  'metrics',
  'notification',
  'replication',
  'requestPayment',
  'session',
  'website',
]);

/**
 * Object-level sub-resources (`tagging` and GET `attributes` on objects are implemented).
 * `encryption` on an object is UpdateObjectEncryption (PUT) and `annotation` the object
 * annotations (PUT/GET/DELETE): unlisted, a PUT would overwrite the object with the
 * request's XML and a DELETE delete it.
 */
export const OBJECT_NOT_IMPLEMENTED: ReadonlySet<string> = new Set([
  'annotation',
  'encryption',
  'renameObject',
  'restore',
  'select',
  'torrent',
]);

/**
 * Request headers that ask for a feature Strata does not implement, by the operations they
 * would change: answering 200 while ignoring them would tell the client it got what it asked
 * for. (The Object Lock headers are honoured: object-lock-headers.ts.)
 */
export const OBJECT_WRITE_HEADERS_NOT_IMPLEMENTED: readonly string[] = [
  // An append (S3 Express): ignored, the PUT would replace the object with the appended bytes.
  'x-amz-write-offset-bytes',
];

/**
 * Throws S3Error `NotImplemented` naming the first header of `names` the request carries.
 * Handlers call it after authorization and before anything is read or written.
 */
export function refuseHeaders(names: readonly string[], headers: Readonly<Record<string, string | undefined>>): void {
  for (const n of names) {
    const v = headers[n];
    if (v === undefined) continue;
    throw new S3Error('NotImplemented', `The header ${n} asks for a feature that is not implemented`);
  }
}

/** The first name of `names` found in `set`, or undefined. */
export function firstIn(set: ReadonlySet<string>, names: Iterable<string>): string | undefined {
  for (const n of names) if (set.has(n)) return n;
  return undefined;
}
