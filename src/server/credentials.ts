/**
 * @module Access keys. Given ones (env/config) are used as they are; otherwise the first
 * start generates a pair, stores it next to the data (mode 0600) and prints it once.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Credentials } from './config.js';

export const CREDENTIALS_FILE = 'strata-credentials.json';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function generate(): Credentials {
  const id = Array.from(randomBytes(16), (b) => ALNUM[b % ALNUM.length]).join('');
  return { accessKeyId: `STRATA${id}`, secretAccessKey: randomBytes(30).toString('base64url') };
}

/**
 * The credentials to accept. For a local data directory without given credentials, reads
 * `<dir>/strata-credentials.json`, creating it on the first start; `created` tells the
 * caller to print the new pair (once).
 */
export function loadCredentials(given: Credentials[] | undefined, localDir: string | undefined): { list: Credentials[]; created: boolean } {
  if (given?.length) return { list: given, created: false };
  if (!localDir) throw new Error('set STRATA_ACCESS_KEY / STRATA_SECRET_KEY (or a config file) when the data is not a local directory');
  const file = join(localDir, CREDENTIALS_FILE);
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Credentials;
    if (!parsed.accessKeyId || !parsed.secretAccessKey) throw new Error(`${file} lacks accessKeyId/secretAccessKey`);
    return { list: [parsed], created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const pair = generate();
  mkdirSync(localDir, { recursive: true });
  writeFileSync(file, `${JSON.stringify(pair, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return { list: [pair], created: true };
}
