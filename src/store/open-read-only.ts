/**
 * @module Opening a repository to READ it only (`strata verify`): no directory lock, no
 * directory created, no temp or lock debris cleaned, no conditional-write probe written to an
 * S3 bucket. A local directory that does not exist, or holds no repository, is refused before
 * anything else happens.
 *
 * Taking no lock means a reader can run beside the server that owns the repository. That is
 * sound while blobs are immutable once written and none that a commit refers to is deleted
 * (true today: there is no GC): the reader checks the state as of the anchor it reads first,
 * and writes after it only add blobs. A concurrent writer's failed upload may delete chunk
 * blobs it never committed; readers must treat a listed blob that vanished as absent.
 */
import { statSync } from 'node:fs';
import { FsProvider } from '../provider/fs/index.js';
import { DIRECTORY_LOCK_NAME } from '../provider/fs/directory-lock.js';
import { isStale, readLockOwner, type LockOwner } from '../provider/fs/lock-file.js';
import { openProvider } from '../provider/index.js';
import { ProviderError, type Provider } from '../provider/provider.js';
import { ANCHOR_KEY, CONFIG_KEY } from './layout.js';
import { localDirectory } from './open.js';
import { openErasureReadOnly } from './erasure-open.js';
import type { ErasureConfig } from '../provider/erasure/types.js';

/** The location cannot be read as a repository at all (exit 2 in `strata verify`). */
export class NotARepositoryError extends Error {
  override readonly name = 'NotARepositoryError';
}

export interface ReadOnlyRepository {
  provider: Provider;
  /** The live process holding a local repository's lock, if one does. */
  liveOwner?: LockOwner;
  close(): Promise<void>;
}

async function exists(provider: Provider, key: string): Promise<boolean> {
  try {
    await provider.head(key);
    return true;
  } catch (err) {
    if (err instanceof ProviderError && err.code === 'NotFound') return false;
    throw err;
  }
}

/**
 * Opens `location` (or the erasure set `erasure`) for reading. Writes nothing anywhere. Throws
 * NotARepositoryError for a missing path, a non-directory, or a location without a Strata
 * anchor or configuration; provider errors (unreachable S3, permissions) propagate.
 */
export async function openReadOnly(location: string, erasure?: ErasureConfig): Promise<ReadOnlyRepository> {
  const dir = erasure ? undefined : localDirectory(location);
  let provider: Provider;
  let liveOwner: LockOwner | undefined;
  if (erasure) {
    provider = await openErasureReadOnly(erasure);
    for (const d of erasure.domains) {
      const domainDir = localDirectory(d.url);
      const owner = domainDir ? await readLockOwner(`${domainDir}/${DIRECTORY_LOCK_NAME}`).catch(() => undefined) : undefined;
      if (owner && !isStale(owner)) {
        liveOwner = owner;
        break;
      }
    }
  } else if (dir !== undefined) {
    let isDir = false;
    try {
      isDir = statSync(dir).isDirectory();
    } catch (err) {
      throw new NotARepositoryError(
        `${dir}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such directory' : (err as Error).message}`
      );
    }
    if (!isDir) throw new NotARepositoryError(`${dir} is not a directory`);
    provider = new FsProvider(dir, false); // no init(): it would create and clean
    const owner = await readLockOwner(`${dir}/${DIRECTORY_LOCK_NAME}`).catch(() => undefined);
    if (owner && !isStale(owner)) liveOwner = owner;
  } else {
    // No probe: it would write a test object into the bucket.
    provider = await openProvider(location, { s3: { conditionalWrites: false } });
  }
  try {
    if (!(await exists(provider, ANCHOR_KEY)) && !(await exists(provider, CONFIG_KEY))) {
      throw new NotARepositoryError(
        `${location} holds no Strata repository (no ${ANCHOR_KEY}, no ${CONFIG_KEY})`
      );
    }
  } catch (err) {
    await provider.close();
    throw err;
  }
  return { provider, ...(liveOwner ? { liveOwner } : {}), close: () => provider.close() };
}
