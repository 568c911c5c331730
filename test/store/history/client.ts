/**
 * @module The model-based history test's view of a server: AWS SDK v3 calls that answer
 * status, headers and output whether they succeed or fail, and ListObjectVersions /
 * ListObjectsV2 pages read from the raw XML (the SDK splits <Version> and <DeleteMarker>
 * into two arrays, losing their order, which is what the test checks).
 */
import { request } from 'undici';
import { S3Client } from '@aws-sdk/client-s3';
import { signRequest } from '../../../src/sigv4/index.js';
import { ACCESS_KEY, REGION, SECRET_KEY } from '../../integration/harness.js';

/** What one request answered. */
export interface Answer<T> {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The SDK output of a success. */
  out?: T;
  /** The S3 error code of a failure (the SDK's error name). */
  code?: string;
}

type Sendable<T> = Parameters<S3Client['send']>[0] & { readonly __out?: T };

/** How a read names its past time: the signed `x-strata-as-of` header, or the query parameter. */
export type AsOfForm = 'header' | 'query';

/** Headers and query parameters added to a request before it is signed. */
interface Extra {
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export class Probe {
  readonly sdk: S3Client;
  /** The same client adding this.#extra to a request before signing it. */
  readonly #extraSdk: S3Client;
  #extra: Extra | undefined;
  readonly #url: URL;

  constructor(readonly endpoint: string) {
    this.#url = new URL(endpoint);
    const config = {
      endpoint,
      region: REGION,
      forcePathStyle: true,
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
      maxAttempts: 1,
    };
    this.sdk = new S3Client(config);
    this.#extraSdk = new S3Client(config);
    this.#extraSdk.middlewareStack.add(
      (next) => async (args) => {
        const req = (args as unknown as { request: { headers: Record<string, string>; query: Record<string, string> } }).request;
        Object.assign(req.headers, this.#extra?.headers);
        Object.assign(req.query, this.#extra?.query);
        return next(args);
      },
      { step: 'build', name: 'strataExtra' }
    );
  }

  /** Like call(), with `extra` headers and query parameters signed into the request. */
  async callWith<T>(cmd: Sendable<T> | { input: unknown }, extra: Extra): Promise<Answer<T>> {
    this.#extra = extra;
    try {
      return await this.#send(this.#extraSdk, cmd);
    } finally {
      this.#extra = undefined;
    }
  }

  /** Like call(), as of `time` (RFC 3339), named in `form`. */
  callAsOf<T>(cmd: Sendable<T> | { input: unknown }, time: string, form: AsOfForm): Promise<Answer<T>> {
    return this.callWith(cmd, form === 'query' ? { query: { 'x-strata-as-of': time } } : { headers: { 'x-strata-as-of': time } });
  }

  /** Sends `cmd`; never throws for an S3 error answer (only for a transport failure). */
  call<T>(cmd: Sendable<T> | { input: unknown }): Promise<Answer<T>> {
    return this.#send(this.sdk, cmd);
  }

  async #send<T>(client: S3Client, cmd: Sendable<T> | { input: unknown }): Promise<Answer<T>> {
    let headers: Record<string, string> = {};
    try {
      const out = (await client.send(cmd as never, {})) as T & { $metadata: { httpStatusCode?: number } };
      // The SDK keeps no raw headers on success: the outputs carry what the test needs.
      return { status: out.$metadata.httpStatusCode ?? 0, headers, out };
    } catch (err) {
      const e = err as { name: string; $metadata?: { httpStatusCode?: number }; $response?: { statusCode?: number; headers?: Record<string, string> } };
      const status = e.$metadata?.httpStatusCode ?? e.$response?.statusCode;
      if (status === undefined) throw err;
      headers = lowerKeys(e.$response?.headers ?? {});
      return { status, headers, code: e.name };
    }
  }

  /** A GET on the bucket with `query`, signed; the status and body text. */
  async rawGet(bucket: string, query: Record<string, string>): Promise<{ status: number; text: string }> {
    const s = signRequest(
      { method: 'GET', path: `/${bucket}`, query, headers: { host: this.#url.host } },
      { credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, region: REGION, service: 's3' }
    );
    const target = s.encodedQuery ? `${s.encodedPath}?${s.encodedQuery}` : s.encodedPath;
    const res = await request(new URL(target, this.#url), { method: 'GET', headers: { host: this.#url.host, ...s.headers } });
    return { status: res.statusCode, text: await res.body.text() };
  }

  destroy(): void {
    this.sdk.destroy();
    this.#extraSdk.destroy();
  }
}

function lowerKeys(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), String(v)]));
}

/** One <Version> or <DeleteMarker>, in document order. */
export interface PageEntry {
  marker: boolean;
  key: string;
  id: string;
  isLatest: boolean;
  /** Unquoted (versions only). */
  etag?: string;
  size?: number;
}

export interface VersionsPage {
  entries: PageEntry[];
  prefixes: string[];
  isTruncated: boolean;
  nextKeyMarker?: string;
  nextVersionIdMarker?: string;
  maxKeys: number;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescapeXml(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (m, e: string) => {
    if (e.startsWith('#x')) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(parseInt(e.slice(1), 10));
    const v = ENTITIES[e];
    if (v === undefined) throw new Error(`unknown XML entity ${m}`);
    return v;
  });
}

/** The text of the first `<name>` directly in `xml` (undefined when absent). */
function leaf(xml: string, name: string): string | undefined {
  const m = new RegExp(`<${name}>([^<]*)</${name}>|<${name}/>`).exec(xml);
  if (!m) return undefined;
  return unescapeXml(m[1] ?? '');
}

/** `encoding-type=url` decoding as botocore does it (unquote_plus). */
function urlDecode(s: string): string {
  return decodeURIComponent(s.replace(/\+/g, ' '));
}

/** Parses a ListVersionsResult document; throws on anything it does not expect. */
export function parseVersionsPage(xml: string): VersionsPage {
  if (!/^<\?xml[^>]*\?>\s*<ListVersionsResult[\s>]/.test(xml)) throw new Error(`not a ListVersionsResult: ${xml.slice(0, 200)}`);
  // Top-level fields come before the first entry; entries and prefixes are parsed apart.
  const body = xml.slice(0, xml.search(/<(Version|DeleteMarker|CommonPrefixes)>|<\/ListVersionsResult>/));
  const url = leaf(body, 'EncodingType') === 'url';
  const dec = (s: string | undefined) => (s === undefined ? undefined : url ? urlDecode(s) : s);
  const entries: PageEntry[] = [];
  for (const m of xml.matchAll(/<(Version|DeleteMarker)>(.*?)<\/\1>/gs)) {
    const x = m[2]!;
    const e: PageEntry = {
      marker: m[1] === 'DeleteMarker',
      key: dec(leaf(x, 'Key'))!,
      id: leaf(x, 'VersionId')!,
      isLatest: leaf(x, 'IsLatest') === 'true',
    };
    if (!e.marker) {
      e.etag = leaf(x, 'ETag')!.replace(/"/g, '');
      e.size = Number(leaf(x, 'Size'));
    }
    entries.push(e);
  }
  const prefixes = [...xml.matchAll(/<CommonPrefixes>(.*?)<\/CommonPrefixes>/gs)].map((m) => dec(leaf(m[1]!, 'Prefix'))!);
  const page: VersionsPage = { entries, prefixes, isTruncated: leaf(body, 'IsTruncated') === 'true', maxKeys: Number(leaf(body, 'MaxKeys')) };
  const nk = dec(leaf(body, 'NextKeyMarker'));
  const nv = leaf(body, 'NextVersionIdMarker');
  if (nk !== undefined) page.nextKeyMarker = nk;
  if (nv !== undefined) page.nextVersionIdMarker = nv;
  return page;
}

export interface ObjectsPage {
  keys: { key: string; etag: string; size: number }[];
  prefixes: string[];
  isTruncated: boolean;
  next?: string;
}

/** Parses a ListBucketResult (ListObjectsV2) document. */
export function parseObjectsPage(xml: string): ObjectsPage {
  if (!/^<\?xml[^>]*\?>\s*<ListBucketResult[\s>]/.test(xml)) throw new Error(`not a ListBucketResult: ${xml.slice(0, 200)}`);
  const body = xml.slice(0, xml.search(/<(Contents|CommonPrefixes)>|<\/ListBucketResult>/));
  const url = leaf(body, 'EncodingType') === 'url';
  const dec = (s: string) => (url ? urlDecode(s) : s);
  const keys = [...xml.matchAll(/<Contents>(.*?)<\/Contents>/gs)].map((m) => ({
    key: dec(leaf(m[1]!, 'Key')!),
    etag: leaf(m[1]!, 'ETag')!.replace(/"/g, ''),
    size: Number(leaf(m[1]!, 'Size')),
  }));
  const prefixes = [...xml.matchAll(/<CommonPrefixes>(.*?)<\/CommonPrefixes>/gs)].map((m) => dec(leaf(m[1]!, 'Prefix')!));
  const page: ObjectsPage = { keys, prefixes, isTruncated: leaf(body, 'IsTruncated') === 'true' };
  const next = leaf(body, 'NextContinuationToken');
  if (next !== undefined) page.next = next;
  return page;
}
