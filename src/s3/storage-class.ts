/**
 * @module `x-amz-storage-class` on the requests that write an object (PutObject, CopyObject,
 * CreateMultipartUpload, a POST Object form): Strata keeps every object in one class,
 * STANDARD, and reports it so. A request naming another class asks for a durability or a
 * retrieval contract Strata does not provide (REDUCED_REDUNDANCY, GLACIER, ...): it is
 * refused before anything is written, never stored as STANDARD while the client believes
 * otherwise.
 */
import { S3Error } from './errors.js';

/** The only class objects are stored in (and the one s3cmd sends on every upload). */
export const STORAGE_CLASS = 'STANDARD';

/** The classes S3 defines (API reference, `StorageClass`): known, but not offered here. */
const S3_STORAGE_CLASSES: ReadonlySet<string> = new Set([
  'AWS_BACKUP_LOW_COST_WARM',
  'AWS_BACKUP_WARM',
  'DEEP_ARCHIVE',
  'EXPRESS_ONEZONE',
  'FSX_ONTAP',
  'FSX_OPENZFS',
  'GLACIER',
  'GLACIER_IR',
  'INTELLIGENT_TIERING',
  'ONEZONE_IA',
  'OUTPOSTS',
  'REDUCED_REDUNDANCY',
  'SNOW',
  'STANDARD_IA',
]);

/**
 * Checks the `x-amz-storage-class` of a header record (absent or STANDARD pass). Pure.
 * Throws S3Error `NotImplemented` (501) for another class S3 defines, `InvalidStorageClass`
 * (400, as S3 answers) for a value S3 does not know.
 */
export function checkStorageClass(h: Readonly<Record<string, string | undefined>>): void {
  const raw = h['x-amz-storage-class'];
  if (raw === undefined) return;
  const v = raw.trim();
  if (v === STORAGE_CLASS) return;
  if (S3_STORAGE_CLASSES.has(v)) {
    throw new S3Error('NotImplemented', `Storage class ${v} is not offered: every object is stored as ${STORAGE_CLASS}.`);
  }
  throw new S3Error('InvalidStorageClass', undefined, { StorageClassRequested: raw.slice(0, 64) });
}
