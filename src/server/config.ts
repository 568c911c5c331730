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
 *   --max-connections / STRATA_MAX_CONNECTIONS  1024  (open connections; past it 503 SlowDown; 0: no cap)
 *   --header-timeout / STRATA_HEADER_TIMEOUT     20   (seconds to send a header block; 0: none)
 *   --body-timeout / STRATA_BODY_TIMEOUT         20   (seconds: the minimum body rate's window; 0: none)
 *   --body-min-bytes / STRATA_BODY_MIN_BYTES  16384   (bytes a request body must bring per window)
 *   STRATA_ACCESS_KEY / STRATA_SECRET_KEY          (credentials; else generated on first start)
 */
import { readFileSync } from 'node:fs';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
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
  /** Most open connections (0: no cap); see connection-guard.ts. */
  maxConnections?: number;
  /** Seconds a client has to send a complete header block (0: no deadline). */
  headerTimeoutSeconds?: number;
  /** Window of the minimum body rate, seconds (0: no minimum rate). */
  bodyTimeoutSeconds?: number;
  /** Bytes a request body must bring per window. */
  bodyMinBytes?: number;
}

export const DEFAULTS = { host: '127.0.0.1', port: 9000, data: './data', log: 'info' as const };

interface FileConfig extends Partial<Omit<ServerConfig, 'credentials' | 'headerTimeoutSeconds' | 'bodyTimeoutSeconds'>> {
  credentials?: Credentials[] | Credentials;
  headerTimeout?: number;
  bodyTimeout?: number;
}

/** `value` as a number in [0, max] (integer if asked); throws Error naming `option`. */
function limit(option: string, value: unknown, integer: boolean, max = Number.MAX_SAFE_INTEGER): number {
  const text = String(value).trim();
  const n = text === '' ? NaN : Number(text);
  if (!Number.isFinite(n) || n < 0 || n > max || (integer && !Number.isInteger(n))) {
    throw new Error(`invalid --${option} ${String(value)}: expected a non-negative ${integer ? 'integer' : 'number'}${max < Number.MAX_SAFE_INTEGER ? ` up to ${max}` : ''}`);
  }
  return n;
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
  // Connection limits (connection-guard.ts); a day is the longest deadline that makes sense.
  const maxConnections = pick('max-connections', 'STRATA_MAX_CONNECTIONS', fc.maxConnections);
  if (maxConnections !== undefined) cfg.maxConnections = limit('max-connections', maxConnections, true);
  const headerTimeout = pick('header-timeout', 'STRATA_HEADER_TIMEOUT', fc.headerTimeout);
  if (headerTimeout !== undefined) cfg.headerTimeoutSeconds = limit('header-timeout', headerTimeout, false, 86_400);
  const bodyTimeout = pick('body-timeout', 'STRATA_BODY_TIMEOUT', fc.bodyTimeout);
  if (bodyTimeout !== undefined) cfg.bodyTimeoutSeconds = limit('body-timeout', bodyTimeout, false, 86_400);
  const bodyMinBytes = pick('body-min-bytes', 'STRATA_BODY_MIN_BYTES', fc.bodyMinBytes);
  if (bodyMinBytes !== undefined) cfg.bodyMinBytes = limit('body-min-bytes', bodyMinBytes, true);
  if (env.STRATA_ACCESS_KEY || env.STRATA_SECRET_KEY) {
    if (!env.STRATA_ACCESS_KEY || !env.STRATA_SECRET_KEY) throw new Error('set both STRATA_ACCESS_KEY and STRATA_SECRET_KEY');
    cfg.credentials = [{ accessKeyId: env.STRATA_ACCESS_KEY, secretAccessKey: env.STRATA_SECRET_KEY }];
  } else if (fc.credentials) {
    cfg.credentials = Array.isArray(fc.credentials) ? fc.credentials : [fc.credentials];
  }
  return cfg;
}
