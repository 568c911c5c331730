/**
 * The real `strata serve --erasure 10+4` over 14 directory domains, started under a soft limit
 * of 512 open files (`ulimit -n`, as a service manager may set a lower one), driven by the AWS
 * SDK v3: 48 striped objects are written and read back byte-exact, then written again. Each of
 * the 14 fs children used to cache up to 256 blob handles and 64 directory handles (4,480
 * descriptors in all), so such a server failed its opens (EMFILE) once it had touched a few
 * hundred files: GETs and then PUTs answered 500. The caches now share a quarter of the limit
 * (src/provider/fs/fd-budget.ts), and the connection cap is lowered to half of it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { ACCESS_KEY, CLI, REGION, SECRET_KEY } from './harness.js';
import { seeded } from './seeded.js';

const LIMIT = 512;
const dir = mkdtempSync(join(tmpdir(), 'strata-ec-fd-'));
const BUCKET = 'fd-bucket';
/** Just above the 1 MiB stripe threshold: every object is one striped blob, 14 fragment files. */
const SIZE = 1024 * 1024 + 1;
const COUNT = 48;

let child: ChildProcess | undefined;
/** What the server printed (JSON log lines on stdout). */
let out = '';

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
  rmSync(`${dir}.master-key`, { force: true });
});

async function serve(): Promise<string> {
  // sh lowers its own soft limit, then becomes node: the server runs under it.
  child = spawn('/bin/sh', ['-c', `ulimit -n ${LIMIT} && exec "$0" "$@"`, process.execPath, CLI, 'serve', '--host', '127.0.0.1', '--port', '0', '--data', `${dir}/disk{1...14}`, '--erasure', '10+4', '--gc-interval', '0', '--lifecycle-interval', '0', '--expiry-interval', '0'], {
    env: { PATH: process.env.PATH ?? '', STRATA_ACCESS_KEY: ACCESS_KEY, STRATA_SECRET_KEY: SECRET_KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const c = child;
  return new Promise<string>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${buf}`)), 60_000);
    c.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      out += d.toString();
      for (const line of buf.split('\n')) {
        if (line.includes('"msg":"listening"')) {
          clearTimeout(timer);
          resolve((JSON.parse(line) as { url: string }).url);
        }
      }
    });
    c.stderr!.on('data', (d: Buffer) => (buf += d.toString()));
    c.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${buf}`));
    });
  });
}

describe(`(10,4) over 14 directories under a limit of ${LIMIT} open files`, () => {
  it('writes, reads back byte-exact and writes again, never running out of descriptors', async () => {
    const url = await serve();
    const limits = readFileSync(`/proc/${child!.pid}/limits`, 'utf8');
    expect(limits).toMatch(new RegExp(`Max open files\\s+${LIMIT}\\s`));
    // Its connection cap is half the limit, and it says so (the default is 1,024).
    expect(out).toContain(`max-connections 1024 lowered to ${LIMIT / 2}`);
    const s3 = new S3Client({ endpoint: url, region: REGION, forcePathStyle: true, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } });
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const body = (i: number) => seeded(SIZE, 1000 + i);
    for (let i = 0; i < COUNT; i++) await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `o/${i}`, Body: body(i) }));
    for (let i = 0; i < COUNT; i++) {
      const r = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: `o/${i}` }));
      expect(Buffer.from(await r.Body!.transformToByteArray()).equals(body(i))).toBe(true);
    }
    for (let i = 0; i < 8; i++) await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `again/${i}`, Body: body(i) }));
    const open = readdirSync(`/proc/${child!.pid}/fd`).length;
    expect(open).toBeLessThan(LIMIT / 2);
    s3.destroy();
  }, 120_000);
});
