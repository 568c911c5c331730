/**
 * An erasure set whose domains are partly unusable at start (a path that became a file: what
 * a dead or unmounted disk can look like): with up to m of them the server starts, logs each,
 * and serves every object byte-exact; with more than m it refuses to start, naming them.
 * In-process server (test/integration/harness.ts), AWS SDK v3.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { ACCESS_KEY, REGION, SECRET_KEY, startTestServer } from './harness.js';
import { seeded } from './seeded.js';

const MiB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), 'strata-ec-degraded-'));
const DATA = `${dir}/disk{1...6}`;
const BUCKET = 'degraded';
const OBJECTS: [string, Buffer][] = [
  ['s', seeded(700, 1)],
  ['m', seeded(1 * MiB + 3, 2)],
  ['l', seeded(6 * MiB + 11, 3)],
];

const client = (url: string) =>
  new S3Client({ endpoint: url, region: REGION, forcePathStyle: true, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } });

/** Replaces domain directory `n` by a regular file. */
function breakDomain(n: number): void {
  rmSync(`${dir}/disk${n}`, { recursive: true, force: true });
  writeFileSync(`${dir}/disk${n}`, 'not a directory any more');
}

describe('an erasure set with unusable domains at start', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('starts and serves with m domains unusable, and refuses to start with m+1', async () => {
    let server = await startTestServer({ dataDir: dir, config: { data: DATA, erasure: '4+2' } });
    let s3 = client(server.url);
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    for (const [key, body] of OBJECTS) await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
    await server.server!.close();
    s3.destroy();

    breakDomain(3);
    breakDomain(6);
    server = await startTestServer({ dataDir: dir, config: { data: DATA, erasure: '4+2' } });
    s3 = client(server.url);
    expect(server.logs.filter((l) => /domain d[36]: .*is not a directory: serving without it/.test(l))).toHaveLength(2);
    const unopened = server.logs.filter((l) => l.includes('erasure domain could not be opened'));
    expect(unopened.map((l) => (JSON.parse(l) as { domain: string }).domain).sort()).toEqual(['d3', 'd6']);
    for (const [key, body] of OBJECTS) {
      const r = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      expect(Buffer.from(await r.Body!.transformToByteArray()).equals(body), key).toBe(true);
    }
    await server.server!.close();
    s3.destroy();

    breakDomain(1);
    await expect(startTestServer({ dataDir: dir, config: { data: DATA, erasure: '4+2' } })).rejects.toThrow(
      /3 erasure domains cannot be used, more than m = 2:\ndomain d1: .*\ndomain d3: .*\ndomain d6: /
    );
  }, 120_000);
});
