/**
 * `strata serve --direct-io on|off|auto` (STRATA_DIRECT_IO, config key `directIo`): the server
 * says at start whether large bodies skip the page cache (auto by default: off for a plain data
 * directory, on for an erasure set's directory domains; on when asked, where the data directory
 * takes O_DIRECT), and objects a real client wrote under each setting read back byte-exact, whole
 * and ranged, across restarts.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { REGION, removeDataDir, startTestServer, type TestServer } from './harness.js';
import { CREDS } from './support/bounds.js';
import { randomBytes } from '../support/random.js';
import { takesDirect } from '../support/o-direct.js';

const dataDir = mkdtempSync(join(tmpdir(), 'strata-it-directio-'));
afterAll(() => removeDataDir(dataDir));

function reported(s: TestServer): unknown {
  const line = s.logs.map((l) => JSON.parse(l) as { msg?: string; directIo?: unknown }).find((l) => l.msg === 'repository opened');
  expect(line, 'repository opened line').toBeDefined();
  return line!.directIo;
}

it('reports and honours --direct-io; bodies written either way read back exact', { timeout: 60_000 }, async () => {
  const onState = takesDirect(dataDir) ? 'on' : 'off (the directory does not take O_DIRECT writes)';
  const written = new Map<string, Buffer>();
  const rounds: [{ directIo?: 'on' | 'off' | 'auto' }, string][] = [
    [{}, 'off'], // the default (auto) for a plain data directory
    [{ directIo: 'on' }, onState],
    [{ directIo: 'off' }, 'off'],
    [{ directIo: 'auto' }, 'off'],
    [{ directIo: 'on' }, onState],
  ];
  for (const [n, [config, expected]] of rounds.entries()) {
    const s = await startTestServer({ dataDir, config });
    try {
      expect(reported(s)).toBe(expected);
      const s3 = new S3Client({ endpoint: s.url, region: REGION, forcePathStyle: true, credentials: CREDS, maxAttempts: 1 });
      if (n === 0) await s3.send(new CreateBucketCommand({ Bucket: 'dio' }));
      // Past the O_DIRECT threshold and a carrier chunk (8 MiB), with an unaligned tail; and a small one.
      for (const [i, size] of [9 * 1024 * 1024 + 4097, 300 * 1024 + 1, 1000].entries()) {
        const body = Buffer.from(randomBytes(size, n * 10 + i + 1));
        await s3.send(new PutObjectCommand({ Bucket: 'dio', Key: `r${n}/k${i}`, Body: body }));
        written.set(`r${n}/k${i}`, body);
      }
      for (const [key, body] of written) {
        const got = await s3.send(new GetObjectCommand({ Bucket: 'dio', Key: key }));
        expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body), key).toBe(true);
        const from = Math.max(0, body.length - 5000);
        const ranged = await s3.send(new GetObjectCommand({ Bucket: 'dio', Key: key, Range: `bytes=${from}-` }));
        expect(Buffer.from(await ranged.Body!.transformToByteArray()).equals(body.subarray(from)), `${key} tail`).toBe(true);
      }
      s3.destroy();
    } finally {
      await s.stop();
    }
  }
});

it('writes an erasure set\'s fragments around the page cache by default (auto), buffered with --direct-io off; both read back exact', { timeout: 60_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'strata-it-directio-ec-'));
  for (let i = 1; i <= 6; i++) mkdirSync(join(root, `disk${i}`));
  const data = join(root, 'disk{1...6}');
  const written = new Map<string, Buffer>();
  try {
    for (const [n, [config, expected]] of ([
      [{}, 'on where a directory domain takes it'],
      [{ directIo: 'off' }, 'off'],
      [{ directIo: 'auto' }, 'on where a directory domain takes it'],
    ] as const).entries()) {
      const s = await startTestServer({ dataDir: root, config: { data, erasure: '4+2', ...config } });
      try {
        expect(reported(s)).toBe(expected);
        const s3 = new S3Client({ endpoint: s.url, region: REGION, forcePathStyle: true, credentials: CREDS, maxAttempts: 1 });
        if (n === 0) await s3.send(new CreateBucketCommand({ Bucket: 'dio' }));
        const body = Buffer.from(randomBytes(5 * 1024 * 1024 + 333, 70 + n));
        await s3.send(new PutObjectCommand({ Bucket: 'dio', Key: `e${n}`, Body: body }));
        written.set(`e${n}`, body);
        for (const [key, b] of written) {
          const got = await s3.send(new GetObjectCommand({ Bucket: 'dio', Key: key }));
          expect(Buffer.from(await got.Body!.transformToByteArray()).equals(b), key).toBe(true);
        }
        s3.destroy();
      } finally {
        await s.stop();
      }
    }
  } finally {
    removeDataDir(root);
  }
});
