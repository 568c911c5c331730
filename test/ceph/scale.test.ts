/**
 * A large repository kept in Ceph RGW: N tiny objects written through the Store API with
 * many puts in flight (so each group commit carries about a thousand operations), a
 * checkpoint, a reopen from the anchor in RGW, then byte-exact spot reads and LIST pages
 * compared with what was written.
 *
 * N is STRATA_CEPH_OBJECTS (default {@link DEFAULT_OBJECTS}: the full million). The test
 * prints its timings and where the provider time went (test/support/ceph-timing.ts).
 */
import { loadavg } from 'node:os';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createS3Provider, type S3Provider } from '../../src/provider/s3/index.js';
import { DEFAULT_HISTORY_BUDGET } from '../../src/store/history-budget.js';
import { Store } from '../../src/store/store.js';
import { TimedProvider } from '../support/ceph-timing.js';
import { CEPH_START_TIMEOUT_MS, cephSuite, startCeph, type RunningCeph } from '../support/ceph.js';

/**
 * Objects written by default: the million the issue asks for. Measured on the shared 2-core
 * machine: 1,000,000 objects written in 92-120 s at a load average of 7-8 (61-120 us per
 * object; Strata's own CPU is ~60 us of it, the rest commits waiting on RGW round trips and
 * on checkpoints), 408-507 s at a load average of 17 (every RGW request then waits for a
 * core). Before the s3 provider merged small body chunks (src/provider/s3/coalesce.ts) it
 * was 326-380 us per object idle and 525 s for the million under load.
 */
const DEFAULT_OBJECTS = 1_000_000;
const N = Number(process.env.STRATA_CEPH_OBJECTS ?? DEFAULT_OBJECTS);
/** Puts in flight: enough to fill a group commit (1,024 operations) several times over. */
const IN_FLIGHT = 4096;
const BUCKET = 'scale';
/**
 * Allowed time for the whole test: 0.8 ms per object (above the 0.51 ms measured at a load
 * average of 17; a hang guard, not a benchmark) plus two minutes for the checkpoint, reopen
 * and reads.
 */
const TEST_TIMEOUT_MS = 120_000 + N * 0.8;

let ceph: RunningCeph | undefined;
const opened: S3Provider[] = [];

async function provider(): Promise<S3Provider> {
  const p = await createS3Provider({
    endpoint: ceph!.endpoint,
    bucket: ceph!.bucket,
    prefix: 'scale/',
    accessKeyId: ceph!.accessKeyId,
    secretAccessKey: ceph!.secretAccessKey,
    conditionalWrites: 'probe',
  });
  opened.push(p);
  return p;
}

const keyOf = (i: number): string => `k/${String(i).padStart(7, '0')}`;
const bodyOf = (i: number): Buffer => Buffer.from(`object ${i} ${(i * 2654435761) >>> 0}`);

async function* once(b: Uint8Array): AsyncGenerator<Uint8Array> {
  yield b;
}

async function read(store: Store, key: string): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const c of (await store.getObject(BUCKET, key)).body) parts.push(c);
  return Buffer.concat(parts);
}

cephSuite.describe(`a ${N.toLocaleString('en')}-object repository on Ceph RGW`, () => {
  beforeAll(async () => {
    ceph = await startCeph();
  }, CEPH_START_TIMEOUT_MS);
  afterAll(async () => {
    for (const p of opened) await p.close().catch(() => {});
    await ceph?.stop();
  }, 120_000);

  it(
    'writes, checkpoints, reopens, and reads back byte-exact with LIST pages in order',
    async () => {
      const t0 = performance.now();
      // The lane is about the provider at scale, not about history budgets: room for N entries.
      const historyBudget = Math.max(DEFAULT_HISTORY_BUDGET, N * 1024);
      const timed = new TimedProvider(await provider());
      const store = await Store.open(timed, { historyBudget });
      await store.createBucket(BUCKET);
      let next = 0;
      let commits = 0;
      const seqBefore = store.repo.seq;
      async function lane(): Promise<void> {
        while (next < N) {
          const i = next++;
          const body = bodyOf(i);
          await store.putObject(BUCKET, keyOf(i), once(body), { size: body.length });
        }
      }
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
      commits = store.repo.seq - seqBefore;
      const stats = { ...store.repo.stats };
      const tWrite = performance.now();
      await store.checkpoint();
      const tCheckpoint = performance.now();
      await store.close();

      const again = await Store.open(await provider(), { historyBudget });
      const tOpen = performance.now();
      const samples = [0, N - 1, ...Array.from({ length: 300 }, (_, j) => (j * 104_729 + 7_919) % N)];
      for (const i of samples) {
        expect((await read(again, keyOf(i))).equals(bodyOf(i)), keyOf(i)).toBe(true);
      }
      for (const start of [0, Math.floor(N / 2), N - 500]) {
        const page = await again.listObjects(BUCKET, {
          ...(start > 0 ? { startAfter: keyOf(start - 1) } : {}),
          maxKeys: 1000,
        });
        const expected = Array.from({ length: Math.min(1000, N - start) }, (_, j) => keyOf(start + j));
        expect(page.contents.map((e) => e.key)).toEqual(expected);
        expect(page.isTruncated).toBe(start + 1000 < N);
        expect(page.contents[0].version.size).toBe(bodyOf(start).length);
      }
      const tRead = performance.now();
      await again.close();
      const s = (a: number, b: number) => ((b - a) / 1000).toFixed(1);
      console.log(
        `ceph scale: ${N} objects in ${commits} commits (${(N / commits).toFixed(0)} ops/commit): ` +
          `write ${s(t0, tWrite)} s (${Math.round(N / ((tWrite - t0) / 1000))} puts/s), ` +
          `checkpoint ${s(tWrite, tCheckpoint)} s, reopen ${s(tCheckpoint, tOpen)} s, ` +
          `spot reads + 3 LIST pages ${s(tOpen, tRead)} s; ` +
          `load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n` +
          `  writer's provider calls: ${timed.summary()}\n` +
          `  commit loop: ${JSON.stringify(stats)}`
      );
      expect(N / commits).toBeGreaterThan(500); // group commits really carried ~1,000 puts
    },
    TEST_TIMEOUT_MS
  );
});
