/**
 * The real `strata serve --erasure 10+4` over 14 directory domains, started under a soft limit
 * of 512 open files (`ulimit -n`, as a service manager may set a lower one), driven by the AWS
 * SDK v3: 48 striped objects are written and read back byte-exact, then written again. Each of
 * the 14 fs children used to cache up to 256 blob handles and 64 directory handles (4,480
 * descriptors in all), so such a server failed its opens (EMFILE) once it had touched a few
 * hundred files: GETs and then PUTs answered 500. The caches now share a quarter of the limit
 * (src/provider/fs/fd-budget.ts), and the connection cap is lowered to half of it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { ACCESS_KEY, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { seeded } from './seeded.js';

const LIMIT = 512;
const dir = mkdtempSync(join(tmpdir(), 'strata-ec-fd-'));
const BUCKET = 'fd-bucket';
/** Just above the 1 MiB stripe threshold: every object is one striped blob, 14 fragment files. */
const SIZE = 1024 * 1024 + 1;
const COUNT = 48;

let server: TestServer | undefined;

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(`${dir}.master-key`, { force: true });
});

describe(`(10,4) over 14 directories under a limit of ${LIMIT} open files`, () => {
  it('writes, reads back byte-exact and writes again, never running out of descriptors', async () => {
    server = await startTestServer({
      child: true,
      dataDir: `${dir}/disk{1...14}`,
      args: ['--erasure', '10+4', '--gc-interval', '0', '--lifecycle-interval', '0', '--expiry-interval', '0'],
      // sh lowers its own soft limit, then becomes node: the server runs under it.
      launcher: ['/bin/sh', '-c', `ulimit -n ${LIMIT} && exec "$0" "$@"`, process.execPath],
    });
    const pid = server.child!.pid!;
    expect(readFileSync(`/proc/${pid}/limits`, 'utf8')).toMatch(new RegExp(`Max open files\\s+${LIMIT}\\s`));
    // Its connection cap is half the limit, and it says so (the default is 1,024).
    expect(server.logs.join('\n')).toContain(`max-connections 1024 lowered to ${LIMIT / 2}`);
    const s3 = new S3Client({ endpoint: server.url, region: REGION, forcePathStyle: true, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } });
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const body = (i: number) => seeded(SIZE, 1000 + i);
    for (let i = 0; i < COUNT; i++) await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `o/${i}`, Body: body(i) }));
    for (let i = 0; i < COUNT; i++) {
      const r = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: `o/${i}` }));
      expect(Buffer.from(await r.Body!.transformToByteArray()).equals(body(i))).toBe(true);
    }
    for (let i = 0; i < 8; i++) await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `again/${i}`, Body: body(i) }));
    expect(readdirSync(`/proc/${pid}/fd`).length).toBeLessThan(LIMIT / 2);
    s3.destroy();
  }, 120_000);
});
