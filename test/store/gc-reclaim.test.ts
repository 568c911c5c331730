/**
 * Space comes back: a 1 GiB bucket (64 carriers of 16 MiB and 10,000 small packed bodies) on
 * the fs provider (tmpfs when the machine has one), every object deleted with a retention
 * window of 0, history expired (expiry.ts), a checkpoint, and two GC passes across the grace:
 * the repository must then hold at most 1% of what it held. Prints the figures (bytes before
 * and after, blobs, GC throughput), checks the repository still opens and verifies clean, and
 * that a bucket kept beside it (with a fork) reads back byte-exact.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import type { Provider } from '../../src/provider/provider.js';
import { Store } from '../../src/store/store.js';
import { runGc } from '../../src/store/gc.js';
import { verifyRepository } from '../../src/store/verify.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';
import { collect, stream } from './helpers.js';

const MIB = 1024 * 1024;
const CARRIERS = 64;
const CARRIER_BYTES = 16 * MIB;
const SMALL = 10_000;
const SMALL_BYTES = 2048;
/** Grace of the two passes: the first notes, the second (past it) deletes. */
const GRACE_MS = 300;

const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
const dir = mkdtempSync(join(base, 'strata-gc-reclaim-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function stored(provider: Provider): Promise<{ blobs: number; bytes: number }> {
  let blobs = 0;
  let bytes = 0;
  let startAfter: string | undefined;
  for (;;) {
    const page = await provider.list({ ...(startAfter ? { startAfter } : {}) });
    for (const i of page.items) {
      blobs++;
      bytes += i.size;
    }
    if (!page.next) return { blobs, bytes };
    startAfter = page.next;
  }
}

/** A 16 MiB body streamed from one shared random MiB, made unique by its first 8 bytes. */
async function* carrier(seed: number, shared: Uint8Array): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < CARRIER_BYTES / MIB; i++) {
    if (i > 0) yield shared;
    else {
      const first = shared.slice();
      new DataView(first.buffer).setFloat64(0, seed);
      yield first;
    }
  }
}

it('after deleting every object of a 1 GiB bucket, expiring its history and two GC passes, the repository holds <= 1% of it', { timeout: 600_000 }, async () => {
  const provider = await createFsProvider({ dir });
  const store = await Store.open(provider, { retentionMs: 0 });
  const shared = randomBytes(MIB, 7);
  await store.createBucket('big');
  await store.createBucket('kept');
  const keptBody = randomBytes(300_000, 8);
  await store.putObject('kept', 'one', stream(keptBody), { size: keptBody.length });
  await store.forkBucket('kept', 'kept-fork');
  let t = performance.now();
  for (let i = 0; i < CARRIERS; i += 2) {
    await Promise.all([i, i + 1].map((n) => store.putObject('big', `carrier/${n}`, carrier(n, shared), { size: CARRIER_BYTES })));
  }
  for (let i = 0; i < SMALL; i += 500) {
    await Promise.all(
      Array.from({ length: 500 }, (_, j) => {
        const body = shared.subarray((i + j) * 16, (i + j) * 16 + SMALL_BYTES);
        return store.putObject('big', `small/${i + j}`, stream(body), { size: body.length });
      })
    );
  }
  await store.checkpoint();
  const writeMs = performance.now() - t;
  const before = await stored(provider);
  expect(before.bytes).toBeGreaterThan(CARRIERS * CARRIER_BYTES);

  t = performance.now();
  const keys = [...Array.from({ length: CARRIERS }, (_, i) => `carrier/${i}`), ...Array.from({ length: SMALL }, (_, i) => `small/${i}`)];
  for (let i = 0; i < keys.length; i += 1000) await store.deleteObjects('big', keys.slice(i, i + 1000));
  await new Promise((r) => setTimeout(r, 5)); // the deletes' commit times are in the past for the window
  const expired = await store.expireHistory();
  await store.checkpoint();
  const first = await runGc(store.repo, { graceMs: GRACE_MS });
  await new Promise((r) => setTimeout(r, GRACE_MS + 50));
  const second = await runGc(store.repo, { graceMs: GRACE_MS });
  const reclaimMs = performance.now() - t;
  const after = await stored(provider);

  const fmt = (n: number) => `${(n / MIB).toFixed(2)} MiB`;
  const rate = (r: typeof first) => `${Math.round(r.examinedBlobs / (r.ms / 1000))} blobs/s, ${fmt(r.examinedBytes / (r.ms / 1000))}/s`;
  console.log(
    [
      `gc-reclaim (${base}): wrote ${CARRIERS} x 16 MiB + ${SMALL} x ${SMALL_BYTES} B in ${(writeMs / 1000).toFixed(1)} s`,
      `  before: ${before.blobs} blobs, ${fmt(before.bytes)} (${before.bytes} B)`,
      `  expiry: ${expired.expired} entries dropped of ${expired.examined}`,
      `  gc 1:   examined ${first.examinedBlobs} blobs ${fmt(first.examinedBytes)} in ${first.ms} ms (${rate(first)}), unreachable ${first.unreachableBlobs} (${fmt(first.unreachableBytes)}), freed ${first.freedBlobs}`,
      `  gc 2:   examined ${second.examinedBlobs} blobs ${fmt(second.examinedBytes)} in ${second.ms} ms (${rate(second)}), freed ${second.freedBlobs} blobs ${fmt(second.freedBytes)}`,
      `  after:  ${after.blobs} blobs, ${fmt(after.bytes)} (${after.bytes} B) = ${((after.bytes / before.bytes) * 100).toFixed(3)}% of before; delete+expire+gc took ${(reclaimMs / 1000).toFixed(1)} s`,
    ].join('\n')
  );
  expect(first.freedBlobs).toBe(0); // noted, inside the grace
  expect(second.freedBytes).toBeGreaterThan(CARRIERS * CARRIER_BYTES);
  expect(after.bytes).toBeLessThanOrEqual(before.bytes * 0.01);

  expectBytes(await collect((await store.getObject('kept', 'one')).body), keptBody, 'kept');
  expectBytes(await collect((await store.getObject('kept-fork', 'one')).body), keptBody, 'kept fork');
  expect((await store.listObjects('big')).contents).toEqual([]);
  await store.close();
  expect((await verifyRepository(provider)).problems).toEqual([]);
  const reopened = await Store.open(await createFsProvider({ dir }), { retentionMs: 0 });
  expectBytes(await collect((await reopened.getObject('kept', 'one')).body), keptBody, 'kept after reopen');
  await reopened.close();
});
