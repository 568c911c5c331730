/**
 * @module Opening an erasure set: every domain of the configuration becomes a child provider
 * (a directory domain: the fs provider under its own exclusive directory lock, so no second
 * process writes any of the set; a URL domain: provider/index.ts openProvider), and the
 * erasure provider (provider/erasure/index.ts, createErasureProvider) is built over them.
 * A read-only variant (`strata verify`) takes no lock and creates nothing.
 */
import { acquireDirectoryLock, type DirectoryLock } from '../provider/fs/directory-lock.js';
import { createFsProvider, FsProvider } from '../provider/fs/index.js';
import { openProvider, type OpenProviderOptions } from '../provider/index.js';
import type { Provider } from '../provider/provider.js';
import type { Domain, ErasureConfig, ErasureProvider } from '../provider/erasure/types.js';
import { localDirectory } from './open.js';

type CreateErasureProvider = (options: { config: ErasureConfig; domains: Domain[] }) => Promise<ErasureProvider>;

/** The erasure provider's module, loaded when a set is opened (plain repositories never pay
 * for the codec and its wasm). */
async function erasureFactory(): Promise<CreateErasureProvider> {
  // TODO(merge): a plain import('../provider/erasure/index.js') once ec-core's module is on main.
  const path = '../provider/erasure/index.js';
  const mod = (await import(path)) as { createErasureProvider: CreateErasureProvider };
  return mod.createErasureProvider;
}

/** One line for the start-up log: what the set is and what single-writer means. */
export function erasureBanner(c: ErasureConfig): string {
  return `erasure ${c.k}+${c.m} over ${c.domains.length} domains; single-writer: this repository must be served by one process`;
}

/** Closes what was opened so far, newest first, ignoring failures (the first error wins). */
async function undo(providers: Provider[], locks: DirectoryLock[]): Promise<void> {
  for (const p of providers.reverse()) await p.close().catch(() => undefined);
  for (const l of locks.reverse()) await l.release().catch(() => undefined);
}

/**
 * Opens the domains of `config` for writing and builds the erasure provider. Each directory
 * domain is created if missing and locked exclusively (a second server or admin verb on any
 * domain of the set gets ProviderError 'Locked'); URL domains open with `options` (s3
 * credentials and settings). `release` closes the provider (and so every child) and drops
 * the locks. Throws what opening a domain throws ('Locked', 'Io') or what
 * createErasureProvider throws, after undoing everything it opened.
 */
export async function openErasureLocation(
  config: ErasureConfig,
  options: OpenProviderOptions = {}
): Promise<{ provider: Provider; release: () => Promise<void> }> {
  const locks: DirectoryLock[] = [];
  const children: Provider[] = [];
  let provider: ErasureProvider;
  try {
    const domains: Domain[] = [];
    for (const d of config.domains) {
      const dir = localDirectory(d.url);
      let child: Provider;
      if (dir) {
        locks.push(await acquireDirectoryLock(dir));
        // Holding the directory lock, the fs provider may skip cross-process key locks.
        child = await createFsProvider({ dir, exclusive: true });
      } else child = await openProvider(d.url, options);
      children.push(child);
      domains.push({ id: d.id, labels: d.labels, provider: child });
    }
    provider = await (await erasureFactory())({ config, domains });
  } catch (err) {
    await undo(children, locks);
    throw err;
  }
  return {
    provider,
    release: async () => {
      try {
        await provider.close();
      } finally {
        for (const l of locks.reverse()) await l.release().catch(() => undefined);
      }
    },
  };
}

/**
 * Opens the domains of `config` to read only: no lock, no directory created, no clean-up, no
 * conditional-write probe. Throws what createErasureProvider throws.
 */
export async function openErasureReadOnly(config: ErasureConfig): Promise<Provider> {
  const children: Provider[] = [];
  try {
    const domains: Domain[] = [];
    for (const d of config.domains) {
      const dir = localDirectory(d.url);
      let child: Provider;
      // No init(): it would create and clean. A missing directory reads as an empty domain
      // (its fragments count as missing), so a set with up to m domains lost can be verified.
      if (dir) child = new FsProvider(dir, false);
      else child = await openProvider(d.url, { s3: { conditionalWrites: false } });
      children.push(child);
      domains.push({ id: d.id, labels: d.labels, provider: child });
    }
    return await (await erasureFactory())({ config, domains });
  } catch (err) {
    await undo(children, []);
    throw err;
  }
}
