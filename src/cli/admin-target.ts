/**
 * @module Where an admin verb acts (`strata history`, `restore`, `history-window`): the
 * options that choose it, and opening it.
 *
 *   --endpoint URL           through the server at URL (its admin API, signed with an admin key
 *                            from --access-key/STRATA_ACCESS_KEY + STRATA_SECRET_KEY, or
 *                            <data>/strata-credentials.json)
 *   --data DIR (default)     the stopped repository directly (its directory lock); while a
 *                            server holds the lock, through that server (its address is in
 *                            <data>/strata-server.json)
 *   --data URL --offline     a repository that is not a local directory (an S3 URL), with the
 *                            operator's word that no server runs on it
 *
 * The same rules as `strata keys` and `strata fork`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, homeDirectory } from '../store/open.js';
import { erasureConfigFileOption, erasureOption, erasureSetupForVerb } from '../server/erasure-option.js';
import { ProviderError } from '../provider/provider.js';
import { StoreError } from '../store/errors.js';
import type { Store } from '../store/store.js';
import { CREDENTIALS_FILE } from '../server/credentials.js';
import { readEndpointFile } from '../server/endpoint-file.js';
import { AdminClientError, type AdminClientOptions } from '../admin/client.js';
import { AdminError } from '../admin/http.js';
import { UsageError } from './args.js';
import { defineOption, type OptionDef } from '../server/options.js';
import { booleanType, parseDuration, pathType, stringType } from '../server/option-types.js';
import { parseTimeText } from '../store/time-text.js';

/** The options every admin verb has. */
export interface TargetOptions {
  data: string;
  /** `--erasure k+m` and `--config` (its erasure section): an erasure set (server/erasure-option.ts). */
  erasure?: string;
  configFile?: string;
  endpoint?: string;
  accessKey?: string;
  region: string;
  offline?: boolean;
  json?: boolean;
}

const opt = <K extends keyof TargetOptions & string>(def: Parameters<typeof defineOption<TargetOptions, K>>[0]) => defineOption<TargetOptions, K>(def);

/** Their option table entries (a verb adds its own after them). */
export const TARGET_OPTIONS: OptionDef<TargetOptions>[] = [
  opt({ name: 'data', key: 'data', env: 'STRATA_DATA_DIR', type: pathType('<dir|url>'), default: './data', help: 'the repository' }),
  erasureOption<TargetOptions>(),
  erasureConfigFileOption<TargetOptions>(),
  opt({ name: 'endpoint', key: 'endpoint', env: 'STRATA_ENDPOINT', type: stringType({ placeholder: '<url>' }), help: 'act through the server at URL' }),
  opt({ name: 'access-key', key: 'accessKey', env: 'STRATA_ACCESS_KEY', type: stringType({ maxLength: 128, placeholder: '<id>' }), help: 'admin key for the server' }),
  opt({ name: 'region', key: 'region', type: stringType({ maxLength: 64, placeholder: '<name>' }), default: 'us-east-1', help: 'signing region' }),
  opt({ name: 'offline', key: 'offline', type: booleanType(), help: 'act on a repository that is not a local directory', from: { env: false, file: false } }),
  opt({ name: 'json', key: 'json', type: booleanType(), help: 'machine-readable output', from: { env: false, file: false } }),
];

/** The help section every admin verb shares. */
export const TARGET_NOTES = `where it acts: a stopped local repository directly (its lock); while a server holds it, that
server's admin API (address in <data>/strata-server.json; an admin key from STRATA_ACCESS_KEY/
STRATA_SECRET_KEY or <data>/strata-credentials.json); --endpoint URL always goes through the server
at URL.`;

/** An opened target: a local store, or a server's admin API. */
export type Target = { where: string; close(): Promise<void> } & ({ store: Store; remote?: undefined } | { store?: undefined; remote: AdminClientOptions });

/**
 * The admin key to reach a server with: --access-key / STRATA_ACCESS_KEY with STRATA_SECRET_KEY, else
 * the credentials file beside the data directory. Throws UsageError when neither gives one.
 */
export function remoteCredentials(o: { accessKey?: string }, dataDir: string | undefined, env: NodeJS.ProcessEnv): AdminClientOptions['credentials'] {
  const id = o.accessKey;
  const secret = env.STRATA_SECRET_KEY;
  if (id && secret) return { accessKeyId: id, secretAccessKey: secret };
  if (id) throw new UsageError('set STRATA_SECRET_KEY for the admin key given with --access-key / STRATA_ACCESS_KEY');
  const file = dataDir ? join(dataDir, CREDENTIALS_FILE) : undefined;
  if (file && existsSync(file)) {
    const c = JSON.parse(readFileSync(file, 'utf8')) as { accessKeyId?: string; secretAccessKey?: string };
    if (c.accessKeyId && c.secretAccessKey) return { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey };
  }
  throw new UsageError('no admin credentials for the server: set STRATA_ACCESS_KEY and STRATA_SECRET_KEY');
}

/**
 * The first step of every verb that acts on a repository: the server `--endpoint` names (with
 * its credentials), or else the local repository's erasure set-up and home directory. Opens
 * nothing. Throws UsageError for a bad --endpoint, a location that is neither local nor
 * `--offline`, and a local directory that does not exist.
 */
export async function locateTarget(
  o: TargetOptions,
  env: NodeJS.ProcessEnv
): Promise<{ erasure: Awaited<ReturnType<typeof erasureSetupForVerb>>; dir: string | undefined; endpoint?: AdminClientOptions }> {
  const location = o.data;
  const erasure = await erasureSetupForVerb(o);
  const dir = homeDirectory(location, erasure);
  if (o.endpoint) {
    if (!/^https?:\/\//.test(o.endpoint)) throw new UsageError(`--endpoint must be an http(s) URL (got ${o.endpoint})`);
    return { erasure, dir, endpoint: { endpoint: o.endpoint, credentials: remoteCredentials(o, dir, env), region: o.region } };
  }
  if (!dir && !o.offline) throw new UsageError(`${location} is not a local directory: use --endpoint URL of a server on it, or --offline if no server runs on it`);
  if (dir && !existsSync(dir)) throw new UsageError(`no Strata repository at ${dir} (no such directory)`);
  return { erasure, dir };
}

function remote(opts: AdminClientOptions): Target {
  return { where: `server ${opts.endpoint}`, remote: opts, close: async () => undefined };
}

/**
 * Opens where `o` says to act (see the module note), reporting each choice on `progress`.
 * Throws UsageError (exit 2) for a bad --endpoint, a missing repository, missing credentials,
 * a locked directory without a known server; and what opening the repository throws.
 */
export async function openTarget(o: TargetOptions, env: NodeJS.ProcessEnv, progress: (line: string) => void, storeOptions: { retentionMs?: number } = {}): Promise<Target> {
  const location = o.data;
  const { erasure, dir, endpoint } = await locateTarget(o, env);
  if (endpoint) return remote(endpoint);
  try {
    const store = await openStore(location, { ...storeOptions, create: false, ...(erasure ? { erasure } : {}) });
    progress(`opened repository ${location}`);
    return { where: `repository ${location}`, store, close: () => store.close() };
  } catch (err) {
    if (!(err instanceof ProviderError && err.code === 'Locked') || !dir) throw err;
    const running = readEndpointFile(dir);
    if (!running) throw new UsageError(`${err.message}; pass --endpoint URL of that server to act through it`);
    progress(`a server holds the repository: acting through ${running.url}`);
    return remote({ endpoint: running.url, credentials: remoteCredentials(o, dir, env), region: o.region });
  }
}

/**
 * Reports a failure of verb `verb` on stderr and returns its exit code: 1 for a refusal (no
 * such bucket, a bad time...), 2 when the repository or server cannot be used.
 */
export function reportFailure(verb: string, err: unknown, where: string | undefined): number {
  const refused = err instanceof StoreError || err instanceof AdminError || err instanceof AdminClientError;
  const code = (err as { code?: string }).code;
  process.stderr.write(`strata ${verb}: ${code && refused ? `${code}: ` : ''}${(err as Error).message}${where ? ` (${where})` : ''}\n`);
  const unusable =
    err instanceof AdminClientError
      ? err.status === 401 || err.status === 403 || err.status >= 500
      : !refused || (err instanceof StoreError && ['Corrupt', 'MissingBlob', 'BrokenChain', 'UnsupportedFormat', 'AnchorConflict', 'Unsafe', 'Closed', 'Io'].includes(err.code));
  return unusable ? 2 : 1;
}

/**
 * A time on the command line: an RFC 3339 time, or a duration meaning that long before `now`
 * (`90m`, `1d`, `0` = now). Throws UsageError naming `flag`.
 */
export function parseCliTime(flag: string, text: string, now: number): number {
  const at = parseTimeTextOrAgo(text, now);
  if (at === undefined) throw new UsageError(`--${flag}: ${JSON.stringify(text.slice(0, 64))} is not a time: give an RFC 3339 time (2026-03-01T12:00:00Z) or a duration before now (90m, 2d)`);
  return at;
}

function parseTimeTextOrAgo(text: string, now: number): number | undefined {
  const at = parseTimeText(text);
  if (typeof at === 'number') return at;
  try {
    return now - parseDuration(text, 'time');
  } catch {
    return undefined;
  }
}
