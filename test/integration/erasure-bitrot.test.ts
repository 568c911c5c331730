/**
 * Bit rot under a running server: a byte flipped on disk in a data fragment of a large
 * object's chunk blob while the server holds it open. GETs (AWS SDK v3, whole and ranged)
 * still return every byte exact: the store's entry CRCs catch the damage on the first read
 * (made without the fragment checks, ReadOptions.endToEnd), the read made again with them
 * finds the damaged fragment and rebuilds around it, and the server repairs it in the
 * background (heal on read): the damaged file is rewritten. In-process server
 * (test/integration/harness.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { parseChildKey } from '../../src/provider/erasure/child-key.js';
import { BLOCK_BYTES, CRC_BYTES, HEADER_BYTES as FRAGMENT_HEADER } from '../../src/provider/erasure/geometry.js';
import { HEADER_BYTES as FILE_HEADER } from '../../src/provider/fs/blob-file.js';
import { walkKeys } from '../../src/provider/fs/walk.js';
import { ACCESS_KEY, REGION, SECRET_KEY, startTestServer } from './harness.js';
import { seeded } from './seeded.js';

const MiB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), 'strata-ec-bitrot-'));
const DATA = `${dir}/disk{1...6}`;
const BUCKET = 'bitrot';
const BIG = seeded(6 * MiB + 11, 7);
const SMALL = seeded(700, 8);

const client = (url: string) =>
  new S3Client({ endpoint: url, region: REGION, forcePathStyle: true, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } });

interface FragmentFile {
  path: string;
  key: string;
  index: number;
  layout: string;
}

/** Every fragment or copy file of every domain, with the logical key it belongs to. */
async function fragmentFiles(): Promise<FragmentFile[]> {
  const out: FragmentFile[] = [];
  for (let d = 1; d <= 6; d++) {
    for await (const e of walkKeys(join(dir, `disk${d}`, 'blobs'), '', '')) {
      const name = parseChildKey(Buffer.from(e.keyHex, 'hex').toString('utf8'));
      if (name) out.push({ path: e.path, key: name.key, index: name.index, layout: name.layout });
    }
  }
  return out;
}

/** Flips a bit of logical byte `at` of the fragment in `path` (in place: the server's open handles see it). */
function flip(path: string, at: number): void {
  const b = readFileSync(path);
  b[FILE_HEADER + FRAGMENT_HEADER + at + CRC_BYTES * Math.floor(at / BLOCK_BYTES)] ^= 0x20;
  writeFileSync(path, b);
}

async function get(s3: S3Client, key: string, range?: string): Promise<Buffer> {
  const r = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key, ...(range ? { Range: range } : {}) }));
  return Buffer.from(await r.Body!.transformToByteArray());
}

describe('bit rot under a running erasure server', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves every byte exact from a damaged fragment, and heals it', async () => {
    const server = await startTestServer({ dataDir: dir, config: { data: DATA, erasure: '4+2' } });
    const s3 = client(server.url);
    try {
      await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'big', Body: BIG }));
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'small', Body: SMALL }));
      expect((await get(s3, 'big')).equals(BIG)).toBe(true);
      expect((await get(s3, 'small')).equals(SMALL)).toBe(true);

      const files = await fragmentFiles();
      // The big object's chunk blob is striped: damage data fragment 1 near its start.
      const chunk = files.find((f) => f.key.startsWith('chunks/') && f.layout === 'striped' && f.index === 1)!;
      expect(chunk).toBeDefined();
      flip(chunk.path, 1000);
      const before = readFileSync(chunk.path);

      expect((await get(s3, 'big')).equals(BIG)).toBe(true);
      expect((await get(s3, 'big', 'bytes=500-200000')).equals(BIG.subarray(500, 200_001))).toBe(true);
      expect((await get(s3, 'small')).equals(SMALL)).toBe(true);

      // Heal on read: the damaged fragment is rewritten in the background.
      const deadline = Date.now() + 30_000;
      const healed = () => {
        try {
          return !readFileSync(chunk.path).equals(before);
        } catch {
          return true; // replaced by a new write's file
        }
      };
      while (!healed() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(healed()).toBe(true);
      expect((await get(s3, 'big')).equals(BIG)).toBe(true);
    } finally {
      s3.destroy();
      await server.server!.close();
    }
  }, 120_000);
});
