/**
 * GC beside writes still in flight, at grace 0 (no time-based protection at all): the chunks a
 * PUT or UploadPart has written but no commit names yet are kept (inflight-blobs.ts), and the
 * write then reads back byte-exact; once a write fails and is abandoned, nothing of it stays
 * protected.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runGc } from '../../src/store/gc.js';
import { InflightBlobs } from '../../src/store/inflight-blobs.js';
import { CHUNK_SIZE } from '../../src/store/layout.js';
import { verifyRepository } from '../../src/store/verify.js';
import { randomBytes } from '../support/random.js';
import { open } from './fork-support.js';
import type { Provider } from '../../src/provider/provider.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { Store } from '../../src/store/store.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

async function chunkKeys(provider: Provider): Promise<string[]> {
  const out: string[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await provider.list({ prefix: 'chunks/', ...(startAfter ? { startAfter } : {}) });
    out.push(...page.items.map((i) => i.key));
    if (!page.next) return out;
    startAfter = page.next;
  }
}

/** A body that yields `first`, then waits for `gate` before yielding `rest`. */
function gatedBody(first: Uint8Array, rest: Uint8Array, gate: Promise<void>): AsyncIterable<Uint8Array> {
  return {
    async *[Symbol.asyncIterator]() {
      yield first;
      await gate;
      yield rest;
    },
  };
}

async function collect(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const c of body) parts.push(c);
  return Buffer.concat(parts);
}

const waitFor = async (cond: () => Promise<boolean>) => {
  for (let i = 0; i < 500; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition not reached');
};

describe('InflightBlobs', () => {
  it('protects open tickets, and closed ones only from marks that began before they closed', () => {
    let now = 1000;
    const inflight = new InflightBlobs(() => now);
    const t = inflight.open();
    t.add('chunks/a');
    expect(inflight.protects('chunks/a', 0)).toBe(true);
    expect(inflight.protects('chunks/b', 0)).toBe(false);
    now = 2000;
    t.close();
    t.close();
    expect(inflight.openBlobs).toBe(0);
    expect(inflight.protects('chunks/a', 1500)).toBe(true); // that mark read an anchor from before the commit
    expect(inflight.protects('chunks/a', 2001)).toBe(false); // a later mark sees the commit itself
    expect(() => t.add('chunks/c')).toThrow(/after close/);
  });
});

describe.each(['memory', 'fs'] as const)('gc beside writes in flight on %s', (kind) => {
  afterEach(() => undefined);

  it('keeps the chunks of a PUT and of an UploadPart whose commits have not landed, at grace 0', async () => {
    const { store, provider } = await open(kind);
    await store.createBucket('bkt');
    const body = randomBytes(CHUNK_SIZE + 1000, 7);
    const part = randomBytes(CHUNK_SIZE + 500, 8);
    const uploadId = await store.createMultipartUpload('bkt', 'mp', {});
    let open1!: () => void;
    let open2!: () => void;
    const gate1 = new Promise<void>((r) => (open1 = r));
    const gate2 = new Promise<void>((r) => (open2 = r));
    const put = store.putObject('bkt', 'big', gatedBody(body.subarray(0, CHUNK_SIZE), body.subarray(CHUNK_SIZE), gate1), { size: body.length });
    const uploaded = store.uploadPart('bkt', 'mp', uploadId, 1, gatedBody(part.subarray(0, CHUNK_SIZE), part.subarray(CHUNK_SIZE), gate2), { size: part.length });
    // Both first chunks are written (and no commit names them) before GC runs.
    await waitFor(async () => (await chunkKeys(provider)).length >= 2);
    const before = await chunkKeys(provider);
    const report = await runGc(store.repo, { graceMs: 0 });
    expect(report.freedBlobs).toBe(0);
    for (const k of before) expect(await provider.head(k), k).toBeDefined();
    open1();
    open2();
    await put;
    const etag = (await uploaded).etag;
    await store.completeMultipartUpload('bkt', 'mp', uploadId, [{ partNumber: 1, etag }]);
    await runGc(store.repo, { graceMs: 0 });
    expect((await collect((await store.getObject('bkt', 'big')).body)).equals(body)).toBe(true);
    expect((await collect((await store.getObject('bkt', 'mp')).body)).equals(part)).toBe(true);
    const v = await verifyRepository(provider);
    expect(v.problems).toEqual([]);
    expect(store.repo.inflight.openBlobs).toBe(0);
    await store.close();
  }, 60_000);
});

describe('gc beside a checkpoint and a fork still writing, at grace 0', () => {
  it("keeps a checkpoint's runs until its root names them, and a past-time fork's runs until its commit", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gc-inflight-'));
    try {
      const fs = await createFsProvider({ dir });
      // While `hold` is set, the put it matches waits for `release` (and says so on `held`).
      let hold: ((key: string) => boolean) | undefined;
      let release!: () => void;
      let held!: () => void;
      const gated = new Proxy(fs, {
        get(target, prop) {
          if (prop === 'put')
            return async (key: string, body: Parameters<Provider['put']>[1], options: Parameters<Provider['put']>[2]) => {
              if (hold?.(key)) {
                hold = undefined;
                held();
                await new Promise<void>((r) => (release = r));
              }
              return target.put(key, body, options);
            };
          const v = Reflect.get(target, prop, target) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      }) as Provider;
      const arm = (match: (key: string) => boolean) => {
        const reached = new Promise<void>((r) => (held = r));
        hold = match;
        return reached;
      };
      const store = await Store.open(gated, { commitLog: false, checkpointEvery: 1_000_000 });
      await store.createBucket('bkt');
      const bodies = new Map<string, Uint8Array>();
      for (let i = 0; i < 40; i++) {
        const b = randomBytes(100 + i, 100 + i);
        bodies.set(`k${i}`, b);
        await store.putObject('bkt', `k${i}`, (async function* () { yield b; })(), { size: b.length });
      }
      const t0 = Date.now();
      await new Promise((r) => setTimeout(r, 20));

      // The checkpoint has written its runs; its root waits. GC runs in between.
      const rootHeld = arm((key) => key.startsWith('roots/'));
      const checkpoint = store.checkpoint();
      await rootHeld;
      const runsBefore = (await fs.list({ prefix: 'runs/' })).items.map((i) => i.key);
      expect(runsBefore.length).toBeGreaterThan(0);
      await runGc(store.repo, { graceMs: 0, cleanBelow: 0 });
      for (const k of runsBefore) expect(await fs.head(k), k).toBeDefined();
      release();
      await checkpoint;

      // A fork as of a past time: its versions run is written, its index run waits.
      let runs = 0;
      const runHeld = arm((key) => key.startsWith('runs/') && ++runs === 2);
      const fork = store.forkBucket('bkt', 'past', { at: t0 });
      await runHeld;
      const forkRuns = (await fs.list({ prefix: 'runs/' })).items.map((i) => i.key).filter((k) => !runsBefore.includes(k));
      expect(forkRuns.length).toBeGreaterThan(0);
      await runGc(store.repo, { graceMs: 0, cleanBelow: 0 });
      for (const k of forkRuns) expect(await fs.head(k), k).toBeDefined();
      release();
      await fork;

      await runGc(store.repo, { graceMs: 0, cleanBelow: 0 });
      expect((await verifyRepository(fs)).problems).toEqual([]);
      await store.close();
      const again = await Store.open(await createFsProvider({ dir }), { commitLog: false });
      try {
        for (const bucket of ['bkt', 'past'])
          for (const [k, b] of bodies) expect((await collect((await again.getObject(bucket, k)).body)).equals(Buffer.from(b)), `${bucket}/${k}`).toBe(true);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
