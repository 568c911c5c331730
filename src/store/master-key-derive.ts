/**
 * @module The master key's shape and the one way keys are derived from it, shared by the
 * store (sealing access keys' secrets) and the S3 layer (the SSE-S3 root key). Where the
 * master key comes from (environment, key file, generated) is the server's business
 * (server/master-key.ts); this file only uses the bytes.
 */
import { hkdfSync } from 'node:crypto';

export interface MasterKey {
  /** The 32 key bytes. Never logged, never written into the repository. */
  readonly key: Buffer;
  /** Public fingerprint (16 hex chars of SHA-256 over a fixed label and the key), safe to log. */
  readonly id: string;
  /** Where it came from: 'env', or the key file's path. */
  readonly source: string;
}

/**
 * A key for one purpose (e.g. 'strata/keys/seal/v1', 'strata/sse-s3/v1'): HKDF-SHA256 of
 * the master key with `purpose` as info. Pure; the same inputs always give the same bytes.
 */
export function deriveKey(master: MasterKey, purpose: string, length = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', master.key, 'strata', purpose, length));
}
