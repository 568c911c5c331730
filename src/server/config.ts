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
  if (env.STRATA_ACCESS_KEY || env.STRATA_SECRET_KEY) {
    if (!env.STRATA_ACCESS_KEY || !env.STRATA_SECRET_KEY) throw new Error('set both STRATA_ACCESS_KEY and STRATA_SECRET_KEY');
    cfg.credentials = [{ accessKeyId: env.STRATA_ACCESS_KEY, secretAccessKey: env.STRATA_SECRET_KEY }];
  } else if (fc.credentials) {
    cfg.credentials = Array.isArray(fc.credentials) ? fc.credentials : [fc.credentials];
  }
  return cfg;
}
