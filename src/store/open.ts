/**
 * @module Opening a store from a location: a directory (the embedded default, locked so
 * that one process writes it), `file://`, `memory:`, or an S3 URL (see provider/index.ts).
 */
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openProvider, type OpenProviderOptions } from '../provider/index.js';
import { acquireDirectoryLock } from '../provider/fs/directory-lock.js';
import { createFsProvider } from '../provider/fs/index.js';
import type { Provider } from '../provider/provider.js';
import { Store, type StoreOptions } from './store.js';

/** The directory a location names, if it is a local one. */
export function localDirectory(location: string): string | undefined {
  if (location.startsWith('file:')) return fileURLToPath(location);
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(location) && !(location.length > 1 && location[1] === ':' && isAbsolute(location))) return undefined;
  return resolve(location);
}

/** Opens the provider for `location`; a local directory is exclusively locked first. */
export async function openLocation(location: string, options: OpenProviderOptions = {}): Promise<{ provider: Provider; release: () => Promise<void> }> {
  const dir = localDirectory(location);
  const lock = dir ? await acquireDirectoryLock(dir) : undefined;
  try {
    // Holding the directory lock, the fs provider may skip cross-process key locks.
    const provider = dir ? await createFsProvider({ dir, exclusive: true }) : await openProvider(location, options);
    return {
      provider,
      release: async () => {
        await provider.close();
        await lock?.release();
      },
    };
  } catch (err) {
    await lock?.release();
    throw err;
  }
}

/** Opens a Store on `location`; closing it releases the provider and the directory lock. */
export async function openStore(location: string, options: StoreOptions & { provider?: OpenProviderOptions } = {}): Promise<Store> {
  const { provider, release } = await openLocation(location, options.provider);
  try {
    return await Store.open(provider, options, release);
  } catch (err) {
    await release();
    throw err;
  }
}
