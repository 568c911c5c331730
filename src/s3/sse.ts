/**
 * @module Server-side encryption at the S3 edge: what a request asks for (its headers, else
 * the bucket's default encryption), the keys a read may use, the response headers S3 sends
 * back, and the requests on which S3 refuses encryption headers.
 *
 * SSE-S3 objects are encrypted under a root key derived from the server's master key
 * (`deriveKey(master, 'strata/sse-s3/v1')`); it reaches the store through each call's
 * options, never through the repository. SSE-C keys come with each request and are used
 * for that request only.
 */
import type { RequestContext } from './context.js';
import type { Endpoint } from './router/endpoint.js';
import { S3Error } from './errors.js';
import { deriveKey, type MasterKey } from '../store/master-key-derive.js';
import type { EncryptionRequest, KeyRing, SseMode } from '../store/crypto/envelope.js';
import { customerKeyFrom, hasAny, SSE_WRITE_HEADERS, writeSseFrom, type CustomerKey } from './sse-headers.js';
import { bucketDefaultEncryption } from './sse-config.js';
import { requireSecureKeyTransport } from './sse-transport.js';

/** The HKDF purpose of the SSE-S3 root key (changing it orphans every SSE-S3 object). */
export const SSE_S3_PURPOSE = 'strata/sse-s3/v1';

/** Operations whose requests may carry x-amz-server-side-encryption and its KMS companions. */
const SSE_HEADER_OPS: ReadonlySet<string> = new Set(['PutObject', 'CopyObject', 'CreateMultipartUpload', 'PostObject']);

const roots = new WeakMap<MasterKey, Buffer>();

/** The SSE-S3 root key, or undefined when the server has no master key. */
export function sseS3Root(r: RequestContext): Buffer | undefined {
  const master = r.deps.masterKey;
  if (!master) return undefined;
  let root = roots.get(master);
  if (!root) roots.set(master, (root = deriveKey(master, SSE_S3_PURPOSE)));
  return root;
}

function sseS3Request(r: RequestContext): EncryptionRequest {
  const root = sseS3Root(r);
  if (!root) {
    throw new S3Error(
      'NotImplemented',
      'Server-side encryption with Strata-managed keys (SSE-S3) needs the server master key: configure one (--master-key-file or STRATA_MASTER_KEY).'
    );
  }
  return { mode: 'sse-s3', root };
}

/** How a write will be encrypted. */
export interface WriteEncryption {
  /** Undefined: stored in plaintext. */
  request?: EncryptionRequest;
  /** The request's own headers asked for it (not the bucket default). */
  explicit: boolean;
  /** SSE-C: the key, for the key-MD5 response header. */
  customer?: CustomerKey;
}

/**
 * The encryption of what a PutObject / CopyObject / CreateMultipartUpload request writes to
 * `bucket`: its SSE headers, else the bucket's default encryption, else none. Reads only
 * headers (`h`: the request's, or a POST Object form's fields as headers) and the bucket's
 * configuration (NoSuchBucket if the bucket is missing). Throws what `writeSseFrom`
 * throws, NotImplemented for SSE-S3 without a master key, and InvalidRequest for an SSE-C
 * key sent in the clear (sse-transport.ts).
 */
export function writeEncryption(r: RequestContext, bucket: string, h: Readonly<Record<string, string | undefined>> = r.headers): WriteEncryption {
  const asked = writeSseFrom(h);
  if (asked.kind === 'sse-c') {
    requireSecureKeyTransport(r);
    return { request: { mode: 'sse-c', root: asked.customer.key }, explicit: true, customer: asked.customer };
  }
  if (asked.kind === 'sse-s3') return { request: sseS3Request(r), explicit: true };
  return bucketDefaultEncryption(r, bucket) ? { request: sseS3Request(r), explicit: false } : { explicit: false };
}

/**
 * The keys a read (or a part upload) may open objects with: the server's SSE-S3 root when
 * there is one, and the customer key the request carries under `prefix` (validated; see
 * customerKeyFrom; refused in the clear, see sse-transport.ts). Returns the parsed customer
 * key too, for the response headers.
 */
export function readKeys(r: RequestContext, prefix?: string): { keys: KeyRing; customer?: CustomerKey } {
  const customer = customerKeyFrom(r.headers, prefix);
  if (customer) requireSecureKeyTransport(r);
  const keys: KeyRing = {};
  const root = sseS3Root(r);
  if (root) keys.sseS3 = root;
  if (customer) keys.customer = customer.key;
  return customer ? { keys, customer } : { keys };
}

/** The response headers S3 sends for an object (or upload) stored with `mode`. */
export function encryptionHeaders(mode: SseMode | undefined, customer?: CustomerKey): Record<string, string> {
  if (mode === 'sse-s3') return { 'x-amz-server-side-encryption': 'AES256' };
  if (mode === 'sse-c' && customer) {
    return { 'x-amz-server-side-encryption-customer-algorithm': 'AES256', 'x-amz-server-side-encryption-customer-key-md5': customer.md5 };
  }
  return {};
}

/**
 * Refuses x-amz-server-side-encryption (and the KMS headers) on requests that write no new
 * object body, as S3 does: `400 InvalidArgument` ("... is not supported for this
 * operation"). Pure apart from reading headers; call once a request is routed.
 */
export function checkSseHeaders(r: RequestContext, e: Endpoint): void {
  if (SSE_HEADER_OPS.has(e.op) || !hasAny(r.headers, SSE_WRITE_HEADERS)) return;
  const name = SSE_WRITE_HEADERS.find((n) => r.headers[n] !== undefined)!;
  throw new S3Error('InvalidArgument', `${name} header is not supported for this operation.`, {
    ArgumentName: name,
    ArgumentValue: (r.headers[name] ?? '').slice(0, 64),
  });
}
