/**
 * @module CopyObject when the copy changes how the body is encrypted (plain -> SSE-S3,
 * SSE-C -> SSE-C under another key, SSE-S3 -> plain, ...): the source is read (opened with
 * its key, segment by segment) and written again as a new body under the destination's
 * key, through the ordinary PUT pipeline — same admission, digests, bounded memory (a few
 * segments at a time), commit and preconditions.
 *
 * A copy that keeps the encryption (plain -> plain, SSE-S3 -> SSE-S3, SSE-C -> SSE-C with
 * the same key) stays metadata-only (objects-misc.ts): the new version shares the body.
 */
import type { BudgetAccount } from './budget.js';
import type { Repository } from './repository.js';
import { readBody } from './body-reader.js';
import { putObject, type ObjectMetadata } from './objects-write.js';
import type { BodyDecryptor } from './crypto/body-crypto.js';
import { unwrapDataKey, type EncryptionRequest } from './crypto/envelope.js';
import type { WriteConditions } from './conditions.js';
import type { ChecksumName, ObjectVersion } from './records.js';

/** Whether copying `source` to a destination encrypted as `dest` (undefined: plaintext) must rewrite the body. Pure. */
export function copyNeedsReencryption(source: ObjectVersion, dest: EncryptionRequest | undefined): boolean {
  const e = source.encryption;
  if (!dest) return e !== undefined;
  if (!e || e.mode !== dest.mode) return true;
  // Same mode: same root key (the server's for SSE-S3, the customer's for SSE-C) keeps the body.
  return unwrapDataKey(e, dest.root) === undefined;
}

/**
 * Writes `source`'s body (decrypted by `decrypt`, or as stored when plaintext) to
 * dst.bucket/dst.key as a new single-part object encrypted per `encryption`, with `meta`,
 * hashed with `checksumAlgorithm` (default: the source's primary algorithm).
 * Throws what putObject throws (NoSuchBucket, PreconditionFailed, SlowDown, ...) and
 * StoreError 'Corrupt' if a source segment fails to verify; nothing is committed then.
 */
export async function copyWithReencryption(
  repo: Repository,
  source: ObjectVersion,
  decrypt: BodyDecryptor | undefined,
  dst: { bucket: string; key: string },
  meta: ObjectMetadata,
  opts: { encryption?: EncryptionRequest; conditions?: WriteConditions; checksumAlgorithm?: ChecksumName; budget?: BudgetAccount }
): Promise<ObjectVersion> {
  const body = readBody(repo.provider, source.location, source.size, undefined, repo.bodies, decrypt);
  const primary = opts.checksumAlgorithm ?? source.checksums?.primary;
  const res = await putObject(repo, dst.bucket, dst.key, body, {
    ...meta,
    size: source.size,
    ...(primary && primary !== 'crc64nvme' ? { checksumAlgorithm: primary } : {}),
    ...(opts.conditions ? { conditions: opts.conditions } : {}),
    ...(opts.encryption ? { encryption: opts.encryption } : {}),
    ...(opts.budget ? { budget: opts.budget } : {}),
  });
  return res.version;
}
