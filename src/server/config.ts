/**
 * @module Server configuration: THE option table of `strata serve`, and its resolution from
 * flags, then environment, then a JSON config file, then defaults (options.ts).
 *
 * To add an option: add a field to ServerConfig and one `defineOption` entry to
 * SERVER_OPTIONS. Flag parsing, STRATA_* environment, config-file keys (the flag spelling,
 * plus its camelCase), validation, `strata serve --help` and the README check all follow.
 *
 * Credentials are not flags (a command line is visible to every local user): they come from
 * STRATA_ACCESS_KEY / STRATA_SECRET_KEY, else the config file's `credentials`, else the pair
 * generated beside a local repository (credentials.ts). STRATA_MASTER_KEY gives the master
 * key inline (master-key.ts).
 */
import { isIP } from 'node:net';
import { parseArgs, UsageError, type ParsedArgs, type PositionalSpec } from '../cli/args.js';
import { readConfigFile } from './config-file.js';
import { credentialsFromEnv, parseCredentialList, type Credentials } from './config-credentials.js';
import {
  OptionError,
  booleanType,
  durationType,
  enumType,
  integerType,
  pathType,
  sizeType,
  stringType,
} from './option-types.js';
import { listenType, tokenType, type ListenAddress } from './metrics-options.js';
import { CONNECTION_DEFAULTS } from './connection-guard.js';
import { DEFAULT_KEY_SHARE_PERCENT } from '../s3/key-share.js';
import { defineOption, findOption, resolveOptions, type OptionDef } from './options.js';
import { erasureOption, erasureSetup } from './erasure-option.js';
import type { ErasureConfig } from '../provider/erasure/types.js';

export type { Credentials } from './config-credentials.js';

export type LogLevel = 'info' | 'warn' | 'off';

export interface ServerConfig {
  host: string;
  port: number;
  /** The repository: a local directory, or a `file:`, `memory:`, `s3://`, `http(s)://` URL. */
  data: string;
  /** `--erasure k+m`: erasure-code across the domains `data` names (server/erasure-option.ts). */
  erasure?: string;
  /** The erasure set-up resolved from `data`, `erasure` and the config file (undefined: plain). */
  erasureConfig?: ErasureConfig;
  log: LogLevel;
  baseDomain?: string;
  region?: string;
  /** Credentials given by env or config file (undefined: use/generate the stored pair). */
  credentials?: Credentials[];
  /** Pending write budget in bytes (admission control). */
  pendingBytes?: number;
  /** History budget in bytes: accounted history metadata allowed (store/history-budget.ts). */
  historyBudget?: number;
  /** `--commit-log`: append commits to the provider's commit log when it has one (store commitLog). */
  commitLog?: 'on' | 'off';
  /** `--direct-io`: write large object bodies with O_DIRECT where the data directory takes it
   * (fs/direct-write.ts); auto: on for the directory domains of an erasure set, off for a plain
   * data directory (see directWritesFor). */
  directIo?: 'on' | 'off' | 'auto';
  /** File holding the master key (see master-key.ts); STRATA_MASTER_KEY overrides it. */
  masterKeyFile?: string;
  /** PEM certificate chain and private key: HTTPS on the same port (both or neither). */
  tlsCert?: string;
  tlsKey?: string;
  /** Accept SSE-C keys over plain HTTP from other hosts (behind a TLS-terminating proxy). */
  sseCOverHttp?: boolean;
  /** How long a shutdown waits for requests in flight before cutting them, ms. */
  shutdownTimeout?: number;
  /** Multipart uploads in progress per bucket beyond which CreateMultipartUpload is refused. */
  maxUploadsPerBucket?: number;
  /** Age (ms) at which an unfinished multipart upload is aborted (and a completion record dropped). */
  uploadExpiry?: number;
  /** Time (ms) between sweeps for expired uploads. */
  uploadSweepInterval?: number;
  /** Time (ms) between garbage-collection passes (0: none; server/gc-worker.ts). */
  gcInterval?: number;
  /** How long a blob stays unreachable (and how old it must be) before GC deletes it, ms. */
  gcGrace?: number;
  /** Time (ms) between background scrub passes of an erasure repository (0: none; server/scrub-worker.ts). */
  scrubInterval?: number;
  /** Bytes per second the background scrub and the repair worker read at most. */
  scrubRate?: number;
  /** Time (ms) between lifecycle rule passes (0: no scheduled passes). */
  lifecycleInterval?: number;
  /** History window (ms) of every bucket without its own (store retentionMs; 0: current state only). */
  retention?: number;
  /** Time (ms) between history expiry runs (0: never scheduled). */
  expiryInterval?: number;
  /** Bearer token that opens GET /metrics on the S3 port (none: not served there). */
  metricsToken?: string;
  /** `host:port` of a separate listener serving /metrics and /health only. */
  metricsListen?: ListenAddress;
  /** The config file the values came from, if any. */
  configFile?: string;
  /** Most open connections (0: no cap); see connection-guard.ts. */
  maxConnections?: number;
  /** Share of requests in flight and of the pending budget one access key may hold, percent (s3/key-share.ts). */
  keyShare?: number;
  /** Time a client has to send a complete header block, ms (0: no deadline). */
  headerTimeoutMs?: number;
  /** Window of the minimum body rate, ms (0: no minimum rate). */
  bodyTimeoutMs?: number;
  /** Bytes a request body must bring per window. */
  bodyMinBytes?: number;
  /** Time a keep-alive connection may stay idle between requests, ms. */
  idleTimeoutMs?: number;
}

/** A DNS name (letters, digits, hyphens, dots; labels of 1..63) or an IP literal. */
function hostCheck(v: string): string | undefined {
  if (isIP(v)) return undefined;
  return /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(
    v
  )
    ? undefined
    : 'is not a host name or IP address';
}

/** A table entry for ServerConfig[K], its type and default checked against the field. */
const opt = <K extends keyof ServerConfig & string>(
  def: Parameters<typeof defineOption<ServerConfig, K>>[0]
) => defineOption<ServerConfig, K>(def);

/** Every `strata serve` option, in `--help` order. */
export const SERVER_OPTIONS: readonly OptionDef<ServerConfig>[] = [
  opt({
    name: 'config',
    key: 'configFile',
    env: 'STRATA_CONFIG',
    type: pathType('<file>'),
    help: 'JSON file with any of these options (keys spelled like the flags) and `credentials`',
    from: { file: false },
  }),
  opt({
    name: 'host',
    key: 'host',
    env: 'STRATA_HOST',
    type: stringType({ check: hostCheck, placeholder: '<addr>' }),
    default: '127.0.0.1',
    help: 'listen address',
  }),
  opt({
    name: 'port',
    key: 'port',
    env: 'STRATA_PORT',
    type: integerType({ min: 0, max: 65535 }, '<port>'),
    default: 9000,
    help: 'listen port (0: any free port)',
  }),
  opt({
    name: 'data',
    key: 'data',
    env: 'STRATA_DATA_DIR',
    type: pathType('<dir|url>'),
    default: './data',
    help: 'the repository: a local directory (locked while served) or an s3:// or http(s):// URL',
  }),
  erasureOption<ServerConfig>(),
  opt({
    name: 'base-domain',
    key: 'baseDomain',
    env: 'STRATA_BASE_DOMAIN',
    type: stringType({
      check: (v) => (isIP(v) ? 'is an IP address, not a domain' : hostCheck(v)),
      placeholder: '<domain>',
    }),
    help: 'enables virtual-hosted-style requests (<bucket>.<domain>); path style always works',
  }),
  opt({
    name: 'region',
    key: 'region',
    env: 'STRATA_REGION',
    type: stringType({
      maxLength: 64,
      check: (v) =>
        /^[A-Za-z0-9_-]+$/.test(v) ? undefined : 'is not a region name (A-Z a-z 0-9 _ -)',
      placeholder: '<name>',
    }),
    help: 'strict region: refuse other credential scopes (default: accept any region)',
  }),
  opt({
    name: 'log',
    key: 'log',
    env: 'STRATA_LOG',
    type: enumType<LogLevel>(['info', 'warn', 'off']),
    default: 'info',
    help: 'request logs: info (one JSON line per request), warn, off',
  }),
  opt({
    name: 'pending-budget',
    key: 'pendingBytes',
    env: 'STRATA_PENDING_BUDGET',
    aliases: ['pending-bytes', 'pendingBytes'],
    // Lower bound: a large write holds one 256 KiB segment; below 1 MiB few writes could run at once.
    // Default 64 MiB: a 5 GiB multipart upload and 16 concurrent 16 MiB PUTs pass (store/repository.ts).
    type: sizeType({ min: 1024 * 1024, max: 2 ** 40 }),
    default: 64 * 1024 * 1024,
    help: 'admission budget for bytes held in memory by writes (and history walks); beyond it 503 SlowDown + Retry-After',
  }),
  opt({
    name: 'history-budget',
    key: 'historyBudget',
    env: 'STRATA_HISTORY_BUDGET',
    // Lower bound: room for a few retained points (tests use budgets this small); the upper one
    // keeps totals exact in a double.
    type: sizeType({ min: 1024, max: 2 ** 50 }),
    default: 256 * 1024 * 1024,
    help: 'accounted bytes of version-log metadata all retained history may take; writes past it get 403 QuotaExceeded',
  }),
  opt({
    name: 'commit-log',
    key: 'commitLog',
    env: 'STRATA_COMMIT_LOG',
    // on: one append per group commit (fs offers it; others ignore it); off: a commit blob and
    // an anchor move per commit. Either opens a repository written either way.
    // Default on, as the store's (store/repository-options.ts DEFAULTS).
    type: enumType<'on' | 'off'>(['on', 'off']),
    default: 'on',
    help: 'append each group commit to a commit log segment with one durable write (O_DSYNC) (fs, and erasure over directory domains with segments replicated to m+1 of them; memory and s3 always write commit blobs); off: a commit blob and an anchor move per commit',
  }),
  opt({
    name: 'direct-io',
    key: 'directIo',
    env: 'STRATA_DIRECT_IO',
    // on: bulk blobs of 256 KiB and more skip the page cache (fs and directory domains,
    // provider/fs/direct-write.ts), probed at open; off: every write buffered. Default auto: on
    // for an erasure set's directory domains, off for a plain data directory (directWritesFor).
    type: enumType<'on' | 'off' | 'auto'>(['on', 'off', 'auto']),
    default: 'auto',
    help: 'write object bodies of 256 KiB and more with O_DIRECT, around the page cache, where the data directory takes it (probed at start): less CPU per large PUT, but reads of fresh objects then come from the disk; erasure scrub and repair passes read fragments and log-segment copies that way too; off: buffered; auto: on for the directory domains of an erasure set (their fragments are written once and read k at a time), off for a plain data directory',
  }),
  // Connection limits (connection-guard.ts: defaults and why).
  opt({
    name: 'max-connections',
    key: 'maxConnections',
    env: 'STRATA_MAX_CONNECTIONS',
    type: integerType({ min: 0, max: 1_000_000 }),
    default: CONNECTION_DEFAULTS.maxConnections,
    help: 'open connections; past it a request gets 503 SlowDown and the connection closes (0: no cap)',
  }),
  opt({
    name: 'key-share',
    key: 'keyShare',
    env: 'STRATA_KEY_SHARE',
    // s3/key-share.ts: a cap per access key (anonymous requests together count as one), so one
    // client's many slow uploads cannot take what every other key needs; 100: no per-key cap.
    type: integerType({ min: 1, max: 100 }, '<percent>'),
    default: DEFAULT_KEY_SHARE_PERCENT,
    help: 'percent of --max-connections (as requests in flight) and of --pending-budget one access key may hold at once; past it 503 SlowDown (100: no per-key cap)',
  }),
  opt({
    name: 'header-timeout',
    key: 'headerTimeoutMs',
    env: 'STRATA_HEADER_TIMEOUT',
    // Node measures it in whole milliseconds; a day is the longest that makes any sense.
    type: durationType({ max: 86_400_000 }),
    default: CONNECTION_DEFAULTS.headerTimeoutMs,
    help: 'time to send a complete header block; past it 400 RequestTimeout (0: none)',
  }),
  opt({
    name: 'body-timeout',
    key: 'bodyTimeoutMs',
    env: 'STRATA_BODY_TIMEOUT',
    type: durationType({ max: 86_400_000 }),
    default: CONNECTION_DEFAULTS.bodyWindowMs,
    help: 'window of the minimum body rate: a body bringing less than --body-min-bytes in it gets 400 RequestTimeout (0: none)',
  }),
  opt({
    name: 'body-min-bytes',
    key: 'bodyMinBytes',
    env: 'STRATA_BODY_MIN_BYTES',
    type: sizeType({ min: 1, max: 2 ** 40 }),
    default: CONNECTION_DEFAULTS.bodyMinBytes,
    help: 'bytes a request body must bring per --body-timeout while the server waits for it',
  }),
  opt({
    name: 'idle-timeout',
    key: 'idleTimeoutMs',
    env: 'STRATA_IDLE_TIMEOUT',
    type: durationType({ min: 1, max: 86_400_000 }),
    default: CONNECTION_DEFAULTS.idleTimeoutMs,
    help: 'time a keep-alive connection may sit idle between requests before the server closes it',
  }),
  opt({
    name: 'master-key-file',
    key: 'masterKeyFile',
    env: 'STRATA_MASTER_KEY_FILE',
    type: pathType('<file>'),
    help: 'file holding the master key (default: <data>.master-key beside a local repository)',
  }),
  opt({
    name: 'tls-cert',
    key: 'tlsCert',
    env: 'STRATA_TLS_CERT',
    type: pathType('<file>'),
    help: 'PEM certificate chain: serve HTTPS on the port (with --tls-key; reloaded on SIGHUP)',
  }),
  opt({
    name: 'tls-key',
    key: 'tlsKey',
    env: 'STRATA_TLS_KEY',
    type: pathType('<file>'),
    help: 'PEM private key of --tls-cert',
  }),
  opt({
    name: 'sse-c-over-http',
    key: 'sseCOverHttp',
    env: 'STRATA_SSE_C_OVER_HTTP',
    type: booleanType(),
    default: false,
    help: 'accept SSE-C keys over plain HTTP from other hosts (only behind a TLS-terminating proxy; loopback always may)',
  }),
  opt({
    name: 'shutdown-timeout',
    key: 'shutdownTimeout',
    env: 'STRATA_SHUTDOWN_TIMEOUT',
    // Up to a day: long uploads may be worth waiting for; beyond, a stop is a stop.
    type: durationType({ min: 0, max: 86_400_000 }),
    // Within systemd's default stop timeout (90 s) and Kubernetes' grace period (30 s).
    default: 25_000,
    help: 'on SIGTERM/SIGINT, how long requests in flight may finish before they are cut',
  }),
  opt({
    name: 'max-uploads-per-bucket',
    key: 'maxUploadsPerBucket',
    env: 'STRATA_MAX_UPLOADS_PER_BUCKET',
    // Far above what clients keep open at once (tens); see store/repository.ts DEFAULTS.
    type: integerType({ min: 1, max: 10_000_000 }),
    default: 10_000,
    help: 'multipart uploads in progress per bucket; CreateMultipartUpload beyond it gets 400 InvalidRequest',
  }),
  opt({
    name: 'upload-expiry',
    key: 'uploadExpiry',
    env: 'STRATA_UPLOAD_EXPIRY',
    // At least a second (tests use short ages); at most ten years.
    type: durationType({ min: 1000, max: 10 * 365 * 86_400_000 }),
    default: 7 * 86_400_000,
    help: 'age at which an unfinished multipart upload is aborted (S3 AbortIncompleteMultipartUpload, every bucket)',
  }),
  opt({
    name: 'upload-sweep-interval',
    key: 'uploadSweepInterval',
    env: 'STRATA_UPLOAD_SWEEP_INTERVAL',
    type: durationType({ min: 10, max: 86_400_000 }),
    default: 10 * 60_000,
    help: 'how often expired multipart uploads are looked for (one index seek per bucket)',
  }),
  opt({
    name: 'gc-interval',
    key: 'gcInterval',
    env: 'STRATA_GC_INTERVAL',
    // 0 turns the schedule off (strata gc and the admin API still run passes); at most a week.
    type: durationType({ min: 0, max: 7 * 86_400_000 }),
    default: 3_600_000,
    help: 'time between garbage-collection passes (0: no schedule)',
  }),
  opt({
    name: 'gc-grace',
    key: 'gcGrace',
    env: 'STRATA_GC_GRACE',
    // Longer than any request in flight: readers hold locations across awaits, writers name
    // their blobs only when they commit.
    type: durationType({ min: 0, max: 30 * 86_400_000 }),
    default: 3_600_000,
    help: 'how long a blob stays unreachable (and how old it must be) before GC deletes it',
  }),
  opt({
    name: 'scrub-interval',
    key: 'scrubInterval',
    env: 'STRATA_SCRUB_INTERVAL',
    // Erasure repositories only. 0 turns the schedule off (strata scrub and the admin API still
    // run passes); counted from the end of the last completed pass; at most 90 days.
    type: durationType({ min: 0, max: 90 * 86_400_000 }),
    default: 86_400_000,
    help: 'time between background scrub-and-repair passes of an erasure repository (0: no schedule)',
  }),
  opt({
    name: 'scrub-rate',
    key: 'scrubRate',
    env: 'STRATA_SCRUB_RATE',
    // A fraction of one disk's bandwidth, so maintenance does not starve requests.
    type: sizeType({ min: 1024 }),
    default: 64 * 2 ** 20,
    help: 'bytes per second the background scrub and the heal-on-read repair may read (erasure)',
  }),
  opt({
    name: 'lifecycle-interval',
    key: 'lifecycleInterval',
    env: 'STRATA_LIFECYCLE_INTERVAL',
    // 0 turns the schedule off (`strata lifecycle run` still works); tests use a second or less.
    type: durationType({ min: 0, max: 7 * 86_400_000 }),
    default: 3600_000,
    help: 'how often bucket lifecycle rules are carried out (0: only by `strata lifecycle run`); STRATA_LIFECYCLE_DAY_MS shortens a rule day (debug)',
  }),
  opt({
    name: 'retention',
    key: 'retention',
    env: 'STRATA_RETENTION',
    // Up to 100 years (history-window.ts MAX_HISTORY_WINDOW_MS); 0 keeps the current state only.
    type: durationType({ min: 0, max: 36_500 * 86_400_000 }),
    default: 30 * 86_400_000,
    help: 'history window of every bucket without its own (strata history-window): how far back reads, restores and forks reach; older history expires',
  }),
  opt({
    name: 'expiry-interval',
    key: 'expiryInterval',
    env: 'STRATA_EXPIRY_INTERVAL',
    // 0 turns the schedule off (strata expire still runs it); at least a second otherwise.
    type: durationType({ min: 0, max: 7 * 86_400_000 }),
    default: 3_600_000,
    help: 'how often history older than its window is expired (walks every version log; 0: only by strata expire)',
  }),
  opt({
    name: 'metrics-token',
    key: 'metricsToken',
    env: 'STRATA_METRICS_TOKEN',
    type: tokenType(),
    help: 'serve GET /metrics on the S3 port to requests with Authorization: Bearer <token>',
  }),
  opt({
    name: 'metrics-listen',
    key: 'metricsListen',
    env: 'STRATA_METRICS_LISTEN',
    type: listenType(),
    help: 'host:port of a separate listener for /metrics and /health (not served elsewhere without a token)',
  }),
];

/** Defaults of the options that have one (from the table). */
export const DEFAULTS = Object.fromEntries(
  SERVER_OPTIONS.filter((d) => d.default !== undefined).map((d) => [d.key, d.default])
) as Pick<ServerConfig, 'host' | 'port' | 'data' | 'log'> & Partial<ServerConfig>;

/** Positional arguments of `strata serve`: none. */
export const SERVE_POSITIONALS: PositionalSpec = {
  name: '',
  max: 0,
  strayHint: 'the repository is given with --data DIR',
};

/** Keys of the config file that are not options (`erasure`: the section of
 * provider/erasure/config.ts; the `--erasure` flag itself is never read from the file). */
export const SERVER_FILE_EXTRA_KEYS = ['credentials', 'erasure'] as const;
const FILE_EXTRA_KEYS = SERVER_FILE_EXTRA_KEYS;

/**
 * Resolves the configuration from parsed flags, `env` and the config file they name.
 * Reads only the config file; creates nothing. Throws OptionError (with every problem found)
 * on a bad value, an unreadable or malformed config file, or bad credentials.
 */
export function configFromArgs(
  parsed: Pick<ParsedArgs, 'flags'>,
  env: NodeJS.ProcessEnv = process.env
): ServerConfig {
  const configOpt = findOption(SERVER_OPTIONS, 'config')!;
  const rawPath = parsed.flags.get('config') ?? (env.STRATA_CONFIG || undefined);
  const path =
    rawPath === undefined
      ? undefined
      : (configOpt.type.parse(
          rawPath,
          parsed.flags.has('config') ? '--config' : 'STRATA_CONFIG'
        ) as string);
  const file =
    path === undefined ? undefined : readConfigFile(path, SERVER_OPTIONS, FILE_EXTRA_KEYS);
  const problems: string[] = [];
  let cfg: Partial<ServerConfig> = {};
  try {
    cfg = resolveOptions(SERVER_OPTIONS, { flags: parsed.flags, env, ...(file ? { file } : {}) });
  } catch (err) {
    if (!(err instanceof OptionError)) throw err;
    problems.push(err.message);
  }
  try {
    const fromEnv = credentialsFromEnv(env);
    const fromFile = file?.extra.get('credentials');
    const fileList =
      fromFile === undefined
        ? undefined
        : parseCredentialList(fromFile, `${file!.path}: credentials`);
    const credentials = fromEnv ?? fileList;
    if (credentials) cfg.credentials = credentials;
  } catch (err) {
    if (!(err instanceof OptionError)) throw err;
    problems.push(err.message);
  }
  try {
    const fromFile = file?.extra.get('erasure');
    const erasure = erasureSetup({
      data: cfg.data ?? DEFAULTS.data,
      ...(cfg.erasure !== undefined ? { erasure: cfg.erasure } : {}),
      ...(fromFile !== undefined ? { file: fromFile, fileName: file!.path } : {}),
    });
    if (erasure) cfg.erasureConfig = erasure;
  } catch (err) {
    if (!(err instanceof OptionError)) throw err;
    problems.push(err.message);
  }
  if ((cfg.tlsCert === undefined) !== (cfg.tlsKey === undefined))
    problems.push('--tls-cert and --tls-key go together: give both or neither');
  if (problems.length) throw new OptionError(problems.join('\n'));
  return cfg as ServerConfig;
}

/**
 * Resolves the configuration from `args` (the words after `serve`) and `env`; see
 * configFromArgs. Throws UsageError for unknown flags or stray arguments (and for --help /
 * --version, which the command line handles before calling this).
 */
export function resolveConfig(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env
): ServerConfig {
  const parsed = parseArgs(args, {
    options: SERVER_OPTIONS as readonly OptionDef<never>[],
    positionals: SERVE_POSITIONALS,
  });
  if (parsed.help || parsed.version)
    throw new UsageError('--help and --version are answered by the strata command');
  return configFromArgs(parsed, env);
}
