/**
 * @module `strata fork SRC DST [--at TIME] [--owner ID]`: forks bucket SRC into the new bucket
 * DST in O(1) (store/fork.ts: every object and every setting but the owner and the policy; no
 * upload in progress). DST keeps SRC's owner unless --owner names another key (--no-owner: none).
 *
 * Where it acts, as `strata keys` does: on a stopped local repository directly (its directory
 * lock); while a server holds the lock, through that server's admin API (address in
 * <data>/strata-server.json, an admin key from STRATA_ACCESS_KEY/STRATA_SECRET_KEY or
 * <data>/strata-credentials.json); `--endpoint URL` always through the server at URL; an S3 URL
 * repository needs --endpoint or --offline. Progress lines on stderr, the result on stdout.
 *
 * Exit codes: 0 forked, 1 refused (no such bucket, DST exists, bad name or time, a time not
 * supported yet), 2 bad command line or the repository/server cannot be used.
 */
import { openStore } from '../store/open.js';
import { erasureConfigFileOption, erasureOption } from '../server/erasure-option.js';
import { ProviderError } from '../provider/provider.js';
import { StoreError } from '../store/errors.js';
import { readEndpointFile } from '../server/endpoint-file.js';
import { adminRequest, AdminClientError, type AdminClientOptions } from '../admin/client.js';
import { AdminError } from '../admin/http.js';
import { adminFork, type AdminForkRequest, type AdminForkResult } from '../admin/forks.js';
import { UsageError, type ParsedArgs } from './args.js';
import type { Verb } from './verb.js';
import { locateTarget, remoteCredentials } from './admin-target.js';
import { defineOption, resolveOptions, type OptionDef } from '../server/options.js';
import { booleanType, pathType, stringType, type OptionType } from '../server/option-types.js';

interface ForkOptions {
  data: string;
  erasure?: string;
  configFile?: string;
  endpoint?: string;
  accessKey?: string;
  region: string;
  offline?: boolean;
  json?: boolean;
  at?: string;
  owner?: string;
  noOwner?: boolean;
}

const opt = <K extends keyof ForkOptions & string>(def: Parameters<typeof defineOption<ForkOptions, K>>[0]) => defineOption<ForkOptions, K>(def);
const sw = <K extends keyof ForkOptions & string>(name: string, key: K, help: string) =>
  opt<K>({ name, key, type: booleanType() as OptionType<NonNullable<ForkOptions[K]>>, help, from: { env: false, file: false } });
const once = { env: false, file: false } as const;

const OPTIONS: OptionDef<ForkOptions>[] = [
  opt({ name: 'data', key: 'data', env: 'STRATA_DATA_DIR', type: pathType('<dir|url>'), default: './data', help: 'the repository' }),
  erasureOption<ForkOptions>(),
  erasureConfigFileOption<ForkOptions>(),
  opt({ name: 'endpoint', key: 'endpoint', env: 'STRATA_ENDPOINT', type: stringType({ placeholder: '<url>' }), help: 'act through the server at URL' }),
  opt({ name: 'access-key', key: 'accessKey', env: 'STRATA_ACCESS_KEY', type: stringType({ maxLength: 128, placeholder: '<id>' }), help: 'admin key for the server' }),
  opt({ name: 'region', key: 'region', type: stringType({ maxLength: 64, placeholder: '<name>' }), default: 'us-east-1', help: 'signing region' }),
  opt({ name: 'at', key: 'at', type: stringType({ maxLength: 64, placeholder: '<time>' }), help: 'fork SRC as it was at this RFC 3339 time (inside its history window)', from: once }),
  opt({ name: 'owner', key: 'owner', type: stringType({ maxLength: 128, placeholder: '<id>' }), help: "access key owning DST (default: SRC's owner)", from: once }),
  sw('no-owner', 'noOwner', 'DST is owned by no key (admin keys only)'),
  sw('offline', 'offline', 'act on a repository that is not a local directory'),
  sw('json', 'json', 'machine-readable output'),
];

const NOTES = `where it acts: a stopped local repository directly (its lock); while a server holds it, that
server's admin API (address in <data>/strata-server.json; an admin key from STRATA_ACCESS_KEY/
STRATA_SECRET_KEY or <data>/strata-credentials.json); --endpoint URL always goes through the server
at URL.

exit codes: 0 forked, 1 refused (no such bucket, DST exists, bad name or time), 2 bad command line,
or the repository or server cannot be used.`;

/** Forks through a server's admin API, or on the repository itself. */
type Forker = { where: string; fork(req: AdminForkRequest): Promise<AdminForkResult>; close(): Promise<void> };

function remote(opts: AdminClientOptions): Forker {
  return {
    where: `server ${opts.endpoint}`,
    fork: async (req) => {
      const body: Record<string, string> = { source: req.source };
      if (req.at !== undefined) body.at = req.at;
      if (req.owner !== undefined) body.owner = req.owner;
      return (await adminRequest(opts, 'POST', ['buckets', req.target, 'fork'], body)) as AdminForkResult;
    },
    close: async () => undefined,
  };
}

/** Chooses where to act (see the module header). */
async function forker(o: ForkOptions, env: NodeJS.ProcessEnv, progress: (line: string) => void): Promise<Forker> {
  const location = o.data;
  const { erasure, dir, endpoint } = await locateTarget(o, env);
  if (endpoint) return remote(endpoint);
  try {
    progress(`opening repository ${location}`);
    const store = await openStore(location, { create: false, ...(erasure ? { erasure } : {}) });
    return { where: `repository ${location}`, fork: (req) => adminFork(store, req), close: () => store.close() };
  } catch (err) {
    if (!(err instanceof ProviderError && err.code === 'Locked') || !dir) throw err;
    const running = readEndpointFile(dir);
    if (!running) throw new UsageError(`${err.message}; pass --endpoint URL of that server to act through it`);
    progress(`a server holds the repository: forking through ${running.url}`);
    return remote({ endpoint: running.url, credentials: remoteCredentials(o, dir, env), region: o.region });
  }
}

export const forkVerb: Verb = {
  name: 'fork',
  summary: 'fork a bucket in constant time',
  synopsis: 'SRC DST [options]',
  description: `Creates bucket DST as a copy-on-write fork of SRC, whatever its size: DST starts with every
object and every setting of SRC (not its bucket policy, not its uploads in progress); writes and
deletes on either side never show on the other. DST keeps SRC's owner unless --owner names another
(--no-owner: none).`,
  options: OPTIONS as readonly OptionDef<never>[],
  positionals: { name: 'SRC DST', min: 2, max: 2 },
  notes: NOTES,
  run: (args, env) => runFork(args, env),
};

async function runFork(args: ParsedArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const o = resolveOptions(OPTIONS, { flags: args.flags, env }) as ForkOptions;
  const [source, target] = args.positionals as [string, string];
  if (o.noOwner && o.owner !== undefined) throw new UsageError('give --owner or --no-owner, not both');
  const owner = o.noOwner ? '' : o.owner;
  const progress = (line: string) => process.stderr.write(`fork: ${line}\n`);
  let f: Forker | undefined;
  try {
    f = await forker(o, env, progress);
    progress(`forking ${source} into ${target}${o.at ? ` as of ${o.at}` : ''} (${f.where})`);
    const started = performance.now();
    const r = await f.fork({ source, target, ...(o.at !== undefined ? { at: o.at } : {}), ...(owner !== undefined ? { owner } : {}) });
    progress(`done in ${(performance.now() - started).toFixed(1)} ms`);
    const text = [
      `forked ${r.source} into ${r.bucket} at ${r.created}`,
      `owner:  ${r.owner ?? '(none: admin keys only)'}`,
      `copied: ${r.copied.join(', ') || '(no settings)'}`,
    ].join('\n');
    process.stdout.write(`${o.json ? JSON.stringify(r, null, 2) : text}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const refused = err instanceof StoreError || err instanceof AdminError || err instanceof AdminClientError;
    const code = (err as { code?: string }).code;
    process.stderr.write(`strata fork: ${code && refused ? `${code}: ` : ''}${(err as Error).message}${f ? ` (${f.where})` : ''}\n`);
    const unusable = err instanceof AdminClientError ? err.status === 401 || err.status === 403 || (err.status >= 500 && err.status !== 501) : !refused || isRepositoryError(err);
    return unusable ? 2 : 1;
  } finally {
    await f?.close();
  }
}

/** Store errors that say the repository itself cannot be used (not a refusal of this fork). */
function isRepositoryError(err: unknown): boolean {
  return err instanceof StoreError && ['Corrupt', 'MissingBlob', 'BrokenChain', 'UnsupportedFormat', 'AnchorConflict', 'Unsafe', 'Closed', 'Io'].includes(err.code);
}
