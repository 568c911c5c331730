/**
 * @module Server configuration: flags, then environment, then defaults.
 *
 *   --host / STRATA_HOST              127.0.0.1   (listen address)
 *   --port / STRATA_PORT              9000
 *   --data / STRATA_DATA_DIR          ./data      (the embedded fs repository; or an s3:// / http(s):// URL)
 *   --base-domain / STRATA_BASE_DOMAIN            (enables virtual-hosted-style: <bucket>.<domain>)
 *   --region / STRATA_REGION                      (strict region; default: accept any)
 *   --config / STRATA_CONFIG                      (JSON file: credentials and any of the above)
 *   --log / STRATA_LOG                info        (request logs: 'info' one line per request, 'warn', 'off')
 *   --master-key-file / STRATA_MASTER_KEY_FILE    (master key; STRATA_MASTER_KEY gives it inline; see master-key.ts)
 *   --metrics-token / STRATA_METRICS_TOKEN        (GET /metrics with `Authorization: Bearer <token>`)
 *   --metrics-listen / STRATA_METRICS_LISTEN      (host:port of a separate listener for /metrics and /health)
 *   STRATA_ACCESS_KEY / STRATA_SECRET_KEY          (credentials; else generated on first start)
 */
import { readFileSync } from 'node:fs';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Bootstrap keys are admin unless this is false (server/credentials.ts). */
  admin?: boolean;
  /** Display name of a key created at bootstrap (default: the access key id). */
  name?: string;
  /** Whether a key created at bootstrap may create buckets (default true). */
  createBucket?: boolean;
}

export interface ServerConfig {
  host: string;
  port: number;
  data: string;
  baseDomain?: string;
  region?: string;
  log: 'info' | 'warn' | 'off';
  /** Credentials given by env or config file (undefined: use/generate the stored pair). */
  credentials?: Credentials[];
  /** Pending write budget in bytes (admission control). */
  pendingBytes?: number;
  /** File holding the master key (see master-key.ts); STRATA_MASTER_KEY overrides it. */
  masterKeyFile?: string;
  /** Bearer token that opens GET /metrics on the S3 port (none: not served there). */
  metricsToken?: string;
  /** `host:port` of a separate listener serving /metrics and /health only. */
  metricsListen?: { host: string; port: number };
}

export const DEFAULTS = { host: '127.0.0.1', port: 9000, data: './data', log: 'info' as const };

interface FileConfig extends Partial<Omit<ServerConfig, 'credentials'>> {
  credentials?: Credentials[] | Credentials;
}

function flag(args: string[], name: string): string | undefined {
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return undefined;
  const a = args[i]!;
  if (a.includes('=')) return a.slice(a.indexOf('=') + 1);
  const v = args[i + 1];
  if (v === undefined || v.startsWith('--')) throw new Error(`--${name} needs a value`);
  return v;
}

/** Resolves the configuration; throws Error with a readable message on bad values. */
export function resolveConfig(args: string[], env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const file = flag(args, 'config') ?? env.STRATA_CONFIG;
  let fc: FileConfig = {};
  if (file) {
    try {
      fc = JSON.parse(readFileSync(file, 'utf8')) as FileConfig;
    } catch (err) {
      throw new Error(`cannot read config file ${file}: ${(err as Error).message}`);
    }
  }
  const pick = (name: string, envName: string, fromFile: unknown) => flag(args, name) ?? env[envName] ?? (fromFile as string | undefined);
  const port = Number(pick('port', 'STRATA_PORT', fc.port) ?? DEFAULTS.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port ${port}`);
  const log = (pick('log', 'STRATA_LOG', fc.log) ?? DEFAULTS.log) as ServerConfig['log'];
  if (!['info', 'warn', 'off'].includes(log)) throw new Error(`invalid log level ${log}`);
  const cfg: ServerConfig = {
    host: pick('host', 'STRATA_HOST', fc.host) ?? DEFAULTS.host,
    port,
    data: pick('data', 'STRATA_DATA_DIR', fc.data) ?? DEFAULTS.data,
    log,
  };
  const baseDomain = pick('base-domain', 'STRATA_BASE_DOMAIN', fc.baseDomain);
  if (baseDomain) cfg.baseDomain = baseDomain;
  const region = pick('region', 'STRATA_REGION', fc.region);
  if (region) cfg.region = region;
  const pending = pick('pending-bytes', 'STRATA_PENDING_BYTES', fc.pendingBytes);
  if (pending !== undefined) cfg.pendingBytes = Number(pending);
  const masterKeyFile = pick('master-key-file', 'STRATA_MASTER_KEY_FILE', fc.masterKeyFile);
  if (masterKeyFile) cfg.masterKeyFile = masterKeyFile;
  const metricsToken = pick('metrics-token', 'STRATA_METRICS_TOKEN', fc.metricsToken);
  if (metricsToken !== undefined) {
    // Sent in a header and compared in constant time; short tokens are guessable.
    if (!/^[\x21-\x7e]{16,256}$/.test(metricsToken)) throw new Error('--metrics-token must be 16-256 printable ASCII characters without spaces');
    cfg.metricsToken = metricsToken;
  }
  const metricsListen = pick('metrics-listen', 'STRATA_METRICS_LISTEN', fc.metricsListen);
  if (metricsListen !== undefined) cfg.metricsListen = parseListen(String(metricsListen), '--metrics-listen');
  if (env.STRATA_ACCESS_KEY || env.STRATA_SECRET_KEY) {
    if (!env.STRATA_ACCESS_KEY || !env.STRATA_SECRET_KEY) throw new Error('set both STRATA_ACCESS_KEY and STRATA_SECRET_KEY');
    cfg.credentials = [{ accessKeyId: env.STRATA_ACCESS_KEY, secretAccessKey: env.STRATA_SECRET_KEY }];
  } else if (fc.credentials) {
    cfg.credentials = (Array.isArray(fc.credentials) ? fc.credentials : [fc.credentials]).map((c, i) => checkCredentials(c, `credentials[${i}]`));
  }
  return cfg;
}

/** A config-file credentials entry, checked field by field (throws Error naming `what`). */
function checkCredentials(c: unknown, what: string): Credentials {
  const e = c as Record<string, unknown>;
  if (typeof e !== 'object' || e === null) throw new Error(`${what}: an object with accessKeyId and secretAccessKey`);
  if (typeof e.accessKeyId !== 'string' || typeof e.secretAccessKey !== 'string') throw new Error(`${what}: accessKeyId and secretAccessKey must be strings`);
  for (const f of ['admin', 'createBucket']) if (e[f] !== undefined && typeof e[f] !== 'boolean') throw new Error(`${what}.${f} must be true or false`);
  if (e.name !== undefined && typeof e.name !== 'string') throw new Error(`${what}.name must be a string`);
  const out: Credentials = { accessKeyId: e.accessKeyId, secretAccessKey: e.secretAccessKey };
  if (e.admin !== undefined) out.admin = e.admin as boolean;
  if (e.createBucket !== undefined) out.createBucket = e.createBucket as boolean;
  if (e.name !== undefined) out.name = e.name as string;
  return out;
}

/** `host:port`, `[v6]:port` or `:port` (127.0.0.1); throws Error naming `what`. */
export function parseListen(v: string, what: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(v.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`${what} must be host:port (got ${JSON.stringify(v)})`);
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}
