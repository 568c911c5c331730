/**
 * The s3 provider against a real second S3 server (s3rver, in a child process):
 * the shared contract, capability probing, signing, and retries against small
 * misbehaving HTTP servers started here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createS3Provider,
  DEFAULT_PART_BYTES,
  type S3Provider,
} from '../../src/provider/s3/index.js';
import { runProviderContract } from './contract.js';
import { S3RVER_BUCKET, S3RVER_CREDENTIALS, startS3rver, type RunningS3rver } from './s3rver.js';

let server: RunningS3rver;
const opened: S3Provider[] = [];
let namespace = 0;

beforeAll(async () => {
  server = await startS3rver();
});
afterAll(async () => {
  for (const p of opened) await p.close().catch(() => {});
  await server?.stop();
});

async function s3rverProvider(prefix: string): Promise<S3Provider> {
  const p = await createS3Provider({
    endpoint: server.endpoint,
    bucket: S3RVER_BUCKET,
    prefix,
    ...S3RVER_CREDENTIALS,
    conditionalWrites: 'probe',
    retry: { attempts: 2, baseDelayMs: 10 },
  });
  opened.push(p);
  return p;
}

runProviderContract({
  name: 's3 (s3rver)',
  unsizedBufferBytes: DEFAULT_PART_BYTES,
  create: () => s3rverProvider(`ns${++namespace}/`),
  quirks: {
    pathMappedKeys:
      's3rver stores each key at the file path it spells and lists by walking directories',
    nonAtomicPut:
      's3rver writes the PUT body in place, so an interrupted PUT leaves a partial object',
  },
});

describe('s3 provider on s3rver', () => {
  it('probes conditional writes and reports that s3rver does not enforce them', async () => {
    const p = await s3rverProvider('probe/');
    expect(p.capabilities.conditionalWrites).toBe(false);
    const result = await p.probeCapabilities();
    expect(result).toEqual({
      conditionalWrites: false,
      reason: 'If-None-Match: * did not refuse an existing key',
    });
    expect((await p.list()).items).toEqual([]); // the probe cleaned up
  });
});
