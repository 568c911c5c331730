/**
 * @module Opening an erasure set: every domain of the configuration becomes a child provider
 * (a directory domain: the fs provider under its own exclusive directory lock, so no second
 * process writes any of the set; a URL domain: provider/index.ts openProvider), and the
 * erasure provider (provider/erasure/index.ts, createErasureProvider) is built over them.
 * A read-only variant (`strata verify`) takes no lock and creates nothing.
 */
import type { DirectoryLock } from '../provider/fs/directory-lock.js';
import { FsProvider } from '../provider/fs/index.js';
import { handleBudget } from '../provider/fs/fd-budget.js';
import { HANDLE_WAIT_MS } from '../provider/fs/handle-cache.js';
import { openProvider, type OpenProviderOptions } from '../provider/index.js';
import { ProviderError, type Provider } from '../provider/provider.js';
import type { Domain, ErasureConfig, ErasureProvider } from '../provider/erasure/types.js';
import { localDirectory, openExclusive } from './open.js';

/** The erasure provider's module, loaded when a set is opened (plain repositories never pay
 * for loading the provider). */
async function erasureFactory(): Promise<typeof import('../provider/erasure/index.js').createErasureProvider> {
  return (await import('../provider/erasure/index.js')).createErasureProvider;
}

/** One line for the start-up log: what the set is and what single-writer means. */
export function erasureBanner(c: ErasureConfig): string {
  return `erasure ${c.k}+${c.m} over ${c.domains.length} domains; single-writer: this repository must be served by one process`;
}

/**
 * Stands in for a domain that could not be opened at start (a dead disk, a path that is now a
 * file, no permission): every call fails with ProviderError 'Unavailable' naming the domain
 * and why, so the erasure provider counts it as failed (reads rebuild around it, writes go
 * elsewhere or are refused) until the next start opens it again.
 */
class UnopenedDomain implements Provider {
  readonly kind = 'unopened';
  readonly capabilities = { conditionalWrites: false, sortedList: true };
  readonly #error: ProviderError;
  constructor(id: string, url: string, cause: unknown) {
    this.#error = new ProviderError('Unavailable', `domain ${id} (${url}) could not be opened: ${(cause as Error).message}`, { cause });
  }
  put(): Promise<never> {
    return Promise.reject(this.#error);
  }
  get(): Promise<never> {
    return Promise.reject(this.#error);
  }
  head(): Promise<never> {
    return Promise.reject(this.#error);
  }
  list(): Promise<never> {
    return Promise.reject(this.#error);
  }
  delete(): Promise<never> {
    return Promise.reject(this.#error);
  }
  async close(): Promise<void> {}
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
 * credentials and settings). A domain that fails to open for another reason (I/O, permission,
 * an unreachable endpoint) is handed over as failed and reported on `log`, as long as at most
 * m domains are: the set serves degraded, as it would after losing them while running. More
 * than m throws ProviderError 'Unavailable' naming them. `release` closes the provider (and
 * so every child) and drops the locks. Throws 'Locked', or what createErasureProvider throws,
 * after undoing everything it opened.
 */
export async function openErasureLocation(
  config: ErasureConfig,
  options: OpenProviderOptions = {},
  log?: (event: string, fields: Record<string, unknown>) => void
): Promise<{ provider: Provider; release: () => Promise<void> }> {
  const locks: DirectoryLock[] = [];
  const children: Provider[] = [];
  // The directory domains' handle caches share the process's descriptor budget (fd-budget.ts):
  // at their defaults, 14 of them hold more than a 1,024-file limit.
  const local = config.domains.filter((d) => localDirectory(d.url) !== undefined).length;
  // A read waiting for a free handle gives up well inside the domain timeout, as EMFILE, which
  // does not count against the domain (handle-cache.ts).
  const handles = local > 0 ? { ...handleBudget(local), handleWaitMs: Math.min(HANDLE_WAIT_MS, config.domainTimeoutMs / 2) } : undefined;
  const unopened: string[] = [];
  let provider: ErasureProvider;
  // The provider's module loads while the domains open (it is not needed before).
  const factory = erasureFactory();
  factory.catch(() => undefined);
  try {
    // Every domain at once: each open waits on its own disk (a lock file, directories made and
    // synced, an O_DIRECT probe), 14 of them one after another took ~0.1 s of a scrub's start.
    const opened = await Promise.allSettled(config.domains.map((d) => openExclusive(d.url, options, handles)));
    for (const r of opened) {
      if (r.status !== 'fulfilled') continue;
      children.push(r.value.provider);
      if (r.value.lock) locks.push(r.value.lock);
    }
    const locked = opened.find((r) => r.status === 'rejected' && r.reason instanceof ProviderError && r.reason.code === 'Locked');
    if (locked) throw (locked as PromiseRejectedResult).reason;
    const domains: Domain[] = config.domains.map((d, i) => {
      const r = opened[i]!;
      if (r.status === 'fulfilled') return { id: d.id, labels: d.labels, provider: r.value.provider };
      const err = r.reason as Error;
      const child = new UnopenedDomain(d.id, d.url, err);
      children.push(child);
      unopened.push(`${d.id} (${err.message})`);
      log?.('erasure domain could not be opened: serving without it', { domain: d.id, url: d.url, error: err.message });
      return { id: d.id, labels: d.labels, provider: child };
    });
    if (unopened.length > config.m)
      throw new ProviderError('Unavailable', `erasure ${config.k}+${config.m}: ${unopened.length} domains could not be opened, more than m = ${config.m}: ${unopened.join('; ')}`);
    provider = await (await factory)({ config, domains });
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
