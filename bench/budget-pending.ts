/**
 * @module Measures whether the default pending budget (64 MiB) carries the large writes real
 * clients make: 16 concurrent 16 MiB PUTs, and one 5 GiB multipart upload (80 parts of 64 MiB,
 * 4 in flight, as the SDKs' parallel uploaders do), through the HTTP server and AWS SDK v3 with
 * retries off (a SlowDown would fail the run instead of hiding behind a retry).
 *
 * Reports for each lane: elapsed, MB/s, the pending budget's peak use, refusals. Run:
 *   npm run build:js && node dist/bench/budget-pending.js [--quick] [--dir DIR]
 * `--quick` makes the multipart upload 320 MiB (5 parts). The data directory (default a fresh
 * one under the OS temp directory) is removed at the end.
 */
// First, as in the `strata` command: the Reed-Solomon build the server runs (src/wasm/relaxed-simd.ts).
import '../src/wasm/relaxed-simd.js';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand, HeadObjectCommand, PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { startServer } from '../src/server/server.js';

const MIB = 1024 * 1024;
const ACCESS = 'BENCHBUDGETACCESS001';
const SECRET = 'bench-budget-secret-0123456789abcdefghij';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const dirArg = args.indexOf('--dir');
const base = dirArg >= 0 ? args[dirArg + 1]! : tmpdir();
const dataDir = mkdtempSync(join(base, 'strata-bench-budget-'));

/** A deterministic 64 MiB-or-less buffer, different per `seed` (first 8 bytes). */
function block(size: number, seed: number): Buffer {
  const b = Buffer.alloc(size);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < size; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b.writeUInt32LE(x >>> 0, i);
  }
  return b;
}

async function main(): Promise<void> {
  const server = await startServer({ host: '127.0.0.1', port: 0, data: dataDir, log: 'off', credentials: [{ accessKeyId: ACCESS, secretAccessKey: SECRET }] });
  const budget = server.store.repo.budget;
  const client = new S3Client({ endpoint: server.url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: ACCESS, secretAccessKey: SECRET }, maxAttempts: 1 });
  const lines: string[] = [`pending budget ${budget.limit / MIB} MiB (default)`];
  try {
    await client.send(new CreateBucketCommand({ Bucket: 'bench' }));

    // Lane 1: 16 concurrent 16 MiB PUTs.
    const bodies = Array.from({ length: 16 }, (_, i) => block(16 * MIB, i + 1));
    let t = performance.now();
    const refusals0 = budget.refusals;
    await Promise.all(bodies.map((b, i) => client.send(new PutObjectCommand({ Bucket: 'bench', Key: `put-${i}`, Body: b, ContentLength: b.length }))));
    let ms = performance.now() - t;
    for (const [i, b] of bodies.entries()) {
      const h = await client.send(new HeadObjectCommand({ Bucket: 'bench', Key: `put-${i}` }));
      if (h.ContentLength !== b.length || h.ETag !== `"${createHash('md5').update(b).digest('hex')}"`) throw new Error(`put-${i} stored wrong`);
    }
    lines.push(`16 x 16 MiB concurrent PUTs: ok, ${ms.toFixed(0)} ms, ${((256 * MIB) / MIB / (ms / 1000)).toFixed(1)} MiB/s, peak pending ${(budget.peak / MIB).toFixed(2)} MiB, refusals ${budget.refusals - refusals0}`);

    // Lane 2: one multipart upload of 80 x 64 MiB (5 GiB), 4 parts in flight.
    const parts = quick ? 5 : 80;
    const partSize = 64 * MIB;
    const data = block(partSize, 99);
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: 'bench', Key: 'big' }));
    const etags: string[] = [];
    const md5s: Buffer[] = [];
    t = performance.now();
    const refusals1 = budget.refusals;
    let next = 1;
    const worker = async () => {
      for (;;) {
        const n = next++;
        if (n > parts) return;
        // Each part differs in its first 8 bytes (a copy per part in flight: 4 x 64 MiB of client memory).
        const body = Buffer.from(data);
        body.writeDoubleLE(n, 0);
        md5s[n - 1] = createHash('md5').update(body).digest();
        const r = await client.send(new UploadPartCommand({ Bucket: 'bench', Key: 'big', UploadId, PartNumber: n, Body: body, ContentLength: body.length }));
        etags[n - 1] = r.ETag!;
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    await client.send(
      new CompleteMultipartUploadCommand({ Bucket: 'bench', Key: 'big', UploadId, MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) } })
    );
    ms = performance.now() - t;
    const h = await client.send(new HeadObjectCommand({ Bucket: 'bench', Key: 'big' }));
    const want = `"${createHash('md5').update(Buffer.concat(md5s)).digest('hex')}-${parts}"`;
    if (h.ContentLength !== parts * partSize || h.ETag !== want) throw new Error(`big stored wrong: ${h.ContentLength} ${h.ETag} (want ${want})`);
    const gib = (parts * partSize) / 1024 / MIB;
    lines.push(`multipart ${gib.toFixed(2)} GiB (${parts} x 64 MiB, 4 in flight): ok, ${(ms / 1000).toFixed(1)} s, ${((parts * partSize) / MIB / (ms / 1000)).toFixed(1)} MiB/s, peak pending ${(budget.peak / MIB).toFixed(2)} MiB, refusals ${budget.refusals - refusals1}`);
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.master-key`, { force: true });
  }
  for (const l of lines) console.log(l);
}

main().catch((err) => {
  console.error(err);
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
});
