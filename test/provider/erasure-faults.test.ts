/**
 * The erasure provider under damage: deleted and corrupted fragments (up to m: byte-exact
 * reads, repair queued; m + 1: fails closed), hanging and failing domains (bounded by the
 * timeout, replaced on write), degraded writes, and checkBlob's repair.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { getBytes, ProviderError, type Provider } from '../../src/provider/provider.js';
import { childKey, parseChildKey } from '../../src/provider/erasure/child-key.js';
import { buildCopy } from '../../src/provider/erasure/rebuild.js';
import { createErasureProvider } from '../../src/provider/erasure/index.js';
import { bytes, expectCode, prng, readAll } from './helpers.js';
import { cleanupRigs, KiB, makeRig, MiB, type Rig } from './erasure-helpers.js';

afterAll(cleanupRigs);

/** Fragment (or copy) child keys of `key` on each domain: [domainIndex, childKey, index]. */
async function fragmentsOf(rig: Rig, key: string): Promise<[number, string, number][]> {
  const out: [number, string, number][] = [];
  for (const [i, d] of rig.domains.entries()) {
    for (const item of (await d.provider.list({ limit: 1000 })).items) {
      const name = parseChildKey(item.key);
      if (name?.key === key) out.push([i, item.key, name.index]);
    }
  }
  return out;
}

/** Flips one byte of a child blob (rewrites it). */
async function corrupt(p: Provider, child: string, at: number): Promise<void> {
  const b = Buffer.from(await getBytes(p, child));
  b[Math.min(at, b.length - 1)] ^= 0x5a;
  await p.put(child, b);
}

/** A provider wrapper whose calls never settle while `hang` is on. */
class Hanging implements Provider {
  hang = false;
  readonly kind = 'hanging';
  constructor(readonly inner: Provider) {}
  get capabilities() {
    return this.inner.capabilities;
  }
  #gate<T>(f: () => Promise<T>): Promise<T> {
    return this.hang ? new Promise<T>(() => undefined) : f();
  }
  put: Provider['put'] = (k, b, o) => this.#gate(() => this.inner.put(k, b, o));
  get: Provider['get'] = (k, o) => this.#gate(() => this.inner.get(k, o));
  head: Provider['head'] = (k) => this.#gate(() => this.inner.head(k));
  list: Provider['list'] = (o) => this.#gate(() => this.inner.list(o));
  delete: Provider['delete'] = (k) => this.#gate(() => this.inner.delete(k));
  close: Provider['close'] = () => this.inner.close();
}

/** A provider wrapper whose puts fail (after `after` body bytes) while `failPuts` is on. */
class FailingPuts implements Provider {
  failPuts = false;
  after = 0;
  readonly kind = 'failing';
  constructor(readonly inner: Provider) {}
  get capabilities() {
    return this.inner.capabilities;
  }
  put: Provider['put'] = (k, body, o) => {
    if (!this.failPuts) return this.inner.put(k, body, o);
    const after = this.after;
    async function* cut(): AsyncGenerator<Uint8Array> {
      let n = 0;
      for await (const c of body as AsyncIterable<Uint8Array>) {
        n += c.length;
        if (n > after) throw new ProviderError('Io', 'disk failed mid-write');
        yield c;
      }
    }
    return this.inner.put(k, cut(), { ...o, contentLength: undefined });
  };
  get: Provider['get'] = (k, o) => this.inner.get(k, o);
  read = (k: string, r?: { start: number; end?: number }) => getBytes(this.inner, k, r);
  head: Provider['head'] = (k) => this.inner.head(k);
  list: Provider['list'] = (o) => this.inner.list(o);
  delete: Provider['delete'] = (k) => this.inner.delete(k);
  close: Provider['close'] = () => this.inner.close();
}

describe('erasure provider: round trips and ranges', () => {
  // Cells of 64 KiB, 16 KiB checksum blocks, threshold 64 KiB, (4,2): sizes around every edge.
  const sizes = [0, 1, 4095, 16 * KiB, 64 * KiB - 1, 64 * KiB, 64 * KiB + 1, 256 * KiB - 1, 256 * KiB, 256 * KiB + 1, MiB + 12_345, 3 * MiB + 7];
  it('round-trips sizes around the block, cell, stripe and threshold boundaries, and reads every boundary range', async () => {
    const { provider: p } = await makeRig();
    for (const size of sizes) {
      const data = bytes(size, size + 1);
      await p.put(`b/${size}`, data);
      expect((await readAll(p, `b/${size}`)).equals(data), `size ${size}`).toBe(true);
      expect((await p.head(`b/${size}`)).size).toBe(size);
      if (size === 0) continue;
      const edges = [0, 1, 16 * KiB - 1, 16 * KiB, 64 * KiB - 1, 64 * KiB, 256 * KiB - 1, 256 * KiB, size - 1].filter((e) => e < size);
      for (const a of edges) {
        for (const len of [1, 2, 4096, 16 * KiB + 3, 200 * KiB]) {
          const end = Math.min(size - 1, a + len - 1);
          const got = await p.read!(`b/${size}`, { start: a, end });
          expect(Buffer.from(got).equals(data.subarray(a, end + 1)), `size ${size} range ${a}-${end}`).toBe(true);
        }
      }
    }
    const listed = (await p.list({ prefix: 'b/' })).items.map((i) => [i.key, i.size]);
    expect(new Map(listed as [string, number][])).toEqual(new Map(sizes.map((s) => [`b/${s}`, s])));
    await p.close();
  });

  it('stripes blobs at the threshold and replicates smaller ones and the anchor (m + 1 copies)', async () => {
    const rig = await makeRig({ stripeThreshold: 100 * KiB });
    const p = rig.provider;
    await p.put('small', bytes(100 * KiB - 1));
    await p.put('large', bytes(100 * KiB));
    await p.put('anchor', bytes(300 * KiB));
    const small = await fragmentsOf(rig, 'small');
    const large = await fragmentsOf(rig, 'large');
    const anchor = await fragmentsOf(rig, 'anchor');
    expect(small.map((f) => f[1].includes('!r.'))).toEqual([true, true, true]);
    expect(anchor).toHaveLength(3);
    expect(anchor.every((f) => f[1].includes('!r.'))).toBe(true);
    expect(large).toHaveLength(6);
    expect(new Set(large.map((f) => f[0])).size).toBe(6);
    expect(new Set(large.map((f) => f[2]))).toEqual(new Set([0, 1, 2, 3, 4, 5]));
    await p.close();
  });
});

describe('erasure provider: damage', () => {
  it('reads byte-exact with up to m fragments deleted or corrupted at random, and queues the key for repair', async () => {
    const rand = prng(11);
    for (let round = 0; round < 12; round++) {
      const rig = await makeRig();
      const p = rig.provider;
      const size = 200 * KiB + Math.floor(rand() * 900 * KiB);
      const data = bytes(size, round);
      await p.put('x', data);
      const frags = await fragmentsOf(rig, 'x');
      // At least one data fragment (a systematic read never touches parity when data is fine).
      const shuffled = frags.sort(() => rand() - 0.5);
      const firstData = shuffled.findIndex((f) => f[2] < 4);
      shuffled.unshift(...shuffled.splice(firstData, 1));
      const victims = shuffled.slice(0, 1 + Math.floor(rand() * 2));
      for (const [d, child] of victims) {
        if (rand() < 0.5) await rig.domains[d]!.provider.delete(child);
        else await corrupt(rig.domains[d]!.provider, child, 64 + Math.floor(rand() * size / 4));
      }
      expect((await readAll(p, 'x')).equals(data), `round ${round}`).toBe(true);
      const a = Math.floor(rand() * (size - 1));
      const got = await p.read!('x', { start: a, end: Math.min(size - 1, a + 5000) });
      expect(Buffer.from(got).equals(data.subarray(a, a + 5001))).toBe(true);
      expect(p.stats.degradedReads).toBeGreaterThan(0);
      expect(p.takeRepairQueue()).toEqual(['x']);
      // A fresh provider over the same domains (cold cache) reads it too.
      const check = await p.checkBlob('x', { repair: true });
      expect(check.lost).toBe(false);
      expect(check.repaired).toBe(victims.length);
      const after = await p.checkBlob('x');
      expect(after.fragments.every((f) => f.state === 'ok')).toBe(true);
      expect((await readAll(p, 'x')).equals(data)).toBe(true);
      await p.close();
    }
  });

  it('fails closed with Io naming the blob when m + 1 fragments are bad, never with wrong bytes', async () => {
    const rig = await makeRig();
    const p = rig.provider;
    await p.put('lost/blob', bytes(500 * KiB));
    const frags = await fragmentsOf(rig, 'lost/blob');
    // Three fragments bad in the same stripe (at most two are parity, so a data cell of
    // stripe 0 must be rebuilt from the three good ones: impossible with k = 4).
    await rig.domains[frags[0]![0]]!.provider.delete(frags[0]![1]);
    await corrupt(rig.domains[frags[1]![0]]!.provider, frags[1]![1], 100);
    await corrupt(rig.domains[frags[2]![0]]!.provider, frags[2]![1], 5000);
    const err = await readAll(p, 'lost/blob').then(
      () => undefined,
      (e: unknown) => e
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).code).toBe('Io');
    expect((err as Error).message).toContain('lost/blob');
    const check = await p.checkBlob('lost/blob', { repair: true });
    expect(check.lost).toBe(true);
    expect(check.repaired).toBe(0);
    await rig.domains[frags[1]![0]]!.provider.delete(frags[1]![1]);
    await rig.domains[frags[2]![0]]!.provider.delete(frags[2]![1]);
    // Three left of k = 4: lost, damage reported per fragment on its placed domain.
    const gone = await p.checkBlob('lost/blob', { repair: true });
    expect(gone.lost).toBe(true);
    expect(gone.fragments.map((f) => f.state).sort()).toEqual(['missing', 'missing', 'missing', 'ok', 'ok', 'ok']);
    expect(new Set(gone.fragments.map((f) => f.domain)).size).toBe(6);
    await expectCode(p.head('lost/blob'), 'Io');
    expect((await fragmentsOf(rig, 'lost/blob')).length).toBe(3); // never deleted by repair
    await p.close();
  });

  it('a replicated blob survives m bad copies and fails closed with all m + 1 bad', async () => {
    const rig = await makeRig();
    const p = rig.provider;
    const data = bytes(10_000, 3);
    await p.put('r', data);
    const copies = await fragmentsOf(rig, 'r');
    expect(copies).toHaveLength(3);
    await corrupt(rig.domains[copies[0]![0]]!.provider, copies[0]![1], 5000);
    await rig.domains[copies[1]![0]]!.provider.delete(copies[1]![1]);
    expect((await readAll(p, 'r')).equals(data)).toBe(true);
    expect(p.takeRepairQueue()).toContain('r');
    const before = await p.checkBlob('r');
    expect(before.fragments.map((f) => f.state).sort()).toEqual(['corrupt', 'missing', 'ok']);
    expect(before.fragments.every((f) => f.domain !== '?')).toBe(true);
    const fixed = await p.checkBlob('r', { repair: true });
    expect(fixed.repaired).toBe(2);
    expect((await p.checkBlob('r')).fragments.map((f) => f.state)).toEqual(['ok', 'ok', 'ok']);
    expect(await fragmentsOf(rig, 'r')).toHaveLength(3);
    await corrupt(rig.domains[copies[2]![0]]!.provider, copies[2]![1], 200);
    await corrupt(rig.domains[copies[0]![0]]!.provider, copies[0]![1], 300);
    await corrupt(rig.domains[copies[1]![0]]!.provider, copies[1]![1], 400);
    await expectCode(readAll(p, 'r'), 'Io');
    await p.close();
  });

  it('a cold provider finds fragments by listing, including ones moved off their placed domain', async () => {
    const rig = await makeRig();
    await rig.provider.put('cold', bytes(700 * KiB, 9));
    // Move one fragment to a domain that holds none of this blob.
    const frags = await fragmentsOf(rig, 'cold');
    const used = new Set(frags.map((f) => f[0]));
    const [d, child] = frags[0]!;
    const moved = await getBytes(rig.domains[d]!.provider, child);
    expect(used.size).toBe(6); // 6 domains, 6 fragments: the moved one shares a domain
    await rig.domains[d]!.provider.delete(child);
    await rig.domains[(d + 1) % 6]!.provider.put(child, moved);
    const cold = await createErasureProvider({
      config: { k: 4, m: 2, domains: [], policy: {}, cellSize: 64 * KiB, stripeThreshold: 64 * KiB, degradedWrites: false, domainTimeoutMs: 5000 },
      domains: rig.domains,
    });
    expect((await readAll(cold, 'cold')).equals(bytes(700 * KiB, 9))).toBe(true);
    expect(cold.stats.degradedReads).toBe(0);
  });
});

describe('erasure provider: domain failures', () => {
  it('bounds a read by the domain timeout when a domain hangs', async () => {
    const hanging: Hanging[] = [];
    const rig = await makeRig({ n: 8, domainTimeoutMs: 300, wrap: (p) => (hanging.push(new Hanging(p)), hanging.at(-1)!) });
    const p = rig.provider;
    const data = bytes(900 * KiB, 5);
    await p.put('h', data);
    await p.put('anchor', bytes(100, 1));
    hanging[0]!.hang = true;
    hanging[3]!.hang = true;
    const t0 = Date.now();
    expect((await readAll(p, 'h')).equals(data)).toBe(true);
    expect((await p.head('anchor')).size).toBe(100);
    expect(Date.now() - t0).toBeLessThan(3_000);
    const t1 = Date.now();
    await p.put('h2', bytes(500 * KiB, 6)); // placed around the failed domains
    await p.put('small2', bytes(1000, 6));
    expect(Date.now() - t1).toBeLessThan(3_000);
    // Listing and deleting tolerate up to m domains that do not answer, within the bound.
    const t2 = Date.now();
    expect((await p.list()).items.map((i) => i.key)).toEqual(['anchor', 'h', 'h2', 'small2']);
    await p.delete('h2');
    expect((await p.list()).items.map((i) => i.key)).toEqual(['anchor', 'h', 'small2']);
    expect(Date.now() - t2).toBeLessThan(3_000);
    const health = await p.domainHealth();
    expect(health.filter((h) => h.state === 'failed').map((h) => h.id).sort()).toEqual(['d1', 'd4']);
    hanging[0]!.hang = false;
    hanging[3]!.hang = false;
  });

  it('replaces a domain that fails mid-write and acknowledges only full redundancy', async () => {
    const failing: FailingPuts[] = [];
    const rig = await makeRig({ n: 8, wrap: (p) => (failing.push(new FailingPuts(p)), failing.at(-1)!) });
    const p = rig.provider;
    const data = bytes(2 * MiB + 5, 8);
    // Fail whichever domain holds fragment 2 of this key, after 300 KiB of its fragment.
    const probe = await makeRig({ n: 8 });
    await probe.provider.put('mw', data);
    const placed = await fragmentsOf(probe, 'mw');
    const victim = placed.find((f) => f[2] === 2)![0];
    failing[victim]!.failPuts = true;
    failing[victim]!.after = 300 * KiB;
    await p.put('mw', data);
    const frags = await fragmentsOf(rig, 'mw');
    expect(frags).toHaveLength(6);
    expect(frags.some((f) => f[0] === victim)).toBe(false);
    expect(new Set(frags.map((f) => f[2])).size).toBe(6);
    expect((await readAll(p, 'mw')).equals(data)).toBe(true);
    expect((await p.checkBlob('mw')).fragments.every((f) => f.state === 'ok')).toBe(true);
  });

  it('refuses writes with too few healthy domains unless degradedWrites, which stores k and queues repair', async () => {
    for (const degradedWrites of [false, true]) {
      const failing: FailingPuts[] = [];
      const rig = await makeRig({ degradedWrites, wrap: (p) => (failing.push(new FailingPuts(p)), failing.at(-1)!) });
      const p = rig.provider;
      failing[1]!.failPuts = true;
      failing[4]!.failPuts = true;
      const data = bytes(600 * KiB, 2);
      if (!degradedWrites) {
        const err = await p.put('dw', data).then(() => undefined, (e: unknown) => e);
        expect((err as ProviderError).code).toBe('Unavailable');
        expect((err as Error).message).toMatch(/degradedWrites is off/);
        await expectCode(p.head('dw'), 'NotFound');
        await p.put('dw-small', bytes(100)); // replicated: m + 1 = 3 of the 4 healthy domains
        // Nothing was left behind on the healthy domains.
        expect(await fragmentsOf(rig, 'dw')).toEqual([]);
      } else {
        await p.put('dw', data);
        await p.put('dw-small', bytes(100));
        expect((await readAll(p, 'dw')).equals(data)).toBe(true);
        expect((await fragmentsOf(rig, 'dw')).length).toBe(4);
        expect(p.takeRepairQueue()).toEqual(['dw']);
        failing[1]!.failPuts = false;
        failing[4]!.failPuts = false;
        await new Promise((r) => setTimeout(r, 5_100)); // the failed domains' cooldown
        const check = await p.checkBlob('dw', { repair: true });
        expect(check.repaired).toBe(2);
        expect((await fragmentsOf(rig, 'dw')).length).toBe(6);
      }
    }
  }, 20_000);
});

describe('erasure provider: anchor compare-and-swap', () => {
  it('creates once, swaps only on the current etag, and reads the newest copy after a crash between copies', async () => {
    const rig = await makeRig();
    const p = rig.provider;
    const first = await p.put('anchor', Buffer.from('v1'), { ifNoneMatch: '*' });
    await expectCode(p.put('anchor', Buffer.from('v1b'), { ifNoneMatch: '*' }), 'PreconditionFailed');
    const second = await p.put('anchor', Buffer.from('v2'), { ifMatch: first.etag });
    await expectCode(p.put('anchor', Buffer.from('v3'), { ifMatch: first.etag }), 'PreconditionFailed');
    expect((await readAll(p, 'anchor')).toString()).toBe('v2');
    // Old generation removed once the new one is durable.
    expect(await fragmentsOf(rig, 'anchor')).toHaveLength(3);
    // A cold provider agrees on the etag (conditions survive a restart).
    const cold = await createErasureProvider({
      config: { k: 4, m: 2, domains: [], policy: {}, cellSize: 64 * KiB, stripeThreshold: 64 * KiB, degradedWrites: false, domainTimeoutMs: 5000 },
      domains: rig.domains,
    });
    expect((await cold.head('anchor')).etag).toBe(second.etag);
    const third = await cold.put('anchor', Buffer.from('v3'), { ifMatch: second.etag });
    expect((await readAll(cold, 'anchor')).toString()).toBe('v3');
    // A crash that left one copy of a newer write: the newest valid copy wins.
    const copies = await fragmentsOf(rig, 'anchor');
    const name = parseChildKey(copies[0]![1])!;
    const gen = name.generation + 1;
    const v4 = Buffer.from('v4');
    await rig.domains[copies[0]![0]]!.provider.put(
      childKey({ ...name, generation: gen, length: v4.length }),
      buildCopy('anchor', gen, name.cellSize, v4)
    );
    const after = await createErasureProvider({
      config: { k: 4, m: 2, domains: [], policy: {}, cellSize: 64 * KiB, stripeThreshold: 64 * KiB, degradedWrites: false, domainTimeoutMs: 5000 },
      domains: rig.domains,
    });
    expect((await readAll(after, 'anchor')).toString()).toBe('v4');
    expect(after.takeRepairQueue()).toEqual(['anchor']); // one copy: short of m + 1
    expect(third.etag).not.toBe(second.etag);
  });
});

describe('erasure provider: deletes and unsized writes', () => {
  it('a delete while a domain is down succeeds; the leftover reappears with it, fails closed, and the next delete removes it', async () => {
    const hanging: Hanging[] = [];
    const rig = await makeRig({ domainTimeoutMs: 200, wrap: (p) => (hanging.push(new Hanging(p)), hanging.at(-1)!) });
    const p = rig.provider;
    await p.put('gone', bytes(300 * KiB, 4));
    const frags = await fragmentsOf(rig, 'gone');
    hanging[frags[0]![0]]!.hang = true;
    await p.delete('gone');
    await expectCode(p.head('gone'), 'NotFound');
    hanging[frags[0]![0]]!.hang = false;
    await new Promise((r) => setTimeout(r, 5_100)); // the domain's failure cooldown
    // Back: its one fragment is listed, too few to read: Io, never bytes.
    expect((await p.list()).items.map((i) => i.key)).toEqual(['gone']);
    await expectCode(p.head('gone'), 'Io');
    await p.delete('gone');
    expect((await p.list()).items).toEqual([]);
    expect(await fragmentsOf(rig, 'gone')).toEqual([]);
  }, 15_000);

  it('a striped stream of unknown length lists with its exact size and reads back cold', async () => {
    const rig = await makeRig();
    const data = bytes(700 * KiB + 3, 12);
    async function* gen(): AsyncGenerator<Uint8Array> {
      for (let o = 0; o < data.length; o += 50_000) yield data.subarray(o, o + 50_000);
    }
    const info = await rig.provider.put('unsized', gen());
    expect(info.size).toBe(data.length);
    const frags = await fragmentsOf(rig, 'unsized');
    expect(frags.every((f) => parseChildKey(f[1])!.length === undefined)).toBe(true);
    const cold = await createErasureProvider({
      config: { k: 4, m: 2, domains: [], policy: {}, cellSize: 64 * KiB, stripeThreshold: 64 * KiB, degradedWrites: false, domainTimeoutMs: 5000 },
      domains: rig.domains,
    });
    expect((await cold.list()).items.map((i) => [i.key, i.size, i.etag])).toEqual([['unsized', data.length, info.etag]]);
    expect((await readAll(cold, 'unsized')).equals(data)).toBe(true);
    expect((await cold.checkBlob('unsized')).fragments.every((f) => f.state === 'ok')).toBe(true);
  });
});

describe('erasure provider: placement policy', () => {
  it('puts every fragment and copy where the policy allows: one per zone, never on a denied domain, also after a replacement', async () => {
    const zone = (i: number) => `z${(i % 4) + 1}`;
    const failing: FailingPuts[] = [];
    const rig = await makeRig({
      k: 2,
      m: 2,
      n: 9,
      labels: (i) => ({ zone: zone(i) }),
      policy: { spread: [{ label: 'zone', max: 1 }], deny: ['d9'] },
      wrap: (p) => (failing.push(new FailingPuts(p)), failing.at(-1)!),
    });
    const p = rig.provider;
    const zoneOf = (d: number) => rig.domains[d]!.labels.zone;
    for (let i = 0; i < 20; i++) {
      await p.put(`s/${i}`, bytes(200 * KiB, i));
      await p.put(`r/${i}`, bytes(1000, i));
    }
    for (let i = 0; i < 20; i++) {
      const s = await fragmentsOf(rig, `s/${i}`);
      expect(s).toHaveLength(4);
      expect(new Set(s.map((f) => zoneOf(f[0]))).size).toBe(4);
      const r = await fragmentsOf(rig, `r/${i}`);
      expect(r).toHaveLength(3);
      expect(new Set(r.map((f) => zoneOf(f[0]))).size).toBe(3);
      expect([...s, ...r].some((f) => f[0] === 8)).toBe(false);
    }
    // d1 (zone z1) fails every put: fragments go to d5 (the other z1 domain) instead.
    failing[0]!.failPuts = true;
    for (let i = 0; i < 10; i++) await p.put(`t/${i}`, bytes(200 * KiB, 100 + i));
    for (let i = 0; i < 10; i++) {
      const t = await fragmentsOf(rig, `t/${i}`);
      expect(t).toHaveLength(4);
      expect(t.some((f) => f[0] === 0)).toBe(false);
      expect(new Set(t.map((f) => zoneOf(f[0]))).size).toBe(4);
      expect((await readAll(p, `t/${i}`)).equals(bytes(200 * KiB, 100 + i))).toBe(true);
    }
  });
});
