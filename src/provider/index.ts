/**
 * @module Opening a provider from a URL, and the provider API in one import.
 *
 *   /var/lib/strata, ./data, file:///var/lib/strata     → fs
 *   memory:                                             → memory (a new empty one each time)
 *   s3://bucket/prefix?endpoint=http://host:9000&region=eu-west-3
 *                                                       → s3 (endpoint default: AWS, from region)
 *   http://host:9000/bucket/prefix, https://…           → s3 at that endpoint
 *
 * For s3, a non-empty prefix gets a trailing `/`. Credentials come from `options`,
 * else from the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and (optional)
 * AWS_SESSION_TOKEN. The region comes from the URL's `region` parameter, else
 * `options.region`, else AWS_REGION / AWS_DEFAULT_REGION, else `us-east-1`. An s3
 * URL without `endpoint=` uses AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL when set.
 * Credentials are never read from the URL (URLs end up in logs).
 */
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFsProvider } from './fs/index.js';
import { createMemoryProvider } from './memory/index.js';
import type { Provider } from './provider.js';
import type { S3ProviderOptions } from './s3/index.js';

export * from './provider.js';
export {
  acquireDirectoryLock,
  createFsProvider,
  type DirectoryLock,
  type FsProvider,
  type FsProviderOptions,
} from './fs/index.js';
export {
  createMemoryProvider,
  type MemoryProvider,
  type MemoryProviderOptions,
} from './memory/index.js';
// The s3 provider is loaded when a URL names it (openProvider): its HTTP client (undici)
// costs a command ~170 ms to load, which a command on a directory has no use for.
export type { S3Provider, S3ProviderOptions } from './s3/index.js';
export {
  createFaultyProvider,
  type FaultOptions,
  type FaultRecord,
  type FaultyProvider,
} from './faulty.js';

export interface OpenProviderOptions {
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  region?: string;
  /** Further s3 settings (retry, connections, timeouts, conditionalWrites: default 'probe'). */
  s3?: Partial<Omit<S3ProviderOptions, 'endpoint' | 'bucket' | 'prefix'>>;
  /** Where credentials and region are looked up (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** fs: write large object bodies with O_DIRECT where the directory takes it (FsProviderOptions.directWrites, default false). */
  directWrites?: boolean;
}

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;

/**
 * Opens the provider a URL names (see module doc). For s3, probes conditional-write
 * support unless `options.s3.conditionalWrites` says otherwise. Throws RangeError for
 * an unsupported or malformed URL or missing credentials, and the provider's own
 * errors (ProviderError) when it cannot be opened.
 */
export async function openProvider(
  url: string,
  options: OpenProviderOptions = {}
): Promise<Provider> {
  const scheme = SCHEME.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined || (scheme.length === 1 && isAbsolute(url)))
    return createFsProvider({ dir: url, directWrites: options.directWrites ?? false }); // a path (or C:\…)
  if (scheme === 'file') return createFsProvider({ dir: fileURLToPath(url), directWrites: options.directWrites ?? false });
  if (scheme === 'memory') return createMemoryProvider();
  if (scheme === 's3' || scheme === 'http' || scheme === 'https') {
    const opts = s3Options(url, scheme, options);
    const { createS3Provider } = await import('./s3/index.js');
    return createS3Provider(opts);
  }
  throw new RangeError(`unsupported provider URL scheme '${scheme}:' in ${url}`);
}

function s3Options(raw: string, scheme: string, options: OpenProviderOptions): S3ProviderOptions {
  const env = options.env ?? process.env;
  const url = new URL(raw);
  if (url.username || url.password)
    throw new RangeError(
      'credentials in a provider URL are not accepted; use options or the environment'
    );
  const segments = url.pathname.split('/').slice(1).map(decodeURIComponent);
  const bucket = scheme === 's3' ? decodeURIComponent(url.hostname) : (segments.shift() ?? '');
  if (!bucket) throw new RangeError(`no bucket in ${raw}`);
  const joined = segments.join('/');
  const prefix = joined === '' || joined.endsWith('/') ? joined : `${joined}/`;
  const region =
    url.searchParams.get('region') ??
    options.region ??
    env.AWS_REGION ??
    env.AWS_DEFAULT_REGION ??
    'us-east-1';
  const endpoint =
    scheme === 's3'
      ? (url.searchParams.get('endpoint') ??
        env.AWS_ENDPOINT_URL_S3 ??
        env.AWS_ENDPOINT_URL ??
        `https://s3.${region}.amazonaws.com`)
      : url.origin;
  const accessKeyId = options.accessKeyId ?? env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = options.secretAccessKey ?? env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new RangeError(
      's3 provider needs credentials: options.accessKeyId/secretAccessKey or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY'
    );
  }
  return {
    conditionalWrites: 'probe',
    ...options.s3,
    endpoint: new URL(endpoint).origin,
    bucket,
    prefix,
    region,
    accessKeyId,
    secretAccessKey,
    sessionToken: options.sessionToken ?? env.AWS_SESSION_TOKEN,
  };
}
