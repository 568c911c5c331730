/**
 * A crash can leave the last append of an erasure log segment on some of its copies only
 * (every copy is written at once; the crash came before all were durable, so the append was
 * never acknowledged). Reads take the longest copy, so recovery adopts that commit, and new,
 * acknowledged commits chain on it. If it stayed on one copy, losing that copy's domain would
 * break the chain under acknowledged commits. Provider.settleLog, which recovery calls on the
 * tip's segment, copies such a tail onto the other copies first.
 *
 * The torn state is made the way the crash leaves it: the last record's bytes zeroed on one
 * copy, through the fs child (the copies are otherwise identical).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseChildKey } from '../../src/provider/erasure/child-key.js';
import { rankDomains } from '../../src/provider/erasure/placement.js';
import { parseRecordHeader, recordEnd, RECORD_HEADER_BYTES, type LogRecord } from '../../src/provider/erasure/log-record.js';
import { getBytes, ProviderError, type Provider } from '../../src/provider/provider.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { Store } from '../../src/store/store.js';
import { collect, stream } from '../store/helpers.js';
import { chunkOf, copyName, holders, killRig, reopen, writeSegment } from '../provider/erasure-log-helpers.js';
import { cleanupRigs } from '../provider/erasure-helpers.js';
import { makeRig, wipeDomains, type Rig } from './fault-setup.js';

/** The records of a log copy's bytes, in order (as a scan finds them). */
function recordsOf(raw: Uint8Array, generation: number): LogRecord[] {
  const out: LogRecord[] = [];
  for (let pos = 0; pos + RECORD_HEADER_BYTES <= raw.length; ) {
    const r = parseRecordHeader(raw.subarray(pos, pos + RECORD_HEADER_BYTES), pos, generation);
    if (!r || recordEnd(r) > raw.length) break;
    out.push(r);
    pos = recordEnd(r);
  }
  return out;
}

/** The log copies of fs child `p` (child key, logical key, generation). */
async function logCopies(p: Provider): Promise<{ name: string; key: string; generation: number }[]> {
  const out: { name: string; key: string; generation: number }[] = [];
  for (const it of (await p.list({ limit: 10_000 })).items) {
    const n = parseChildKey(it.key);
    if (n?.layout === 'log') out.push({ name: it.key, key: n.key, generation: n.generation });
  }
  return out;
}

/** Zeroes the last record of copy `name` on `p` (its append never reached this copy); returns
 * how many records the copy held before. */
async function tearLast(p: Provider, name: string, generation: number): Promise<number> {
  const raw = Buffer.from(await getBytes(p, name));
  const records = recordsOf(raw, generation);
  const last = records.at(-1)!;
  raw.fill(0, last.phys, recordEnd(last));
  await p.put(name, raw);
  return records.length;
}

interface Copy {
  domain: number;
  name: string;
  key: string;
  generation: number;
}

/** Every log copy on the fs children, by domain index. */
async function copiesOn(children: readonly Provider[]): Promise<Copy[]> {
  const out: Copy[] = [];
  for (let d = 0; d < children.length; d++) for (const c of await logCopies(children[d]!)) out.push({ domain: d, ...c });
  return out;
}

/** Fault-setup rigs of this file, closed and removed after each test. */
const rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) {
    await r.close().catch(() => undefined);
    r.cleanup();
  }
});

/**
 * A (2,1) rig over `n` fs domains that can fail: every call to a domain in `dead` fails, and so
 * does every put to one in `refusePuts` (it still lists and reads). Its children stay reachable
 * unwrapped (Rig.children).
 */
async function faultyRig(n: number): Promise<{ r: Rig; dead: Set<number>; refusePuts: Set<number> }> {
  const dead = new Set<number>();
  const refusePuts = new Set<number>();
  const wrap = (i: number, p: Provider): Provider =>
    new Proxy(p, {
      get(t, prop) {
        const v = Reflect.get(t, prop) as unknown; // getters run on the provider itself (private fields)
        if (typeof v !== 'function' || prop === 'close') return v;
        return (...args: unknown[]) =>
          dead.has(i) || (prop === 'put' && refusePuts.has(i))
            ? Promise.reject(new ProviderError('Io', `d${i + 1} refuses ${String(prop)}`))
            : (v as (...a: unknown[]) => unknown).apply(t, args);
      },
    });
  const r = await makeRig({ k: 2, m: 1, n, wrap });
  rigs.push(r);
  return { r, dead, refusePuts };
}

describe('erasure settleLog', () => {
  afterEach(cleanupRigs);

  it('copies a tail held by one copy onto the other before anything builds on it', async () => {
    const rig = await killRig(2, 1, 3);
    const key = 'log/000000000031-aa';
    const { bytes, end } = await writeSegment(rig.provider, key, 4);
    const [a, b] = await holders(rig, key);
    const name = (await copyName(rig.inner[a!]!, key))!;
    const generation = parseChildKey(name)!.generation;
    expect(await tearLast(rig.inner[a!]!, name, generation)).toBe(4);
    await rig.provider.close();
    const lastStart = end - chunkOf(3).length;

    // Without settling, losing b loses the record only b held: it reads as never written.
    let lost = await reopen(rig, [0, 1, 2].filter((d) => d !== b));
    const without = Buffer.from(await getBytes(lost.provider, key, { start: 0, end: end - 1 }));
    expect(without.subarray(0, lastStart).equals(bytes.subarray(0, lastStart))).toBe(true);
    expect(without.subarray(lastStart).every((x) => x === 0)).toBe(true);
    await lost.provider.close();

    const again = await reopen(rig);
    await again.provider.settleLog!(key);
    expect((await again.provider.checkBlob(key)).fragments.map((f) => f.state)).toEqual(['ok', 'ok']);
    await again.provider.settleLog!(key); // settled: nothing left to do
    await again.provider.close();

    lost = await reopen(rig, [0, 1, 2].filter((d) => d !== b));
    expect(Buffer.from(await getBytes(lost.provider, key, { start: 0, end: end - 1 })).equals(bytes)).toBe(true);
    await lost.provider.close();
  });

  it('makes a new copy on another domain when a copy cannot be read, and refuses when no domain can take one', async () => {
    const rig = await killRig(2, 1, 3);
    const key = 'log/000000000032-bb';
    const { bytes, end } = await writeSegment(rig.provider, key, 3);
    const [a, b] = await holders(rig, key);
    const c = [0, 1, 2].find((d) => d !== a && d !== b)!;
    rig.kill(a!);
    await rig.provider.settleLog!(key);
    expect(await holders(rig, key).then((h) => h.includes(c))).toBe(true);
    await rig.provider.close();
    const solo = await reopen(rig, [c]);
    expect(Buffer.from(await getBytes(solo.provider, key, { start: 0, end: end - 1 })).equals(bytes)).toBe(true);
    await solo.provider.close();

    // Two of three domains dead: one copy readable, no domain for a second one.
    const rig2 = await killRig(2, 1, 3);
    await writeSegment(rig2.provider, key, 2);
    const [x, y] = await holders(rig2, key);
    rig2.kill(x!);
    rig2.kill([0, 1, 2].find((d) => d !== x && d !== y)!);
    await expect(rig2.provider.settleLog!(key)).rejects.toMatchObject({ code: 'Unavailable' });
    await rig2.provider.close();
  });
});

describe('erasure settleLog on domains that fail', () => {
  it('refuses when the only copy holding the records up to the adopted end stops answering before the repair', async () => {
    const { r, dead } = await faultyRig(3);
    const key = 'log/000000000033-cc';
    const { bytes, end } = await writeSegment(r.provider, key, 3);
    const [whole, torn] = (await copiesOn(r.children)).filter((c) => c.key === key) as [Copy, Copy];
    await tearLast(r.children[torn.domain]!, torn.name, torn.generation);
    await r.close();
    const p = await r.reopen();
    // What recovery read: the whole tail, from the longer copy (this scan caches the view).
    expect(Buffer.from(await getBytes(p, key, { start: 0, end: end - 1 })).equals(bytes)).toBe(true);
    dead.add(whole.domain); // its domain stops answering before settleLog repairs
    await expect(p.settleLog!(key, end)).rejects.toMatchObject({ code: 'Unavailable' });
  });

  it('goes on to the next spare when writing the new copy fails on one', async () => {
    const { r, dead, refusePuts } = await faultyRig(5);
    const key = 'log/000000000034-dd';
    const { bytes, end } = await writeSegment(r.provider, key, 3);
    const held = (await copiesOn(r.children)).filter((c) => c.key === key).map((c) => c.domain);
    expect(held).toHaveLength(2);
    // One holder dies; of the three spares only the last in rendezvous order takes a copy.
    dead.add(held[0]!);
    const ids = r.config.domains.map((d) => d.id);
    const spares = rankDomains(key, r.config.domains.map((d) => ({ id: d.id, labels: {} }))).map((id) => ids.indexOf(id)).filter((d) => !held.includes(d));
    expect(spares).toHaveLength(3);
    for (const d of spares.slice(0, 2)) refusePuts.add(d);
    await r.provider.settleLog!(key, end);
    const last = spares[2]!;
    const now = (await copiesOn(r.children)).filter((c) => c.key === key).map((c) => c.domain);
    expect(now).toContain(last);
    for (const d of spares.slice(0, 2)) expect(now).not.toContain(d);
    expect(Buffer.from(await getBytes(r.provider, key, { start: 0, end: end - 1 })).equals(bytes)).toBe(true);
  });
});

describe('recovery over the erasure provider', () => {
  const text = (s: string) => new TextEncoder().encode(s);
  const read = async (store: Store, key: string) => Buffer.from(await collect((await store.getObject('bkt', key)).body)).toString();

  it('keeps commits acknowledged after a crash whose last commit reached one copy when that copy is lost', async () => {
    const r = await makeRig({ k: 2, m: 1, n: 3 });
    rigs.push(r);
    let store = await Store.open(r.provider);
    await store.createBucket('bkt');
    for (const k of ['one', 'two', 'three']) await store.putObject('bkt', k, stream(text(k)), { size: k.length });
    // The crash: the store is not closed; its last commit ('three') is then torn on one copy.
    await r.close();
    const children = await Promise.all(r.domainDirs.map((dir) => createFsProvider({ dir })));
    const copies = await copiesOn(children);
    const tipKey = copies.map((c) => c.key).sort().at(-1)!; // segments are named by first sequence
    const tip = copies.filter((c) => c.key === tipKey);
    expect(tip).toHaveLength(2);
    const [torn, whole] = tip as [Copy, Copy];
    await tearLast(children[torn.domain]!, torn.name, torn.generation);
    for (const c of children) await c.close();

    store = await Store.open(await r.reopen());
    expect(await read(store, 'three')).toBe('three'); // adopted from the longer copy
    await store.putObject('bkt', 'four', stream(text('four')), { size: 4 }); // acknowledged, chained on 'three'
    await r.close(); // a crash again

    // The domain that held the only whole copy of the old tail is lost (emptied).
    wipeDomains(r, [whole.domain]);
    store = await Store.open(await r.reopen());
    for (const k of ['one', 'two', 'three', 'four']) expect(await read(store, k)).toBe(k);
    await store.close();
  });
});
