/** @module The owner S3 reports for buckets and objects: the requesting access key. */
import type { RequestContext } from './context.js';
import type { OwnerInfo } from './xml/owner.js';

export function ownerOf(r: RequestContext): OwnerInfo {
  const id = r.auth?.accessKeyId ?? 'strata';
  return { id, displayName: id };
}
