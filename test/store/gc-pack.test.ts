/**
 * Pack cleaning (gc-pack.ts): commit blobs whose live fraction fell below the threshold have
 * their live bodies copied into new packs and every referrer re-pointed — current objects and
 * version log entries (older versions, a removed version kept for history), in the bucket and
 * in a fork sharing its runs, plain, SSE-S3 and SSE-C bodies — after which the old commit
 * blobs are swept, every version still reads byte-exact (also after a reopen, also with the
 * body cache warm from before), verify is clean, and an overwrite that lands between the
 * copy and the re-pointing commit wins over the relocation.
 */
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../src/provider/provider.js';
import { Store } from '../../src/store/store.js';
import { runGc } from '../../src/store/gc.js';
import { markRepository } from '../../src/store/gc-mark.js';
import type { KeyRing } from '../../src/store/crypto/envelope.js';
import type { Location } from '../../src/store/records.js';
import { verifyRepository } from '../../src/store/verify.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';
import { collect, makeProvider, stream } from './helpers.js';

const S3_ROOT = Buffer.from(randomBytes(32, 501));
const CUST = Buffer.from(randomBytes(32, 502));
const keysFor = (enc: Obj['enc']): KeyRing | undefined => (enc === 'sse-c' ? { sseS3: S3_ROOT, customer: CUST } : enc === 'sse-s3' ? { sseS3: S3_ROOT } : undefined);

type Obj = { body: Uint8Array; versionId: string; enc?: 'sse-s3' | 'sse-c' };

async function list(provider: Provider, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await provider.list({ prefix, ...(startAfter ? { startAfter } : {}) });
    out.push(...page.items.map((i) => i.key));
    if (!page.next) return out;
    startAfter = page.next;
  }
}

const encOf = (e: Obj['enc']) => (e === 'sse-s3' ? { mode: 'sse-s3' as const, root: S3_ROOT } : e === 'sse-c' ? { mode: 'sse-c' as const, root: CUST } : undefined);

async function putObj(store: Store, bucket: string, key: string, body: Uint8Array, enc?: Obj['enc']): Promise<Obj> {
  const e = encOf(enc);
  const r = await store.putObject(bucket, key, stream(body), { size: body.length, ...(e ? { encryption: e } : {}) });
  return { body, versionId: r.versionId, ...(enc ? { enc } : {}) };
}

async function location(store: Store, bucket: string, key: string): Promise<Location> {
  return (await store.version(bucket, key)).location;
}

/** Every version in `model` reads back exactly, by version id, and the newest as the object. */
async function expectAll(store: Store, bucket: string, model: Map<string, Obj[]>, label: string): Promise<void> {
  for (const [key, versions] of model) {
    for (const v of versions) {
      const keys = keysFor(v.enc);
      const got = await store.getObject(bucket, key, { versionId: v.versionId, ...(keys ? { keys } : {}) });
      expectBytes(await collect(got.body), v.body, `${label}: ${bucket}/${key}@${v.versionId}`);
    }
    const newest = versions[versions.length - 1]!;
    const keys = keysFor(newest.enc);
    expectBytes(await collect((await store.getObject(bucket, key, keys ? { keys } : {})).body), newest.body, `${label}: ${bucket}/${key}`);
  }
}

/**
 * The provider and commit path: commit blobs (memory; fs with the log off), or fs's commit log,
 * where bodies are pack entries of a segment and GC cleans a segment only once the log has rolled
 * past it (here: a reopen, whose first batch rolls) and a checkpoint covers its commits.
 */
const VARIANTS = [
  { name: 'memory', kind: 'memory', commitLog: false, prefix: 'commits/' },
  { name: 'fs, commit blobs', kind: 'fs', commitLog: false, prefix: 'commits/' },
  { name: 'fs, commit log', kind: 'fs', commitLog: true, prefix: 'log/' },
] as const;

describe.each(VARIANTS)('pack cleaning on $name', ({ kind, commitLog, prefix }) => {
  it('moves live bodies out of sparse commit blobs, re-points every bucket and fork, and the old blobs are swept', async () => {
    const p = await makeProvider(kind);
    try {
      let store = await Store.open(p.provider, { commitLog });
      await store.createBucket('keep');
      await store.createBucket('drop');
      await store.putVersioning('keep', 'Enabled');
      const model = new Map<string, Obj[]>();
      const add = (key: string, o: Obj) => model.set(key, [...(model.get(key) ?? []), o]);
      // Both buckets written in the same batches: each commit blob holds bodies of both.
      const encs: Obj['enc'][] = [undefined, 'sse-s3', 'sse-c'];
      await Promise.all(
        Array.from({ length: 90 }, async (_, i) => {
          const enc = encs[i % 3];
          const [o] = await Promise.all([putObj(store, 'keep', `k${i}`, randomBytes(200 + i, i + 1), enc), putObj(store, 'drop', `d${i}`, randomBytes(3000 + i, i + 1000))]);
          add(`k${i}`, o);
        })
      );
      // Older versions and a removed one stay in the version log: they must move too.
      await Promise.all([0, 1, 2, 3, 4, 5].map(async (i) => add(`k${i}`, await putObj(store, 'keep', `k${i}`, randomBytes(150, 300 + i), encs[i % 3]))));
      const removed = model.get('k7')!.shift()!; // the only version of k7, removed (kept as history)
      await putObj(store, 'keep', 'k7', randomBytes(99, 777)).then((o) => add('k7', o));
      await store.removeVersion('keep', 'k7', removed.versionId);
      await store.forkBucket('keep', 'fork');
      if (commitLog) {
        // Roll past the segment holding every body so far: the deletes below go to a new one.
        await store.close();
        store = await Store.open(await p.reopen(), { commitLog });
      }
      await store.deleteObjects('drop', Array.from({ length: 90 }, (_, i) => `d${i}`));
      await store.deleteBucket('drop');
      await store.checkpoint();

      // Warm the body cache with the old locations.
      await expectAll(store, 'keep', model, 'before');
      const before = new Map<string, Location>();
      for (const key of model.keys()) before.set(key, await location(store, 'keep', key));

      const report = await runGc(store.repo, { graceMs: 0, cleanBelow: 0.5 });
      expect(report.cleanedPacks).toBeGreaterThan(0);
      expect(report.movedBytes).toBeGreaterThan(0);
      const oldBlobs = new Set<string>();
      let moved = 0;
      for (const [key, old] of before) {
        const now = await location(store, 'keep', key);
        expect(await location(store, 'fork', key), `fork ${key}`).toEqual(now);
        if (JSON.stringify(now) === JSON.stringify(old)) continue;
        moved++;
        expect(old.kind === 'pack' && old.blob.startsWith(prefix), key).toBe(true);
        expect(now.kind === 'pack' && now.blob.startsWith('packs/'), key).toBe(true);
        oldBlobs.add((old as { blob: string }).blob);
      }
      expect(moved).toBeGreaterThan(30);
      // The old commit blobs are unreachable now: the pass marked again after cleaning, so at
      // grace 0 it already swept them.
      const live = (await markRepository(p.provider)).live;
      for (const b of oldBlobs) expect(live.has(b), b).toBe(false);
      expect(report.freedBlobs).toBeGreaterThanOrEqual(oldBlobs.size);
      for (const b of oldBlobs) expect(await list(p.provider, b)).toEqual([]);
      await new Promise((r) => setTimeout(r, 5));
      const second = await runGc(store.repo, { graceMs: 0, cleanBelow: 0.5 });
      expect(second.cleanedPacks).toBe(0);

      await expectAll(store, 'keep', model, 'after, same store (cache warm)');
      await expectAll(store, 'fork', model, 'fork after');
      expect((await verifyRepository(p.provider)).problems).toEqual([]);
      await store.close();
      const reopened = await Store.open(await p.reopen(), { commitLog });
      await expectAll(reopened, 'keep', model, 'reopened');
      await expectAll(reopened, 'fork', model, 'fork reopened');
      await reopened.close();
    } finally {
      p.cleanup();
    }
  });

  it('an overwrite that lands between the copy and the re-pointing commit wins', async () => {
    const p = await makeProvider(kind);
    try {
      let store: Store | undefined;
      let raced = false;
      // After the cleaned pack is written, before its re-pointing commit: overwrite and delete.
      const racing = (provider: Provider): Provider => {
        const put: Provider['put'] = async (key, body, opts) => {
          const info = await provider.put(key, body, opts);
          if (key.startsWith('packs/') && !raced) {
            raced = true;
            await store!.putObject('bkt', 'k3', stream(new TextEncoder().encode('overwritten meanwhile')), { size: 21 });
            await store!.deleteObject('bkt', 'k4');
          }
          return info;
        };
        return new Proxy(provider, {
          get(target, prop) {
            if (prop === 'put') return put;
            const v = Reflect.get(target, prop, target) as unknown;
            return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
          },
        });
      };
      store = await Store.open(racing(p.provider), { commitLog });
      await store.createBucket('bkt');
      await store.createBucket('tmp');
      const bodies = new Map<string, Uint8Array>();
      await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const b = randomBytes(100 + i, i + 1);
          bodies.set(`k${i}`, b);
          await store!.putObject('bkt', `k${i}`, stream(b), { size: b.length });
          await store!.putObject('tmp', `t${i}`, stream(randomBytes(2000, i + 50)), { size: 2000 });
        })
      );
      if (commitLog) {
        // Roll past the segment holding the bodies (see VARIANTS).
        await store.close();
        store = await Store.open(racing(await p.reopen()), { commitLog });
      }
      await store.deleteObjects('tmp', Array.from({ length: 20 }, (_, i) => `t${i}`));
      await store.deleteBucket('tmp');
      await store.checkpoint();
      const report = await runGc(store.repo, { graceMs: 0, cleanBelow: 0.5 });
      expect(raced).toBe(true);
      expect(report.movedBytes).toBeGreaterThan(0);
      expect(new TextDecoder().decode(await collect((await store.getObject('bkt', 'k3')).body))).toBe('overwritten meanwhile');
      await expect(store.getObject('bkt', 'k4')).rejects.toMatchObject({ code: 'NoSuchKey' });
      for (const [k, b] of bodies) {
        if (k === 'k3' || k === 'k4') continue;
        expectBytes(await collect((await store.getObject('bkt', k)).body), b, k);
      }
      expect((await verifyRepository(p.provider)).problems).toEqual([]);
      await store.close();
    } finally {
      p.cleanup();
    }
  });

  it('never copies a corrupt entry: it stays where it is and the pass counts an error', async () => {
    const p = await makeProvider('memory');
    const store = await Store.open(p.provider);
    await store.createBucket('bkt');
    await store.createBucket('tmp');
    await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        await store.putObject('bkt', `k${i}`, stream(randomBytes(100, i + 1)), { size: 100 });
        await store.putObject('tmp', `t${i}`, stream(randomBytes(3000, i + 50)), { size: 3000 });
      })
    );
    await store.deleteObjects('tmp', Array.from({ length: 10 }, (_, i) => `t${i}`));
    await store.deleteBucket('tmp');
    await store.checkpoint();
    // Flip a body byte of k0's entry in its commit blob (framing intact, CRC now wrong).
    const loc = (await store.getObject('bkt', 'k0')).version.location as Extract<Location, { kind: 'pack' }>;
    const { getBytes } = await import('../../src/provider/provider.js');
    const blob = Buffer.from(await getBytes(p.provider, loc.blob));
    blob[loc.offset + 24 + 5]! ^= 0xff;
    await p.provider.delete(loc.blob);
    await p.provider.put(loc.blob, blob);
    const report = await runGc(store.repo, { graceMs: 0, cleanBelow: 0.5 });
    expect(report.errors).toBeGreaterThan(0);
    expect(await location(store, 'bkt', 'k0')).toEqual(loc);
    await expect(collect((await store.getObject('bkt', 'k0')).body)).rejects.toMatchObject({ code: 'Corrupt' });
    await store.close();
  });
});

describe('pack cleaning at scale', () => {
  it('re-points in key order: an index larger than the block cache is read about once a pass, not once per moved body', async () => {
    const p = await makeProvider('memory');
    let runReads = 0;
    let counting = false;
    // Counts reads of index runs (get, read, readv) while `counting`.
    const counted = new Proxy(p.provider, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target) as unknown;
        if (typeof v !== 'function') return v;
        const f = v as (...a: unknown[]) => unknown;
        if (prop !== 'get' && prop !== 'read' && prop !== 'readv') return f.bind(target);
        return (key: string, ...rest: unknown[]) => {
          if (counting && key.startsWith('runs/')) runReads++;
          return f.call(target, key, ...rest);
        };
      },
    });
    // A block cache holding a few of the index's 64 KiB blocks: a lookup in no particular order
    // mostly misses.
    const store = await Store.open(counted, { blockCacheBytes: 256 * 1024 });
    try {
      await store.createBucket('bkt');
      const N = 3000;
      // Batches of 100 concurrent PUTs with keys spread over the whole key space: each commit
      // blob holds bodies named from all over the index, as serial writes to many prefixes do.
      const keyOf = (i: number) => `k${String((i * 7919) % N).padStart(5, '0')}`;
      const bodyOf = (i: number) => randomBytes(200 + (i % 50), 9000 + i);
      for (let b = 0; b < N; b += 100) {
        await Promise.all(Array.from({ length: 100 }, (_, j) => store.putObject('bkt', keyOf(b + j), stream(bodyOf(b + j)), { size: bodyOf(b + j).length })));
      }
      await store.checkpoint();
      counting = true;
      const report = await runGc(store.repo, { graceMs: 0, cleanBelow: 1 });
      counting = false;
      // Every body moved, each named twice (namespace and version log).
      expect(report.movedBytes).toBe(Array.from({ length: N }, (_, i) => bodyOf(i).length).reduce((a, b) => a + b, 0));
      expect(report.errors).toBe(0);
      // The pass reads the index to mark (twice: before cleaning and after) and once more to
      // re-point (86 reads here); looked up in pack order, the 6,000 referrers took 12,072.
      expect(runReads).toBeLessThan(N / 4);
      for (let i = 0; i < N; i++) expectBytes(await collect((await store.getObject('bkt', keyOf(i))).body), bodyOf(i), keyOf(i));
      expect((await verifyRepository(p.provider)).problems).toEqual([]);
    } finally {
      await store.close();
      p.cleanup();
    }
  });
  it('by default cleans the commit log segments of serial small writes (each body beside its commit record)', async () => {
    const p = await makeProvider('fs');
    let store = await Store.open(p.provider, { commitLog: true });
    try {
      await store.createBucket('bkt');
      const N = 400;
      const bodyOf = (i: number) => randomBytes(512, 7000 + i);
      for (let i = 0; i < N; i++) await store.putObject('bkt', `k${(i * 37) % N}`, stream(bodyOf(i)), { size: 512 });
      // Roll past the segment (a reopen) and checkpoint: the commit records are then dead.
      await store.close();
      store = await Store.open(await p.reopen(), { commitLog: true });
      await store.checkpoint();
      await store.close();
      // The blobs at rest (a closed repository: the segment appended to is cut to what it
      // holds, not listed at its preallocation): log segments, and bytes of each class.
      const atRest = async () => {
        const fresh = await p.reopen();
        const bytes = async (keys: string[]) => (await Promise.all(keys.map(async (k) => (await fresh.head(k)).size))).reduce((x, y) => x + y, 0);
        const segments = await list(fresh, 'log/');
        const packs = await list(fresh, 'packs/');
        const out = { segments, logBytes: await bytes(segments), packBytes: await bytes(packs) };
        await fresh.close();
        return out;
      };
      const before = await atRest();
      // The bodies' segment is about half live (each 512 B body beside its commit record): the
      // old default (0.5) left it; 0.6 cleans it.
      expect(before.packBytes).toBe(0);
      expect(before.logBytes).toBeGreaterThan(1.7 * N * 512);
      store = await Store.open(await p.reopen(), { commitLog: true });
      const report = await runGc(store.repo, { graceMs: 0 });
      expect(report.cleanedPacks).toBeGreaterThan(0);
      expect(report.movedBytes).toBe(N * 512);
      await store.close();
      const after = await atRest();
      // Every segment that held the bodies is gone; the bodies sit in packs, nearly all live.
      expect(after.segments.filter((k) => before.segments.includes(k))).toEqual([]);
      expect(after.packBytes).toBeGreaterThan(N * 512);
      expect(after.packBytes).toBeLessThan(1.1 * N * 512);
      store = await Store.open(await p.reopen(), { commitLog: true });
      for (let i = 0; i < N; i++) expectBytes(await collect((await store.getObject('bkt', `k${(i * 37) % N}`)).body), bodyOf(i), `k${i}`);
      await store.close();
      expect((await verifyRepository(await p.reopen())).problems).toEqual([]);
    } finally {
      await store.close().catch(() => undefined);
      p.cleanup();
    }
  });
  it("never cleans a pack of GC's own whose entries are all live, however small", async () => {
    const p = await makeProvider('memory');
    const store = await Store.open(p.provider);
    try {
      await store.createBucket('bkt');
      const small = randomBytes(50, 61);
      await store.putObject('bkt', 'small', stream(small), { size: 50 });
      await store.checkpoint();
      // Its commit blob is partly its record: cleaning everything below 100% moves the body.
      const first = await runGc(store.repo, { graceMs: 0, cleanBelow: 1 });
      expect(first.movedBytes).toBe(50);
      expect((await list(p.provider, 'packs/')).length).toBe(1);
      // The new pack (154 B, one 50 B body) is all live: later default passes leave it
      // (counting its framing as dead, it was 48% live and rewritten every pass).
      for (let i = 0; i < 2; i++) {
        const again = await runGc(store.repo, { graceMs: 0 });
        expect(again.cleanedPacks).toBe(0);
        expect(again.movedBytes).toBe(0);
      }
      expectBytes(await collect((await store.getObject('bkt', 'small')).body), small, 'small');
    } finally {
      await store.close();
      p.cleanup();
    }
  });
});
