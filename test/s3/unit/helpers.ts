/**
 * @module Shared helpers of the S3 protocol unit tests: a smithy-based signer (the signer
 * inside the AWS SDK for JavaScript), error assertions and stream collection.
 */
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { SourceData } from '@smithy/types';
import { expect } from 'vitest';
import { S3Error, type S3ErrorCode } from '../../../src/s3/errors.js';
import { uriEncode } from '../../../src/sigv4/encode.js';

/** The example credentials of the AWS documentation. */
export const AWS_EXAMPLE = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};

export const TEST_CREDS = { accessKeyId: 'AKIDSTRATA', secretAccessKey: 'sekret/with+chars=' };

/** Knows the two credential pairs above. */
export function lookup(id: string): string | undefined {
  if (id === AWS_EXAMPLE.accessKeyId) return AWS_EXAMPLE.secretAccessKey;
  if (id === TEST_CREDS.accessKeyId) return TEST_CREDS.secretAccessKey;
  return undefined;
}

function bytesOf(data: SourceData): string | Uint8Array {
  if (typeof data === 'string') return data;
  if (ArrayBuffer.isView(data))
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

/** The smithy Checksum shape over node:crypto (what @smithy/hash-node provides). */
export class NodeSha256 {
  #h: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: SourceData) {
    this.#h = secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(secret));
  }
  update(data: SourceData): void {
    this.#h.update(bytesOf(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#h.digest());
  }
  reset(): void {}
}

export function smithy(region = 'us-east-1', credentials = TEST_CREDS): SignatureV4 {
  return new SignatureV4({
    credentials,
    region,
    service: 's3',
    sha256: NodeSha256,
    uriEscapePath: false,
  });
}

/** The wire path the SDK sends for a key: each segment strictly URI-encoded. */
export function sdkPath(bucket: string, key: string): string {
  return `/${bucket}/${key
    .split('/')
    .map((s) => uriEncode(s))
    .join('/')}`;
}

/** A query as the SDK puts it on the wire (strict encoding, `name=` for empty values). */
export function wireQuery(query: Record<string, string>): string {
  return Object.entries(query)
    .map(([k, v]) => `${uriEncode(k)}=${uriEncode(v)}`)
    .join('&');
}

export interface SignedTestRequest {
  method: string;
  rawTarget: string;
  headers: Record<string, string>;
}

/** Signs a request with smithy's Authorization-header signer; returns it as received. */
export async function signHeader(opts: {
  method: string;
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  payloadHash?: string;
  date: Date;
  region?: string;
  host?: string;
}): Promise<SignedTestRequest> {
  const host = opts.host ?? '127.0.0.1:9000';
  const [hostname, port] = host.split(':');
  const headers: Record<string, string> = {
    host,
    'x-amz-content-sha256':
      opts.payloadHash ?? 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    ...opts.headers,
  };
  const signed = await smithy(opts.region).sign(
    {
      method: opts.method,
      protocol: 'http:',
      hostname: hostname!,
      port: port ? Number(port) : undefined,
      path: opts.path,
      query: opts.query ?? {},
      headers,
    },
    { signingDate: opts.date }
  );
  const lower: Record<string, string> = {};
  for (const [k, v] of Object.entries(signed.headers)) lower[k.toLowerCase()] = String(v);
  const q = wireQuery(opts.query ?? {});
  return { method: opts.method, rawTarget: q ? `${opts.path}?${q}` : opts.path, headers: lower };
}

/** Runs `fn` and asserts it throws an S3Error with `code`; returns the error. */
export function expectS3Error(fn: () => unknown, code: S3ErrorCode): S3Error {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(S3Error);
    expect((e as S3Error).code, (e as S3Error).message).toBe(code);
    return e as S3Error;
  }
  throw new Error(`expected S3Error ${code}, nothing was thrown`);
}

/** Like {@link expectS3Error} for promises. */
export async function expectS3Rejection(p: Promise<unknown>, code: S3ErrorCode): Promise<S3Error> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(S3Error);
    expect((e as S3Error).code, (e as S3Error).message).toBe(code);
    return e as S3Error;
  }
  throw new Error(`expected S3Error ${code}, the promise resolved`);
}
