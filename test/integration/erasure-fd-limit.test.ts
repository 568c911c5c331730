/**
 * The real `strata serve --erasure 10+4` over 14 directory domains, started under a soft limit
 * of 512 open files (`ulimit -n`, as a service manager may set a lower one), driven by the AWS
 * SDK v3: 48 striped objects are written and read back byte-exact, then written again. Each of
 * the 14 fs children used to cache up to 256 blob handles and 64 directory handles (4,480
 * descriptors in all), so such a server failed its opens (EMFILE) once it had touched a few
 * hundred files: GETs and then PUTs answered 500. The caches now share a quarter of the limit
 * (src/provider/fs/fd-budget.ts), and the connection cap is lowered to half of it.
 *
 * Then 64 striped PUTs at once, and 64 GETs of them at once. Each PUT in flight writes 14
 * temporary files and each GET opens up to 14 fragment files: before the erasure write gate
 * (src/provider/erasure/write-gate.ts) and the handle caches' hard bound (fs/handle-cache.ts),
 * both bursts failed most of their requests (503 and 500: EMFILE).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { ACCESS_KEY, METRICS_AUTH, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { seeded } from './seeded.js';

const LIMIT = 512;
const dir = mkdtempSync(join(tmpdir(), 'strata-ec-fd-'));
const BUCKET = 'fd-bucket';
/** Just above the 1 MiB stripe threshold: every object is one striped blob, 14 fragment files. */
const SIZE = 1024 * 1024 + 1;
const COUNT = 48;
/** Striped PUTs sent at once in the second case. */
const CONCURRENT = 64;

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

  it('takes many concurrent striped PUTs without running out of descriptors', async () => {
    // Each striped PUT in flight writes one temporary file per fragment (14 here): 64 at once
    // would need ~900 descriptors. Every PUT must land and no open may fail. On a loaded machine
    // a PUT may wait out the gate (10 s) and be told 503, which the SDK retries, as it would.
    const s3 = new S3Client({
      endpoint: server!.url, region: REGION, forcePathStyle: true, maxAttempts: 5,
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
      requestHandler: { httpAgent: { maxSockets: CONCURRENT, keepAlive: true }, requestTimeout: 60_000 },
    });
    const body = (i: number) => seeded(SIZE, 5000 + i);
    const gauges = async () => {
      const text = await (await fetch(`${server!.url}/metrics`, { headers: METRICS_AUTH })).text();
      const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
      return { inFlight: value('strata_erasure_writes_in_flight'), waiting: value('strata_erasure_writes_waiting'), refused: value('strata_erasure_writes_refused_total') };
    };
    let sampling = true;
    const seen = { inFlight: 0, waiting: 0 };
    const sampler = (async () => {
      while (sampling) {
        const g = await gauges();
        seen.inFlight = Math.max(seen.inFlight, g.inFlight);
        seen.waiting = Math.max(seen.waiting, g.waiting);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const results = await Promise.allSettled(
      Array.from({ length: CONCURRENT }, (_, i) => s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `burst/${i}`, Body: body(i) })))
    );
    sampling = false;
    await sampler;
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`${i}: ${(r.reason as Error).name} ${(r.reason as Error).message}`] : []));
    expect(failed).toEqual([]);
    // The write gate held them to an eighth of the limit in temporary files (64 / 14 = 4 at a
    // time); the others waited their turn.
    expect(seen.inFlight).toBeGreaterThan(0);
    expect(seen.inFlight).toBeLessThanOrEqual(Math.floor(LIMIT / 8 / 14));
    expect(seen.waiting).toBeGreaterThan(0);
    // And all of them read back at once, byte-exact.
    const reads = await Promise.allSettled(
      Array.from({ length: CONCURRENT }, async (_, i) => {
        const r = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: `burst/${i}` }));
        return Buffer.from(await r.Body!.transformToByteArray()).equals(body(i));
      })
    );
    const bad = reads.flatMap((r, i) => (r.status === 'rejected' ? [`${i}: ${(r.reason as Error).name} ${(r.reason as Error).message}`] : r.value ? [] : [`${i}: wrong bytes`]));
    expect(bad).toEqual([]);
    // No open failed for want of descriptors, on either burst.
    expect(server!.logs.filter((l) => l.includes('EMFILE'))).toEqual([]);
    s3.destroy();
  }, 120_000);
});
