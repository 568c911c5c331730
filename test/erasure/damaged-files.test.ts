/**
 * Damage a fragment's CRCs cannot see. A fragment file whose fs blob header is damaged (bitrot in its first bytes, or a foreign file
 * under a fragment's name) is one damaged fragment, not a failed domain: reads rebuild around it
 * without taking the domain out of service (so writes that need every domain still land), a
 * check reports it corrupt on its domain, and repair rewrites it in place. The fs provider says
 * so with ProviderError 'Corrupt' for that blob alone; the store reports it as a corrupt blob.
 * A fragment file longer than its geometry (bytes past its trailer, which no read looks at) is
 * found by its listed size, reported corrupt and rewritten in place. A file cut short while a
 * server holds it open (its handle and size cached) is the same: that blob's damage.
 */
import { closeSync, openSync, readSync, statSync, truncateSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { getBytes, ProviderError } from '../../src/provider/provider.js';
import type { FsProvider } from '../../src/provider/fs/index.js';
import { blobError } from '../../src/store/blob-error.js';
import { storeErrorOf } from '../../src/store/boundary.js';
import { StoreError } from '../../src/store/errors.js';
import { firstDiff, overwriteFile } from '../support/bytes.js';
import { randomBytes } from '../support/random.js';
import { makeRig, type Rig } from './fault-setup.js';
import { runScrub } from '../../src/provider/erasure/scrub.js';

const rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) {
    await r.close().catch(() => undefined);
    r.cleanup();
  }
});

/** Overwrites the first 4 bytes of a file (the fs blob header's magic). */
const spoilHeader = (path: string) => overwriteFile(path, 0, Buffer.from('XXXX'));

function headOf(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.alloc(4);
    readSync(fd, b, 0, 4, 0);
    return b.toString('latin1');
  } finally {
    closeSync(fd);
  }
}

/** Child keys on domain `d` (by name and size only: a listing with etags stops at a bad header). */
async function childKeys(r: Rig, d: number): Promise<string[]> {
  const out: string[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await r.children[d]!.list({ etags: false, ...(startAfter ? { startAfter } : {}) });
    out.push(...page.items.map((i) => i.key));
    if (!page.next) return out;
    startAfter = page.next;
  }
}

/** The domain index holding a child blob of `key`, the child's key and its file. */
async function holderOf(r: Rig, key: string, which: (child: string) => boolean = () => true): Promise<{ d: number; child: string; path: string }> {
  for (let d = 0; d < r.children.length; d++) {
    const child = (await childKeys(r, d)).find((c) => c.startsWith(`${key}!`) && which(c));
    if (child) return { d, child, path: (r.children[d] as FsProvider).blobFilePath(child) };
  }
  throw new Error(`no fragment of ${key}`);
}

describe('a fragment file with a damaged fs header', () => {
  it('the fs provider reports that blob Corrupt (not retryable) on every read path; the store calls it a corrupt blob', async () => {
    const r = await makeRig({ k: 4, m: 2 });
    rigs.push(r);
    const fs = r.children[0] as FsProvider;
    await fs.put('blob-a', randomBytes(10_000, 1));
    spoilHeader(fs.blobFilePath('blob-a'));
    const attempts: [string, () => Promise<unknown>][] = [
      ['get', () => fs.get('blob-a')],
      ['read', () => fs.read('blob-a')],
      ['head', () => fs.head('blob-a')],
      ['readv', () => fs.readv('blob-a', 0, [new Uint8Array(10)])],
    ];
    for (const [what, op] of attempts) {
      const err = await op().then(
        () => undefined,
        (e: unknown) => e
      );
      expect(err, what).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).code, what).toBe('Corrupt');
      expect((err as ProviderError).retryable, what).toBe(false);
      expect((err as Error).message, what).toMatch(/not a blob file/);
    }
    const err = await fs.read('blob-a').catch((e: unknown) => e);
    for (const mapped of [storeErrorOf(err), blobError(err, 'blob-a')]) {
      expect(mapped).toBeInstanceOf(StoreError);
      expect((mapped as StoreError).code).toBe('Corrupt');
    }
    // A listing that meets the file fails as a listing ('Io'), with or without etags.
    for (const etags of [true, false]) {
      await fs.list({ etags }).then(
        (page) => expect(page.items.map((i) => i.key)).toContain('blob-a'),
        (e: unknown) => expect((e as ProviderError).code).toBe('Io')
      );
    }
  });

  it('is rebuilt around on read, leaves its domain in service, is reported corrupt on it, and repaired in place', async () => {
    // (4,2) over exactly 6 domains: a striped write needs every domain, so one taken out of
    // service would refuse the next write.
    const r = await makeRig({ k: 4, m: 2 });
    rigs.push(r);
    const striped = randomBytes(1024 * 1024 + 12_345, 2);
    const small = randomBytes(3_000, 3); // below the stripe threshold: replicated to m + 1
    await r.provider.put('blobs/striped', striped);
    await r.provider.put('blobs/small', small);
    const s = await holderOf(r, 'blobs/striped');
    const c = await holderOf(r, 'blobs/small');
    spoilHeader(s.path);
    spoilHeader(c.path);

    expect(firstDiff(await getBytes(r.provider, 'blobs/striped'), striped)).toBe(-1);
    expect(firstDiff(await getBytes(r.provider, 'blobs/small'), small)).toBe(-1);
    const range = await getBytes(r.provider, 'blobs/striped', { start: 1000, end: 300_000 });
    expect(firstDiff(range, striped.subarray(1000, 300_001))).toBe(-1);
    // Every domain still takes writes: a striped blob lands whole.
    const next = randomBytes(512 * 1024, 4);
    await r.provider.put('blobs/next', next);
    expect(firstDiff(await getBytes(r.provider, 'blobs/next'), next)).toBe(-1);
    expect((await r.provider.checkBlob('blobs/next')).fragments.every((f) => f.state === 'ok')).toBe(true);

    for (const [key, h] of [
      ['blobs/striped', s],
      ['blobs/small', c],
    ] as const) {
      const found = await r.provider.checkBlob(key);
      const bad = found.fragments.filter((f) => f.state !== 'ok');
      expect(bad, key).toEqual([expect.objectContaining({ domain: `d${h.d + 1}`, state: 'corrupt' })]);
      expect(found.lost).toBe(false);
      const fixed = await r.provider.checkBlob(key, { repair: true });
      expect(fixed.repaired, key).toBe(1);
      const again = await r.provider.checkBlob(key);
      expect(again.fragments.every((f) => f.state === 'ok'), key).toBe(true);
      // Rewritten where it was: the same domain holds a sound blob file again.
      const onSame = (await childKeys(r, h.d)).find((k) => k.startsWith(`${key}!`));
      expect(onSame, key).toBeDefined();
      expect(headOf((r.children[h.d] as FsProvider).blobFilePath(onSame!))).not.toBe('XXXX');
    }
    expect(firstDiff(await getBytes(r.provider, 'blobs/striped'), striped)).toBe(-1);
    expect(firstDiff(await getBytes(r.provider, 'blobs/small'), small)).toBe(-1);
  });
});

describe('a fragment file cut below its fs header', () => {
  it('is listed, not a failed listing: reads rebuild around it, writes still land, scrub finds it corrupt on its domain and repair rewrites it', async () => {
    const r = await makeRig({ k: 4, m: 2 });
    rigs.push(r);
    const body = randomBytes(600_000, 9);
    await r.provider.put('blobs/cut', body);
    const h = await holderOf(r, 'blobs/cut');
    truncateSync(h.path, 10);
    await r.close();
    await r.reopen();
    expect(firstDiff(await getBytes(r.provider, 'blobs/cut'), body)).toBe(-1);
    const next = randomBytes(400_000, 10);
    await r.provider.put('blobs/after', next);
    const report = await runScrub(r.provider);
    expect(report.fragments).toMatchObject({ corrupt: 1, unreachable: 0, missing: 0 });
    expect(report.damagedByDomain).toEqual({ [`d${h.d + 1}`]: 1 });
    const fixed = await runScrub(r.provider, { repair: true });
    expect(fixed.repairedFragments).toBe(1);
    expect((await runScrub(r.provider)).damagedBlobs).toBe(0);
    expect(statSync(h.path).size).toBeGreaterThan(600_000 / 4);
    expect(firstDiff(await getBytes(r.provider, 'blobs/cut'), body)).toBe(-1);
    expect(firstDiff(await getBytes(r.provider, 'blobs/after'), next)).toBe(-1);
  });
});

describe('a fragment file longer than its geometry', () => {
  it('reads exact, is reported corrupt on its domain by its size, and is rewritten to the right size', async () => {
    const r = await makeRig({ k: 4, m: 2 });
    rigs.push(r);
    const striped = randomBytes(700_000, 5);
    const small = randomBytes(2_000, 6);
    await r.provider.put('blobs/striped', striped);
    await r.provider.put('blobs/small', small);
    for (const [key, body] of [
      ['blobs/striped', striped],
      ['blobs/small', small],
    ] as const) {
      const h = await holderOf(r, key);
      const child = r.children[h.d]!;
      const size = (await child.head(h.child)).size;
      // Rewritten through the fs provider: a sound blob file, 100 bytes longer.
      await child.put(h.child, Buffer.concat([await getBytes(child, h.child), Buffer.alloc(100, 0x42)]));
      expect(firstDiff(await getBytes(r.provider, key), body), key).toBe(-1);

      const found = await r.provider.checkBlob(key);
      expect(found.fragments.filter((f) => f.state !== 'ok'), key).toEqual([expect.objectContaining({ domain: `d${h.d + 1}`, state: 'corrupt' })]);
      const fixed = await r.provider.checkBlob(key, { repair: true });
      expect(fixed.repaired, key).toBe(1);
      expect((await r.provider.checkBlob(key)).fragments.every((f) => f.state === 'ok'), key).toBe(true);
      const now = (await childKeys(r, h.d)).find((k) => k.startsWith(`${key}!`));
      expect(now, key).toBeDefined();
      expect((await child.head(now!)).size, key).toBe(size);
      expect(firstDiff(await getBytes(r.provider, key), body), key).toBe(-1);
    }
  });

  it('with more fragments extended than parity covers, the blob still reads and is not lost; repair keeps k sources and finishes on the next pass', async () => {
    const r = await makeRig({ k: 4, m: 2 });
    rigs.push(r);
    const body = randomBytes(900_000, 7);
    await r.provider.put('blobs/many', body);
    let extended = 0;
    for (let d = 0; d < r.children.length && extended < 3; d++) {
      const child = (await childKeys(r, d)).find((k) => k.startsWith('blobs/many!'));
      if (!child) continue;
      await r.children[d]!.put(child, Buffer.concat([await getBytes(r.children[d]!, child), Buffer.alloc(64, 0x17)]));
      extended++;
    }
    expect(extended).toBe(3);
    expect(firstDiff(await getBytes(r.provider, 'blobs/many'), body)).toBe(-1);
    const found = await r.provider.checkBlob('blobs/many');
    expect(found.lost).toBe(false);
    expect(found.fragments.filter((f) => f.state === 'corrupt')).toHaveLength(3);
    // Rewriting all three would leave 3 sources of the 4 needed: two now, the last next time.
    expect((await r.provider.checkBlob('blobs/many', { repair: true })).repaired).toBe(2);
    expect((await r.provider.checkBlob('blobs/many', { repair: true })).repaired).toBe(1);
    expect((await r.provider.checkBlob('blobs/many')).fragments.every((f) => f.state === 'ok')).toBe(true);
    expect(firstDiff(await getBytes(r.provider, 'blobs/many'), body)).toBe(-1);
  });

  it('a blob written without a known length: an extended fragment does not move where the others are read, whichever is listed first', async () => {
    const r = await makeRig({ k: 4, m: 2 });
    rigs.push(r);
    const body = randomBytes(800_000, 8);
    async function* chunks() {
      for (let at = 0; at < body.length; at += 100_000) yield body.subarray(at, at + 100_000);
    }
    // Each domain in turn holds the extended fragment (repaired before the next).
    for (let d = 0; d < r.children.length; d++) {
      await r.provider.put('blobs/streamed', chunks());
      const child = (await childKeys(r, d)).find((k) => k.startsWith('blobs/streamed!'));
      expect(child, `d${d + 1}`).toBeDefined();
      await r.children[d]!.put(child!, Buffer.concat([await getBytes(r.children[d]!, child!), Buffer.alloc(100, 0x33)]));
      await r.close();
      await r.reopen();
      expect(firstDiff(await getBytes(r.provider, 'blobs/streamed'), body), `d${d + 1}`).toBe(-1);
      const found = await r.provider.checkBlob('blobs/streamed');
      expect(found.fragments.filter((f) => f.state !== 'ok'), `d${d + 1}`).toEqual([expect.objectContaining({ domain: `d${d + 1}`, state: 'corrupt' })]);
      expect((await r.provider.checkBlob('blobs/streamed', { repair: true })).repaired, `d${d + 1}`).toBe(1);
      expect((await r.provider.checkBlob('blobs/streamed')).fragments.every((f) => f.state === 'ok'), `d${d + 1}`).toBe(true);
    }
  });
});

describe('a fragment file cut short while the server holds it open', () => {
  it('is one damaged fragment, not a failed domain: reads rebuild around it, writes still land, and repair rewrites it', async () => {
    // Exclusive children (as a server opens them) keep file handles and sizes cached, so the
    // read meets a file shorter than when it was opened.
    const r = await makeRig({ k: 4, m: 2, exclusive: true });
    rigs.push(r);
    const body = randomBytes(900_000, 11);
    await r.provider.put('blobs/shrunk', body);
    expect(firstDiff(await getBytes(r.provider, 'blobs/shrunk'), body)).toBe(-1);
    // Data fragment 0: a healthy read opens it (and caches its handle and size).
    const h = await holderOf(r, 'blobs/shrunk', (child) => child.endsWith('.0'));
    const full = statSync(h.path).size;
    truncateSync(h.path, Math.floor(full / 2));
    // The fs provider reads through its cached handle and finds the file short: that blob is damaged.
    const direct = await r.children[h.d]!.read!(h.child).catch((e: unknown) => e);
    expect(direct).toBeInstanceOf(ProviderError);
    expect((direct as ProviderError).code).toBe('Corrupt');
    expect((direct as Error).message).toMatch(/cut short/);
    expect(firstDiff(await getBytes(r.provider, 'blobs/shrunk'), body)).toBe(-1);
    // (4,2) over exactly 6 domains: the next striped write needs the damaged file's domain too.
    const next = randomBytes(500_000, 12);
    await r.provider.put('blobs/next', next);
    expect((await r.provider.checkBlob('blobs/next')).fragments.every((f) => f.state === 'ok')).toBe(true);
    const found = await r.provider.checkBlob('blobs/shrunk');
    expect(found.fragments.filter((f) => f.state !== 'ok')).toEqual([expect.objectContaining({ domain: `d${h.d + 1}`, state: 'corrupt' })]);
    expect((await r.provider.checkBlob('blobs/shrunk', { repair: true })).repaired).toBe(1);
    expect(statSync(h.path).size).toBe(full);
    expect(firstDiff(await getBytes(r.provider, 'blobs/shrunk'), body)).toBe(-1);
  });
});
