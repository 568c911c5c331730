/**
 * An erasure set mixing directory and S3 domains: four directories and two buckets of another
 * (plain) Strata server, `--data 'DIR/d{1...4},http://HOST/dom5/p,http://HOST/dom6/p' --erasure 4+2`.
 * Objects land on both kinds of domain and read back byte-exact; with the S3 server gone (two
 * domains unreachable) the set still starts, says which domains it serves without, and reads
 * everything back. In-process servers (test/integration/harness.ts), AWS SDK v3.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { ACCESS_KEY, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { seeded } from './seeded.js';

const MiB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), 'strata-ec-s3dom-'));
const BUCKET = 'mixed';
const OBJECTS: [string, Buffer][] = [
  ['tiny', seeded(300, 1)],
  ['three-mib', seeded(3 * MiB + 1, 2)],
  ['nine-mib', seeded(9 * MiB - 7, 3)],
];

const client = (url: string) =>
  new S3Client({ endpoint: url, region: REGION, forcePathStyle: true, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } });

async function body(s3: S3Client, bucket: string, key: string): Promise<Buffer> {
  const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await r.Body!.transformToByteArray());
}

describe('an erasure set of directories and S3 endpoints', () => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const s of servers.reverse()) await s.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores on both kinds, and serves with the S3 domains gone', async () => {
    // The S3 domains' credentials come from the environment, as on the command line.
    process.env.AWS_ACCESS_KEY_ID = ACCESS_KEY;
    process.env.AWS_SECRET_ACCESS_KEY = SECRET_KEY;
    process.env.AWS_REGION = REGION;
    const backend = await startTestServer();
    servers.push(backend);
    const b = client(backend.url);
    for (const name of ['dom5', 'dom6']) await b.send(new CreateBucketCommand({ Bucket: name }));
    const data = `${dir}/d{1...4},${backend.url}/dom5/p,${backend.url}/dom6/p`;

    let ec = await startTestServer({ dataDir: dir, config: { data, erasure: '4+2' } });
    servers.push(ec);
    let s3 = client(ec.url);
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    for (const [key, bytes] of OBJECTS) await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: bytes }));
    for (const [key, bytes] of OBJECTS) expect((await body(s3, BUCKET, key)).equals(bytes), key).toBe(true);
    for (const name of ['dom5', 'dom6']) {
      const listed = await b.send(new ListObjectsV2Command({ Bucket: name, Prefix: 'p/' }));
      expect(listed.KeyCount, name).toBeGreaterThan(0);
    }
    for (let i = 1; i <= 4; i++) expect(readdirSync(`${dir}/d${i}`).length, `d${i}`).toBeGreaterThan(1);
    await ec.server!.close();
    s3.destroy();

    await backend.server!.close();
    b.destroy();
    ec = await startTestServer({ dataDir: dir, config: { data, erasure: '4+2' } });
    servers.push(ec);
    s3 = client(ec.url);
    const unopened = ec.logs.filter((l) => l.includes('erasure domain could not be opened'));
    expect(unopened.map((l) => (JSON.parse(l) as { domain: string }).domain).sort()).toEqual(['d5', 'd6']);
    for (const [key, bytes] of OBJECTS) expect((await body(s3, BUCKET, key)).equals(bytes), key).toBe(true);
    s3.destroy();
  }, 180_000);
});
