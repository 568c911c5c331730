/**
 * Child process of uploads-scale.test.ts (bundled, run with --expose-gc so its heap can be
 * measured after a collection): creates N empty multipart uploads through the Store API on
 * an fs repository, checkpoints, and reports memory and checkpoint sizes as one JSON line.
 * Then ends one upload and starts another, checkpoints again, and reports what that second
 * checkpoint wrote (it must not grow with the N untouched uploads).
 *
 *   node --expose-gc worker.mjs <dir> <count>
 */
import { openStore } from '../../src/store/open.js';
import { readAnchor } from '../../src/store/recovery.js';
import { readRecord } from '../../src/store/records-io.js';
import { decodeRoot } from '../../src/store/root.js';
import { decodeRunMeta } from '../../src/store/index/run-format.js';
import type { Provider } from '../../src/provider/provider.js';

const [dir, countArg] = process.argv.slice(2);
const N = Number(countArg);
const B = 'scale';
const MiB = 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc!;

function settle(): NodeJS.MemoryUsage {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage();
}

/** Bytes of the newest root record and of every run of the bucket's uploads keyspace. */
async function checkpointShape(provider: Provider) {
  const { anchor } = (await readAnchor(provider))!;
  const root = decodeRoot(await readRecord(provider, anchor.root, 'root'));
  const b = root.buckets.find((x) => x.name === B)!;
  const runs = b.uploadRuns.map((m) => decodeRunMeta(m));
  return { rootBytes: anchor.root.length, uploadRuns: runs.map((r) => ({ key: r.blobKey, bytes: r.size, entries: r.entryCount })), uploadCount: b.uploadCount };
}

async function main(): Promise<void> {
  // Small overlays and caches so the bound below is about uploads, not about tuning.
  const store = await openStore(dir!, { maxUploadsPerBucket: N + 10, overlayBytes: 8 * MiB, blockCacheBytes: 8 * MiB, bodyCacheBytes: 0 });
  await store.createBucket(B);
  const baseline = settle();
  let peakRss = baseline.rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < N) {
      const i = next++;
      await store.createMultipartUpload(B, `k/${String(i % 100).padStart(2, '0')}/${i}`);
    }
  };
  await Promise.all(Array.from({ length: 1000 }, worker));
  const createMs = performance.now() - started;
  await store.checkpoint();
  clearInterval(sampler);
  const after = settle();
  const first = await checkpointShape(store.repo.provider);

  // One upload ends, one begins: the next checkpoint writes a run of a few entries, and a root
  // whose size does not depend on the N uploads left untouched.
  const some = (await store.listMultipartUploads(B, { prefix: 'k/07/', maxUploads: 1 })).uploads[0]!;
  await store.abortMultipartUpload(B, some.key, some.uploadId);
  await store.createMultipartUpload(B, 'k/new');
  await store.checkpoint();
  const second = await checkpointShape(store.repo.provider);
  const known = new Set(first.uploadRuns.map((r) => r.key));
  const written = second.uploadRuns.filter((r) => !known.has(r.key));
  process.stdout.write(
    `${JSON.stringify({
      count: N,
      createMs: Math.round(createMs),
      commits: store.repo.stats.commits,
      checkpoints: store.repo.stats.checkpoints,
      compactions: store.repo.stats.compactions,
      baseline: { rss: baseline.rss, heapUsed: baseline.heapUsed },
      after: { rss: after.rss, heapUsed: after.heapUsed },
      peakRss,
      first,
      second: { rootBytes: second.rootBytes, uploadCount: second.uploadCount, newRuns: written },
      abortedId: some.uploadId,
    })}\n`
  );
  await store.close();
}

main().catch((err) => {
  process.stderr.write(`${String((err as Error)?.stack ?? err)}\n`);
  process.exit(1);
});
