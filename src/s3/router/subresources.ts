/**
 * @module Sub-resources Strata recognises but does not implement: requests naming them get
 * `501 NotImplemented` (clients then fail fast and legibly) instead of being mistaken for
 * the plain operation — `PUT /b?versioning` must not create a bucket, `GET /b/k?acl` must
 * not return the object. Names are S3's query parameters (API reference, one per operation).
 */

/** Bucket-level sub-resources (a bucket with no key). `tagging` here is bucket tagging. */
export const BUCKET_NOT_IMPLEMENTED: ReadonlySet<string> = new Set([
  'accelerate',
  'acl',
  'analytics',
  'intelligent-tiering',
  'inventory',
  'lifecycle',
  'logging',
  'metadataConfiguration',
  'metadataTable',
  'metrics',
  'notification',
  'object-lock',
  'ownershipControls',
  'policy',
  'policyStatus',
  'publicAccessBlock',
  'replication',
  'requestPayment',
  'session',
  'tagging',
  'versioning',
  'versions',
  'website',
]);

/** Object-level sub-resources (`tagging` and GET `attributes` on objects are implemented). */
export const OBJECT_NOT_IMPLEMENTED: ReadonlySet<string> = new Set([
  'acl',
  'legal-hold',
  'renameObject',
  'restore',
  'retention',
  'select',
  'torrent',
]);

/** The first name of `names` found in `set`, or undefined. */
export function firstIn(set: ReadonlySet<string>, names: Iterable<string>): string | undefined {
  for (const n of names) if (set.has(n)) return n;
  return undefined;
}
