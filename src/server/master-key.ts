/**
 * @module The server's master key: the one secret that seals what the repository must not
 * hold in plain text (access keys' secrets, SSE-S3 data keys). It is kept OUTSIDE the
 * repository, so a copy of the repository (a backup, a stolen disk, a shared S3 cluster)
 * carries nothing that opens it.
 *
 * Sources, first found wins:
 *   1. `STRATA_MASTER_KEY`: the 32 key bytes as 64 hex characters or base64;
 *   2. a key file (`--master-key-file` / `STRATA_MASTER_KEY_FILE`): the same text, mode 0600;
 *   3. for a local data directory only: `<data>.master-key` NEXT TO the directory (not in it),
 *      generated on the first start (mode 0600) and reused afterwards.
 * A repository on an S3 URL gets no generated key: configure one (1 or 2).
 *
 * Purposes never share bytes: each use derives its own key with HKDF-SHA256
 * ({@link deriveKey}), so a key sealed for one purpose cannot be replayed for another.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { MasterKey } from '../store/master-key-derive.js';
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { createFileDurably } from './durable-file.js';

/** Master key length: AES-256 / HMAC-SHA256 strength. */
export const MASTER_KEY_BYTES = 32;

export type { MasterKey } from '../store/master-key-derive.js';
export { deriveKey } from '../store/master-key-derive.js';

/** Parses the key text (64 hex characters or base64 of 32 bytes); throws Error with `what` on bad input. */
export function parseMasterKey(text: string, what: string): Buffer {
  const t = text.trim();
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(t)) key = Buffer.from(t, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(t)) key = Buffer.from(t, t.includes('-') || t.includes('_') ? 'base64url' : 'base64');
  if (!key || key.length !== MASTER_KEY_BYTES) {
    throw new Error(`${what}: a master key is ${MASTER_KEY_BYTES} bytes written as 64 hex characters or base64`);
  }
  return key;
}

function fingerprint(key: Buffer): string {
  return createHash('sha256').update('strata master key id\0').update(key).digest('hex').slice(0, 16);
}

/** The default key file of a local data directory: beside it, never inside it. */
export function defaultMasterKeyFile(dataDir: string): string {
  const abs = resolve(dataDir);
  return join(dirname(abs), `${basename(abs)}.master-key`);
}

export interface MasterKeySources {
  /** `STRATA_MASTER_KEY`'s value. */
  value?: string;
  /** An explicit key file (must exist). */
  file?: string;
  /** The local data directory, when the repository is one (enables the generated default). */
  dataDir?: string;
}

/**
 * Loads the master key. Reads the sources described in the module header; for a local data
 * directory without a configured key, creates `<data>.master-key` (mode 0600, exclusive
 * create) on first use. Returns undefined when no source applies (an S3 repository without
 * a configured key). Throws Error for an unreadable or malformed key, or a key file that
 * group or others can read.
 */
export function loadMasterKey(src: MasterKeySources): { masterKey?: MasterKey; created: boolean } {
  if (src.value !== undefined && src.value !== '') {
    const key = parseMasterKey(src.value, 'STRATA_MASTER_KEY');
    return { masterKey: { key, id: fingerprint(key), source: 'env' }, created: false };
  }
  const file = src.file ?? (src.dataDir !== undefined ? defaultMasterKeyFile(src.dataDir) : undefined);
  if (file === undefined) return { created: false };
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || src.file !== undefined) {
      throw new Error(`cannot read master key file ${file}: ${(err as Error).message}`);
    }
  }
  if (text !== undefined) {
    if ((statSync(file).mode & 0o077) !== 0) {
      throw new Error(`master key file ${file} is readable by group or others: chmod 600 it`);
    }
    const key = parseMasterKey(text, file);
    return { masterKey: { key, id: fingerprint(key), source: file }, created: false };
  }
  const key = randomBytes(MASTER_KEY_BYTES);
  createFileDurably(file, `${key.toString('hex')}\n`, 0o600);
  return { masterKey: { key, id: fingerprint(key), source: file }, created: true };
}
