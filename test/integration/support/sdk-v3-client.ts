/**
 * @module AWS SDK v3 clients for the integration tests, with a wire log: every request's
 * final signed headers and the raw response status and headers, as the SDK exchanged them.
 * Also the digests a test expects, computed independently of the server (node:crypto and
 * the bit-level references in test/checksum/reference.ts), and small helpers around errors
 * and bodies.
 */
import { createHash } from 'node:crypto';
import { S3Client, type ChecksumAlgorithm, type S3ClientConfig } from '@aws-sdk/client-s3';
import { ACCESS_KEY, REGION, SECRET_KEY } from '../harness.js';
import {
  bytewiseCrc32,
  bytewiseCrc64,
  CRC32_POLY,
  CRC32C_POLY,
  CRC64NVME_POLY,
} from '../../checksum/reference.js';

/** One request as it left the SDK, and what came back (headers only). */
export interface Exchange {
  method: string;
  /** Encoded path. */
  path: string;
  query: Record<string, string | string[] | null>;
  /** Lower-case names, after signing. */
  request: Record<string, string>;
  status: number;
  response: Record<string, string>;
}

/** The exchanges of one or more clients, in order. */
export class WireLog {
  readonly exchanges: Exchange[] = [];

  /** The most recent exchange matching `pred`. Throws when there is none. */
  last(pred: (e: Exchange) => boolean): Exchange {
    for (let i = this.exchanges.length - 1; i >= 0; i--)
      if (pred(this.exchanges[i]!)) return this.exchanges[i]!;
    throw new Error('no matching request captured');
  }
}

type SmithyRequest = {
  method: string;
  path: string;
  query: Exchange['query'];
  headers: Record<string, string>;
};
type SmithyResponse = { statusCode: number; headers: Record<string, string> };

/**
 * A path-style client for `endpoint` with the test credentials and no retries (a retry
 * would hide the first answer), logging to `wire`. `extra` overrides any option.
 */
export function createS3Client(
  endpoint: string,
  wire: WireLog,
  extra: Partial<S3ClientConfig> = {}
): S3Client {
  const c = new S3Client({
    endpoint,
    region: REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
    maxAttempts: 1,
    ...extra,
  });
  // Innermost in the deserialize step: sees the final signed request and the raw response.
  c.middlewareStack.add(
    (next) => async (args) => {
      const req = (args as unknown as { request: SmithyRequest }).request;
      const ex: Exchange = {
        method: req.method,
        path: req.path,
        query: { ...req.query },
        request: { ...req.headers },
        status: 0,
        response: {},
      };
      wire.exchanges.push(ex);
      const out = await next(args);
      const res = (out as unknown as { response: SmithyResponse }).response;
      ex.status = res.statusCode;
      ex.response = { ...res.headers };
      return out;
    },
    { step: 'deserialize', priority: 'low', name: 'strataWireLog' }
  );
  return c;
}

export interface CaughtError {
  /** The SDK's error name: the S3 `<Code>`, or NotFound/NotModified-style names for HEAD. */
  name: string;
  status: number | undefined;
  message: string;
}

/** Awaits `p`, which must fail; returns the error's name and HTTP status. */
export async function failure(p: Promise<unknown>): Promise<CaughtError> {
  try {
    await p;
  } catch (err) {
    const e = err as { name: string; message: string; $metadata?: { httpStatusCode?: number } };
    return { name: e.name, status: e.$metadata?.httpStatusCode, message: e.message };
  }
  throw new Error('expected the request to fail');
}

/** The bytes of a GetObject `Body`. */
export async function bytesOf(body: unknown): Promise<Buffer> {
  const b = body as { transformToByteArray(): Promise<Uint8Array> };
  return Buffer.from(await b.transformToByteArray());
}

const crc32 = bytewiseCrc32(CRC32_POLY);
const crc32c = bytewiseCrc32(CRC32C_POLY);
const crc64nvme = bytewiseCrc64(CRC64NVME_POLY);

function u32b64(v: number): string {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v >>> 0);
  return b.toString('base64');
}

function u64b64(v: bigint): string {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(v);
  return b.toString('base64');
}

/** Base64 of `alg` over `data`, as x-amz-checksum-* headers carry it. */
export function checksumB64(alg: ChecksumAlgorithm, data: Uint8Array): string {
  switch (alg) {
    case 'CRC32':
      return u32b64(crc32(data));
    case 'CRC32C':
      return u32b64(crc32c(data));
    case 'CRC64NVME':
      return u64b64(crc64nvme(data));
    case 'SHA1':
      return createHash('sha1').update(data).digest('base64');
    case 'SHA256':
      return createHash('sha256').update(data).digest('base64');
    default:
      throw new Error(`no reference for ${alg}`);
  }
}
