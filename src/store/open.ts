/**
 * @module Opening a store from a location: a directory (the embedded default, locked so
 * that one process writes it), `file://`, `memory:`, or an S3 URL (see provider/index.ts);
 * or, with an erasure set-up (provider/erasure/config.ts), the erasure provider over its
 * domains, each directory domain locked exclusively on its own (erasure-open.ts).
 */
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openProvider, type OpenProviderOptions } from '../provider/index.js';
import { acquireDirectoryLock, type DirectoryLock } from '../provider/fs/directory-lock.js';
import { createFsProvider } from '../provider/fs/index.js';
import { handleBudget } from '../provider/fs/fd-budget.js';
import type { Provider } from '../provider/provider.js';
import type { ErasureConfig } from '../provider/erasure/types.js';
import { openErasureLocation } from './erasure-open.js';
import { Store, type StoreOptions } from './store.js';

/** The directory a location names, if it is a local one. */
export function localDirectory(location: string): string | undefined {
  if (location.startsWith('file:')) return fileURLToPath(location);
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(location) && !(location.length > 1 && location[1] === ':' && isAbsolute(location))) return undefined;
  return resolve(location);
}

/**
 * The local directory that holds a repository's side files (generated credentials, the
 * running server's address, the default master key beside it): the location's directory, or
 * for an erasure set the first directory domain. Undefined when there is none (URLs only).
 */
export function homeDirectory(location: string, erasure?: ErasureConfig): string | undefined {
  if (!erasure) return localDirectory(location);
  for (const d of erasure.domains) {
    const dir = localDirectory(d.url);
    if (dir) return dir;
  }
  return undefined;
}

/**
 * Opens the provider for `location`; a local directory is exclusively locked first. With
 * `erasure`, opens its domains instead (`location` only names the set in messages): see
 * openErasureLocation.
 */
export async function openLocation(
  location: string,
  options: OpenProviderOptions = {},
  erasure?: ErasureConfig,
  log?: (event: string, fields: Record<string, unknown>) => void
): Promise<{ provider: Provider; release: () => Promise<void> }> {
  if (erasure) return openErasureLocation(erasure, options, log);
  const { provider, lock } = await openExclusive(location, options, handleBudget(1));
  return {
    provider,
    release: async () => {
      await provider.close();
      await lock?.release();
    },
  };
}

/**
 * Opens one location for writing: a local directory under its exclusive lock (given back when
 * its provider cannot be made), with `handles` as its fs provider's descriptor budget; or the
 * provider of a URL. Throws what either throws. (A plain location, or one domain of an erasure
 * set: erasure-open.ts.)
 */
export async function openExclusive(
  location: string,
  options: OpenProviderOptions,
  handles?: ReturnType<typeof handleBudget> & { handleWaitMs?: number }
): Promise<{ provider: Provider; lock?: DirectoryLock }> {
  const dir = localDirectory(location);
  if (!dir) return { provider: await openProvider(location, options) };
  const lock = await acquireDirectoryLock(dir);
  try {
    // Holding the directory lock, the fs provider may skip cross-process key locks.
    return { provider: await createFsProvider({ dir, exclusive: true, directWrites: options.directWrites ?? false, ...handles }), lock };
  } catch (err) {
    await lock.release().catch(() => undefined);
    throw err;
  }
}

/** Opens a Store on `location` (or on the erasure set `options.erasure`); closing it releases
 * the provider and the directory locks. */
export async function openStore(
  location: string,
  options: StoreOptions & { provider?: OpenProviderOptions; erasure?: ErasureConfig } = {}
): Promise<Store> {
  const { provider, release } = await openLocation(location, options.provider, options.erasure, options.log);
  try {
    return await Store.open(provider, options, release);
  } catch (err) {
    await release();
    throw err;
  }
}
