/**
 * @module Bootstrap access keys at start-up. Keys live in the repository (store/keys.ts);
 * what the environment or the config file names is ENSURED there: created if absent (admin
 * unless the entry says `"admin": false`), its secret checked if present, never re-created
 * once deleted (a warning says so). Without given
 * credentials, a local data directory keeps today's behaviour: the first start of an empty
 * repository generates an admin pair, stores it next to the data (mode 0600) and prints it
 * once; later starts ensure that pair.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Credentials } from './config.js';
import { generateKeyId, generateSecret, type KeyRegistry } from '../store/keys-registry.js';
import { checkKeyId, checkKeyName, checkSecret } from '../store/keys-record.js';
import { createFileDurably } from './durable-file.js';

export const CREDENTIALS_FILE = 'strata-credentials.json';

export interface BootstrapResult {
  /** The keys ensured, in the order given (the first is the one a start-up message names); deleted keys left out. */
  list: Credentials[];
  /** A pair was generated on this start (print it once). */
  created: boolean;
  /** Warnings to log: configured capabilities that differ from the stored key's. */
  warnings: string[];
}

function readPair(file: string): Credentials | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const parsed = JSON.parse(text) as Credentials;
  if (typeof parsed?.accessKeyId !== 'string' || typeof parsed.secretAccessKey !== 'string') {
    throw new Error(`${file} lacks accessKeyId/secretAccessKey`);
  }
  return parsed;
}

/**
 * Ensures the start-up keys in `registry` (see the module header). Creates keys (commits)
 * and, for a fresh local repository, `<localDir>/strata-credentials.json` (written BEFORE
 * the key is committed, so a crash in between is repaired by the next start). Throws Error
 * when a given secret differs from the stored one, when a repository that is not a local
 * directory has no key and none is given, and for an unreadable credentials file.
 */
export async function bootstrapKeys(registry: KeyRegistry, given: Credentials[] | undefined, localDir: string | undefined): Promise<BootstrapResult> {
  const warnings: string[] = [];
  /** Ensures `list`; returns the entries that are keys now (a deleted key is not brought back). */
  const ensureAll = async (list: Credentials[]): Promise<Credentials[]> => {
    const live: Credentials[] = [];
    for (const c of list) {
      const options = { admin: c.admin ?? true, ...(c.name !== undefined ? { name: c.name } : {}), ...(c.createBucket !== undefined ? { createBucket: c.createBucket } : {}) };
      const { differs, deleted } = await registry.ensure(c.accessKeyId, c.secretAccessKey, options);
      if (deleted) {
        warnings.push(`access key ${c.accessKeyId} was deleted from the repository and is not re-created: remove it from the configuration (or create it again with strata keys create --id ${c.accessKeyId})`);
        continue;
      }
      live.push(c);
      if (differs.length) warnings.push(`access key ${c.accessKeyId}: the configured ${differs.join(', ')} differ(s) from the repository's, which stays in force (change it with strata keys grant/revoke)`);
    }
    return live;
  };
  if (given?.length) {
    // All entries are checked before the first is stored: a bad one changes nothing.
    for (const c of given) {
      checkKeyId(c.accessKeyId);
      checkSecret(c.secretAccessKey);
      if (c.name !== undefined) checkKeyName(c.name);
    }
    return { list: await ensureAll(given), created: false, warnings };
  }
  const haveKeys = registry.store.listKeys().length > 0;
  if (!localDir) {
    if (haveKeys) return { list: [], created: false, warnings };
    throw new Error('set STRATA_ACCESS_KEY / STRATA_SECRET_KEY (or a config file) when the data is not a local directory and holds no key yet');
  }
  const file = join(localDir, CREDENTIALS_FILE);
  const stored = readPair(file);
  if (stored) {
    const live = await ensureAll([{ ...stored, admin: true }]);
    return { list: live.length ? [stored] : [], created: false, warnings };
  }
  if (haveKeys) return { list: [], created: false, warnings };
  const pair: Credentials = { accessKeyId: generateKeyId(), secretAccessKey: generateSecret() };
  mkdirSync(localDir, { recursive: true });
  createFileDurably(file, `${JSON.stringify(pair, null, 2)}\n`, 0o600);
  await registry.create({ id: pair.accessKeyId, secret: pair.secretAccessKey, admin: true });
  return { list: [pair], created: true, warnings };
}
