/**
 * @module A client for the admin API (router.ts): SigV4-signed JSON requests with a signed
 * body, for the command line's verbs that work through a running server.
 */
import { createHash } from 'node:crypto';
import { signRequest, type Credentials } from '../sigv4/sign.js';

/** Longest an admin request may take before it is abandoned, ms. */
export const ADMIN_TIMEOUT_MS = 30_000;
/** Largest admin response read, bytes (a key list of thousands of keys fits easily). */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export interface AdminClientOptions {
  /** The server's base URL, e.g. http://127.0.0.1:9000. */
  endpoint: string;
  credentials: Credentials;
  /** Region of the signing scope (a server in strict-region mode needs its own). */
  region?: string;
}

/** An error the admin API answered (its JSON code and message, and the HTTP status). */
export class AdminClientError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'AdminClientError';
    this.status = status;
    this.code = code;
  }
}

/**
 * Sends `method` to /_strata/admin/v1/<segments...> with `body` as JSON and returns the
 * parsed JSON answer. Throws AdminClientError for an error answer (JSON error body, or an
 * S3 XML one from a server without the admin API), and Error for network failures.
 */
export async function adminRequest(opts: AdminClientOptions, method: string, segments: string[], body?: unknown, timeoutMs = ADMIN_TIMEOUT_MS): Promise<unknown> {
  const base = new URL(opts.endpoint);
  const path = ['', '_strata', 'admin', 'v1', ...segments].join('/');
  const payload = body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body), 'utf8');
  const headers: Record<string, string> = { host: base.host };
  if (payload.length) headers['content-type'] = 'application/json';
  const signed = signRequest(
    { method, path, headers, payloadHash: createHash('sha256').update(payload).digest('hex') },
    { credentials: opts.credentials, region: opts.region ?? 'us-east-1', service: 's3' }
  );
  const res = await fetch(new URL(signed.encodedPath, base), {
    method,
    headers: { ...headers, ...signed.headers },
    ...(payload.length ? { body: payload } : {}),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  if (text.length > MAX_RESPONSE_BYTES) throw new AdminClientError(res.status, 'ResponseTooLarge', 'the admin response is too large');
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    const code = /<Code>([^<]{1,64})<\/Code>/.exec(text)?.[1] ?? 'UnexpectedResponse';
    const message = /<Message>([^<]{0,512})<\/Message>/.exec(text)?.[1] ?? `HTTP ${res.status} from ${opts.endpoint}`;
    throw new AdminClientError(res.status, code, message);
  }
  if (!res.ok) {
    const e = (json as { error?: { code?: string; message?: string } }).error;
    throw new AdminClientError(res.status, e?.code ?? `HTTP${res.status}`, e?.message ?? `HTTP ${res.status}`);
  }
  return json;
}
