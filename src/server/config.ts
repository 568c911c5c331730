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
 *   --max-uploads-per-bucket / STRATA_MAX_UPLOADS_PER_BUCKET   10000  (multipart uploads in progress per bucket)
 *   --upload-expiry / STRATA_UPLOAD_EXPIRY                     7d     (age at which unfinished uploads are aborted)
 *   --upload-sweep-interval / STRATA_UPLOAD_SWEEP_INTERVAL     10m    (how often expired uploads are looked for)
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
  /** Multipart uploads in progress per bucket beyond which CreateMultipartUpload is refused. */
  maxUploadsPerBucket?: number;
  /** Age (ms) at which an unfinished multipart upload is aborted (and a completion record dropped). */
  uploadExpiryMs?: number;
  /** Time (ms) between expiry sweeps. */
  uploadSweepIntervalMs?: number;
}

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a duration (`30s`, `10m`, `7d`, `250ms`; a plain number is seconds) into ms; throws Error. */
export function parseDuration(name: string, raw: unknown): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(String(raw).trim());
  const ms = m ? Number(m[1]) * DURATION_UNITS_MS[m[2] ?? 's']! : NaN;
  if (!(ms >= 1 && ms <= Number.MAX_SAFE_INTEGER)) throw new Error(`invalid ${name} ${String(raw)}: give a positive duration such as 30s, 10m or 7d`);
  return Math.round(ms);
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
  const maxUploads = pick('max-uploads-per-bucket', 'STRATA_MAX_UPLOADS_PER_BUCKET', fc.maxUploadsPerBucket);
  if (maxUploads !== undefined) {
    const n = Number(maxUploads);
    if (!Number.isInteger(n) || n < 1) throw new Error(`invalid max-uploads-per-bucket ${String(maxUploads)}: give a positive integer`);
    cfg.maxUploadsPerBucket = n;
  }
  const expiry = pick('upload-expiry', 'STRATA_UPLOAD_EXPIRY', (fc as { uploadExpiry?: unknown }).uploadExpiry);
  if (expiry !== undefined) cfg.uploadExpiryMs = parseDuration('upload-expiry', expiry);
  const sweep = pick('upload-sweep-interval', 'STRATA_UPLOAD_SWEEP_INTERVAL', (fc as { uploadSweepInterval?: unknown }).uploadSweepInterval);
  if (sweep !== undefined) cfg.uploadSweepIntervalMs = parseDuration('upload-sweep-interval', sweep);
  if (env.STRATA_ACCESS_KEY || env.STRATA_SECRET_KEY) {
    if (!env.STRATA_ACCESS_KEY || !env.STRATA_SECRET_KEY) throw new Error('set both STRATA_ACCESS_KEY and STRATA_SECRET_KEY');
    cfg.credentials = [{ accessKeyId: env.STRATA_ACCESS_KEY, secretAccessKey: env.STRATA_SECRET_KEY }];
  } else if (fc.credentials) {
    cfg.credentials = Array.isArray(fc.credentials) ? fc.credentials : [fc.credentials];
  }
  return cfg;
}
