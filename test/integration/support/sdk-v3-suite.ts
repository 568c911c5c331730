/**
 * @module Shared set-up of the AWS SDK v3 integration tests (sdk-v3-*.test.ts): a real
 * server, the two clients (2025+ defaults, and WHEN_REQUIRED), the wire log, and helpers.
 * Exports are live bindings: they hold the current file's server and clients once
 * `setupSdkSuite()`'s beforeAll ran.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { CreateBucketCommand, GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { startTestServer, type TestServer } from '../harness.js';
import { bytesOf, createS3Client, WireLog, type Exchange } from './sdk-v3-client.js';

export const MiB = 1024 * 1024;
/** S3's smallest non-last part. */
export const MIN_PART = 5 * MiB;
/** The size issue 4 names for "a real multipart upload". */
export const BIG = 20 * MiB;

export let s: TestServer;
export let s3: S3Client;
export let s3wr: S3Client;
/** Every request either client made, in order. */
export const wire = new WireLog();
export const lastExchange = (pred: (e: Exchange) => boolean) => wire.last(pred);

export async function getBytes(client: S3Client, bucket: string, key: string, extra: { VersionId?: string } = {}): Promise<Buffer> {
  const g = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, ...extra }));
  return bytesOf(g.Body);
}

/** A raw HTTP/1.1 exchange (nothing added, nothing hidden): the response bytes as sent. */
export function rawHttp(url: string, method: string): Promise<Buffer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('end', () => resolve(Buffer.concat(chunks)));
    sock.on('error', reject);
    const head = [`${method} ${u.pathname}${u.search} HTTP/1.1`, `host: ${u.host}`, 'connection: close'];
    sock.end(`${head.join('\r\n')}\r\n\r\n`);
  });
}

let bucketSeq = 0;
/** A fresh bucket name for one test. */
export async function newBucket(tag: string): Promise<string> {
  const name = `sdk-${tag}-${++bucketSeq}`;
  await s3.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

/** Registers the server and clients for the calling test file. */
export function setupSdkSuite(): void {
  beforeAll(async () => {
    s = await startTestServer();
    s3 = createS3Client(s.url, wire);
    s3wr = createS3Client(s.url, wire, {
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  });
  afterAll(async () => {
    s3?.destroy();
    s3wr?.destroy();
    await s?.stop();
  });
}
