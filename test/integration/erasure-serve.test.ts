/**
 * The real `strata serve --data 'DIR/disk{1...6}' --erasure 4+2` (dist/src/cli/main.js, a
 * child process) driven by the AWS SDK v3: PUT, GET (whole and ranged), LIST of small objects
 * and a 20 MiB one; then two whole domains lose their contents while the server is stopped,
 * and after a restart every object reads back byte-exact (rebuilt from parity), new writes
 * work, `strata gc` acts on the set directly when it is stopped and through the server while
 * it runs, and `strata verify` over the same set finds the repository sound.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { ACCESS_KEY, CLI, REGION, SECRET_KEY } from './harness.js';
import { etagOf, seeded } from './seeded.js';

const MiB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), 'strata-ec-serve-'));
const DATA = `${dir}/disk{1...6}`;
const BUCKET = 'ec-bucket';

/** Objects written before the domains are lost: small (packed), medium and 20 MiB (striped). */
const OBJECTS: [string, Buffer][] = [
  ['small/a.txt', seeded(100, 1)],
  ['small/b.bin', seeded(4096, 2)],
  ['medium/c.bin', seeded(300 * 1024, 3)],
  ['medium/d.bin', seeded(3 * MiB + 17, 4)],
  ['large/twenty.bin', seeded(20 * MiB, 5)],
  ...Array.from({ length: 20 }, (_, i) => [`many/${String(i).padStart(2, '0')}`, seeded(1000 + i * 37, 100 + i)] as [string, Buffer]),
];

interface Served {
  url: string;
  child: ChildProcess;
  logs: string[];
  stop(): Promise<void>;
}

async function serve(): Promise<Served> {
  const child = spawn(process.execPath, [CLI, 'serve', '--host', '127.0.0.1', '--port', '0', '--data', DATA, '--erasure', '4+2', '--gc-interval', '0', '--lifecycle-interval', '0', '--expiry-interval', '0'], {
    env: { PATH: process.env.PATH ?? '', STRATA_ACCESS_KEY: ACCESS_KEY, STRATA_SECRET_KEY: SECRET_KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${buf}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      logs.push(...d.toString().split('\n').filter(Boolean));
      for (const line of buf.split('\n')) {
        if (line.includes('"msg":"listening"')) {
          clearTimeout(timer);
          resolve((JSON.parse(line) as { url: string }).url);
        }
      }
    });
    child.stderr!.on('data', (d: Buffer) => (buf += d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${buf}`));
    });
  });
  return {
    url,
    child,
    logs,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Runs `strata ARGS` (dist/) to the end. */
function cli(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120_000, env: { PATH: process.env.PATH ?? '', ...env } });
}

function client(url: string): S3Client {
  return new S3Client({
    endpoint: url,
    region: REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
  });
}

async function get(s3: S3Client, key: string, range?: string): Promise<Buffer> {
  const r = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key, ...(range ? { Range: range } : {}) }));
  return Buffer.from(await r.Body!.transformToByteArray());
}

async function listAll(s3: S3Client): Promise<{ key: string; size: number }[]> {
  const out: { key: string; size: number }[] = [];
  let token: string | undefined;
  do {
    const r = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, MaxKeys: 7, ...(token ? { ContinuationToken: token } : {}) }));
    for (const o of r.Contents ?? []) out.push({ key: o.Key!, size: o.Size! });
    token = r.NextContinuationToken;
  } while (token);
  return out;
}

/** Everything GET and LIST must show: byte-exact bodies, sorted keys with their sizes. */
async function expectAll(s3: S3Client, objects: readonly [string, Buffer][]): Promise<void> {
  for (const [key, body] of objects) {
    const got = await get(s3, key);
    expect(got.length, key).toBe(body.length);
    expect(got.equals(body), key).toBe(true);
  }
  const sorted = [...objects].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  expect(await listAll(s3)).toEqual(sorted.map(([key, body]) => ({ key, size: body.length })));
}

describe('strata serve over a six-directory (4,2) erasure set', () => {
  let server: Served | undefined;
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves PUT, GET and LIST, and reads everything back after two domains are wiped', async () => {
    server = await serve();
    const banner = server.logs.filter((l) => l.includes('erasure 4+2 over 6 domains; single-writer: this repository must be served by one process'));
    expect(banner).toHaveLength(1);
    let s3 = client(server.url);
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    for (const [key, body] of OBJECTS) {
      const r = await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
      expect(r.ETag).toBe(etagOf(body));
    }
    await expectAll(s3, OBJECTS);
    const large = OBJECTS.find(([k]) => k === 'large/twenty.bin')![1];
    // A range across a stripe boundary inside the 20 MiB object.
    const from = 5 * MiB - 1000;
    expect((await get(s3, 'large/twenty.bin', `bytes=${from}-${from + 99_999}`)).equals(large.subarray(from, from + 100_000))).toBe(true);
    // Every domain holds fragments: placement spreads the set.
    for (let i = 1; i <= 6; i++) expect(readdirSync(`${dir}/disk${i}`).length, `disk${i}`).toBeGreaterThan(1);
    await server.stop();
    s3.destroy();

    // An admin verb opens the stopped set itself (every domain locked), the same way.
    const gc = cli(['gc', '--dry-run', '--json', '--data', DATA, '--erasure', '4+2']);
    expect(gc.stderr).toMatch(/gc: opened repository/);
    expect(gc.status).toBe(0);
    expect((JSON.parse(gc.stdout) as { liveBlobs: number }).liveBlobs).toBeGreaterThan(0);

    // Two whole domains lose everything (m = 2): the disks were replaced by empty ones.
    for (const lost of [2, 5]) for (const e of readdirSync(`${dir}/disk${lost}`)) rmSync(join(`${dir}/disk${lost}`, e), { recursive: true, force: true });

    server = await serve();
    s3 = client(server.url);
    await expectAll(s3, OBJECTS);
    expect((await get(s3, 'large/twenty.bin', `bytes=${from}-${from + 99_999}`)).equals(large.subarray(from, from + 100_000))).toBe(true);
    // Writes still go to six domains (the wiped ones are empty, not failed).
    const after: [string, Buffer] = ['after/restart.bin', seeded(2 * MiB + 5, 77)];
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: after[0], Body: after[1] }));
    await expectAll(s3, [...OBJECTS, after]);
    // While the server holds the set, an admin verb goes through it (address in disk1).
    const viaServer = cli(['gc', '--dry-run', '--data', DATA, '--erasure', '4+2'], { STRATA_ACCESS_KEY: ACCESS_KEY, STRATA_SECRET_KEY: SECRET_KEY });
    expect(viaServer.stderr).toContain(`a server holds the repository: acting through ${server.url}`);
    expect(viaServer.status).toBe(0);
    await server.stop();
    s3.destroy();

    // The same set, read-only, through strata verify.
    const v = cli(['verify', '--data', DATA, '--erasure', '4+2']);
    expect(v.stderr + v.stdout).toMatch(/result\s+OK/);
    expect(v.status).toBe(0);
  }, 240_000);
});
