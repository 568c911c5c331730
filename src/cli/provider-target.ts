/**
 * @module Where `strata scrub` and `strata domains` act: like admin-target.ts, but a local
 * repository is opened at the provider level only (its directory locks), not as a Store — a
 * scrub must work on a repository too damaged to open (a lost anchor is exactly what it
 * reports), and it needs nothing the Store keeps.
 *
 *   --endpoint URL        through the server at URL (its admin API)
 *   --data LOCATION       the stopped repository directly (with --erasure k+m or the config
 *                         file's erasure section: the set of domains it names); while a server
 *                         holds its lock, through that server (its address is in
 *                         strata-server.json of the data directory, or of the first domain)
 *   --data URL --offline  a repository that is not local (S3 children), no server on it
 */
import { openLocation } from '../store/open.js';
import { ProviderError, type Provider } from '../provider/provider.js';
import { readEndpointFile } from '../server/endpoint-file.js';
import type { AdminClientOptions } from '../admin/client.js';
import { UsageError } from './args.js';
import { locateTarget, remoteCredentials, type TargetOptions } from './admin-target.js';

export type ProviderTarget = { where: string; close(): Promise<void> } & ({ provider: Provider; remote?: undefined } | { provider?: undefined; remote: AdminClientOptions });

/**
 * Opens where `o` says (see the module note), reporting each choice on `progress`. Throws
 * UsageError (exit 2) for a bad --endpoint, a missing directory, missing credentials, a locked
 * repository without a known server; and what opening the provider throws. `open.directWrites`:
 * a directory (or directory domain) writes bulk blobs with O_DIRECT where it takes it.
 */
export async function openProviderTarget(o: TargetOptions, env: NodeJS.ProcessEnv, progress: (line: string) => void, open: { directWrites?: boolean } = {}): Promise<ProviderTarget> {
  const location = o.data;
  const { erasure, dir, endpoint } = await locateTarget(o, env);
  const remote = (opts: AdminClientOptions): ProviderTarget => ({ where: `server ${opts.endpoint}`, remote: opts, close: async () => undefined });
  if (endpoint) return remote(endpoint);
  try {
    const { provider, release } = await openLocation(location, open, erasure);
    progress(`opened ${location} (${provider.kind} provider)`);
    return { where: `repository ${location}`, provider, close: release };
  } catch (err) {
    if (!(err instanceof ProviderError && err.code === 'Locked') || !dir) throw err;
    const running = readEndpointFile(dir);
    if (!running) throw new UsageError(`${err.message}; pass --endpoint URL of that server to act through it`);
    progress(`a server holds the repository: acting through ${running.url}`);
    return remote({ endpoint: running.url, credentials: remoteCredentials(o, dir, env), region: o.region });
  }
}
