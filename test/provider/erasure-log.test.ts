/**
 * The erasure provider's append log (provider/erasure/log-copy.ts): segments replicated to
 * m + 1 fs domains, appends durable on every copy, a domain lost mid-life replaced from a
 * survivor, a corrupt copy read around, scrub (checkBlob) repairing lost and corrupt copies,
 * and no openLog when a domain cannot append.
 */
import { truncateSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FsProvider } from '../../src/provider/fs/index.js';
import { AppendError, type AppendLog } from '../../src/provider/append-log.js';
import { END_TO_END, getBytes, type Provider } from '../../src/provider/provider.js';
import { childKey, parseChildKey } from '../../src/provider/erasure/child-key.js';
import { DomainSet } from '../../src/provider/erasure/domains.js';
import { COPY_WINDOW_BYTES, CopyWindows, scanCopy, scanCopyChecked } from '../../src/provider/erasure/log-view.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { dataSpan, dropBlockCrcs, encodeRecord, parseRecordHeader, recordBytes, LOG_BLOCK_BYTES, MAX_RECORD_BYTES } from '../../src/provider/erasure/log-record.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { dropFromPageCache, pageCacheToolsAvailable, residentPages } from '../support/page-cache.js';
import { prng, randomBytes } from '../support/random.js';
import { tempDir } from '../store/helpers.js';
import { cleanupRigs, KiB, makeRig } from './erasure-helpers.js';
import { appendAll, chunkOf, copyName, corrupt, holders, killRig, reopen, writeSegment } from './erasure-log-helpers.js';

afterEach(cleanupRigs);

describe('log record format', () => {
  it('round-trips and refuses torn, misplaced and hostile headers', () => {
    const data = chunkOf(3, 3 * LOG_BLOCK_BYTES + 5);
    const rec = encodeRecord(77, 2, 1234, [data], data.length);
    expect(rec.length).toBe(recordBytes(data.length));
    expect(parseRecordHeader(rec, 0, 77)).toEqual({ phys: 0, logical: 1234, length: data.length, attempt: 2 });
    expect(parseRecordHeader(rec, 0, 78)).toBeUndefined(); // another segment's generation
    expect(parseRecordHeader(rec.subarray(0, 31), 0, 77)).toBeUndefined(); // truncated
    expect(parseRecordHeader(new Uint8Array(32), 0, 77)).toBeUndefined(); // preallocated zeros
    for (let i = 0; i < 32; i++) {
      const bad = Buffer.from(rec.subarray(0, 32));
      bad[i] ^= 0x10;
      expect(parseRecordHeader(bad, 0, 77), `flip in header byte ${i}`).toBeUndefined();
    }
    // An oversized length with a valid CRC is still refused (hostile header).
    const big = encodeRecord(77, 2, 0, [], 0);
    Buffer.from(big.buffer, big.byteOffset).writeUInt32LE(MAX_RECORD_BYTES + 1, 4);
    expect(parseRecordHeader(big, 0, 77)).toBeUndefined();
  });
});

describe('unchecked reads of a record (dataSpan, dropBlockCrcs)', () => {
  it('give back any data range of a record, block CRCs dropped, and refuse a span of another length', () => {
    const data = chunkOf(9, 3 * LOG_BLOCK_BYTES + 5);
    const rec = encodeRecord(77, 2, 0, [data], data.length);
    // The record at an odd place in its copy, as in a segment after other records.
    const copy = Buffer.concat([Buffer.alloc(1000, 0xee), rec, Buffer.alloc(50, 0xdd)]);
    const r = { ...parseRecordHeader(rec, 0, 77)!, phys: 1000 };
    const B = LOG_BLOCK_BYTES;
    const edges = [0, 1, B - 1, B, B + 1, 2 * B - 4, 2 * B, 3 * B - 1, 3 * B, data.length - 1];
    const rand = prng(5);
    const ranges: [number, number][] = [];
    for (const from of edges) for (const to of [...edges.map((e) => e + 1), data.length]) if (to > from) ranges.push([from, to]);
    for (let i = 0; i < 200; i++) {
      const from = Math.floor(rand() * data.length);
      ranges.push([from, from + 1 + Math.floor(rand() * (data.length - from))]);
    }
    for (const [from, to] of ranges) {
      const span = dataSpan(r, from, to);
      const raw = Buffer.from(copy.subarray(span.start, span.start + span.length)); // a copy: it is overwritten
      expect(Buffer.from(dropBlockCrcs(raw, from, to) ?? []).equals(data.subarray(from, to)), `[${from}, ${to})`).toBe(true);
      // A read that came back short or long (a truncated copy, a wrong span) is not taken.
      expect(dropBlockCrcs(copy.slice(span.start, span.start + span.length - 1), from, to)).toBeUndefined();
      expect(dropBlockCrcs(copy.slice(span.start, span.start + span.length + 1), from, to)).toBeUndefined();
    }
    // The span holds no byte of the record's header nor past the data asked for.
    expect(dataSpan(r, 0, 1)).toEqual({ start: 1000 + 32, length: 1 });
    expect(dataSpan(r, B - 1, B + 1)).toEqual({ start: 1000 + 32 + B - 1, length: 2 + 4 });
  });
});

describe('scanning a log copy', () => {
  const GEN = 12345;
  const rec = (attempt: number, logical: number, data: Uint8Array, gen = GEN) => encodeRecord(gen, attempt, logical, [data], data.length);
  async function scan(bytes: Uint8Array) {
    const mem = await createMemoryProvider();
    await mem.put('c', bytes);
    const domains = new DomainSet([{ id: 'd1', labels: {}, provider: mem }], 5000);
    return (await scanCopy(domains, 'd1', 'c', GEN)).map((r) => [r.logical, r.length, r.attempt]);
  }

  it('stops at zeros, a backwards offset, another segment, a record past the end, a torn tail', async () => {
    const a = chunkOf(1, 5000);
    const b = chunkOf(2, 300);
    const good = Buffer.concat([rec(1, 0, a), rec(2, 5000, b)]);
    expect(await scan(Buffer.concat([good, Buffer.alloc(4096)]))).toEqual([[0, 5000, 1], [5000, 300, 2]]);
    expect(await scan(Buffer.concat([good, rec(3, 10, b)]))).toEqual([[0, 5000, 1], [5000, 300, 2]]); // backwards
    expect(await scan(Buffer.concat([good, rec(3, 5300, b, GEN + 1)]))).toEqual([[0, 5000, 1], [5000, 300, 2]]); // other segment
    const past = rec(3, 5300, a);
    expect(await scan(Buffer.concat([good, past.subarray(0, past.length - 1)]))).toEqual([[0, 5000, 1], [5000, 300, 2]]); // runs past the end
    const torn = Buffer.from(rec(3, 5300, a));
    torn.fill(0, 2000, 3000); // header intact, blocks not: the last record is verified whole
    expect(await scan(Buffer.concat([good, torn, Buffer.alloc(100)]))).toEqual([[0, 5000, 1], [5000, 300, 2]]);
    expect(await scan(new Uint8Array(0))).toEqual([]);
    expect(await scan(good.subarray(0, 31))).toEqual([]); // a truncated first header
    // A gap is allowed (zeros between appends read as zeros); a gap record still scans.
    expect(await scan(Buffer.concat([good, rec(3, 9000, b)]))).toEqual([[0, 5000, 1], [5000, 300, 2], [9000, 300, 3]]);
  });

  it('with its checks: each record judged from the windows it is read in, one across a window edge read again, one larger than a window left to verifyRecord', async () => {
    // About 1.3 MiB of 9 KiB records (the scan reads 1 MiB windows: one record crosses the
    // edge), one of them flipped, then a 1.5 MiB record, then a small one.
    const parts: Uint8Array[] = [];
    let logical = 0;
    const flipAt = 100;
    for (let i = 0; i < 150; i++) {
      const r = Buffer.from(rec(1, logical, chunkOf(i, 9000)));
      if (i === flipAt) r[500] ^= 0x01;
      parts.push(r);
      logical += 9000;
    }
    parts.push(rec(1, logical, chunkOf(500, 1536 * KiB)));
    logical += 1536 * KiB;
    parts.push(rec(1, logical, chunkOf(501, 300)));
    const mem = await createMemoryProvider();
    await mem.put('c', Buffer.concat(parts));
    const domains = new DomainSet([{ id: 'd1', labels: {}, provider: mem }], 5000);
    const { records, verified } = await scanCopyChecked(domains, 'd1', 'c', GEN, true);
    expect(records.length).toBe(152);
    expect(verified.map((v, i) => (v === true ? '' : `${i}:${v}`)).filter(Boolean)).toEqual([`${flipAt}:false`, '150:undefined']);
    // Without checks, the same records and nothing judged.
    const plain = await scanCopyChecked(domains, 'd1', 'c', GEN, false);
    expect(plain.records).toEqual(records);
    expect(plain.verified.every((v) => v === undefined)).toBe(true);
  });

  it('reads a copy in windows (CopyWindows): spans inside a window cost no read, a span past its end reads from its start, the end reads short', async () => {
    const size = COPY_WINDOW_BYTES + 5000;
    const bytes = randomBytes(size, 77);
    const mem = await createMemoryProvider();
    await mem.put('c', bytes);
    let reads = 0;
    const counted = new Proxy(mem, {
      get: (t, prop, r) => {
        const v = Reflect.get(t, prop) as unknown; // getters run on the provider itself (private fields)
        if ((prop !== 'read' && prop !== 'get') || typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          reads++;
          return (v as (...a: unknown[]) => unknown).apply(t, args);
        };
      },
    });
    const w = new CopyWindows(new DomainSet([{ id: 'd1', labels: {}, provider: counted }], 5000), 'd1', 'c', size);
    const same = (got: Uint8Array, start: number, end: number) => expect(Buffer.from(got).equals(bytes.subarray(start, end))).toBe(true);
    same(await w.span(0, 32), 0, 32);
    same(await w.span(100, 9000), 100, 9000);
    same(await w.span(COPY_WINDOW_BYTES - 10, COPY_WINDOW_BYTES), COPY_WINDOW_BYTES - 10, COPY_WINDOW_BYTES);
    // `held` answers from the window without a read, and only what the window holds whole.
    same(w.held(200, 300)!, 200, 300);
    expect(w.held(COPY_WINDOW_BYTES - 10, COPY_WINDOW_BYTES + 1)).toBeUndefined();
    expect(reads).toBe(1);
    // Across the window's end: a new window from the span's start.
    same(await w.span(COPY_WINDOW_BYTES - 10, COPY_WINDOW_BYTES + 10), COPY_WINDOW_BYTES - 10, COPY_WINDOW_BYTES + 10);
    expect(reads).toBe(2);
    // Back before the window: read again. At the end: short, then empty.
    expect(w.held(50, 60)).toBeUndefined();
    same(await w.span(50, 60), 50, 60);
    expect(reads).toBe(3);
    const tail = await w.span(size - 100, size + 100);
    same(tail, size - 100, size);
    expect(reads).toBe(4);
    expect((await w.span(size, size + 32)).length).toBe(0);
    expect((await w.span(size + 10, size + 42)).length).toBe(0);
    expect(reads).toBe(4);
  });

  for (const [how, direct] of [
    ['buffered', false],
    ['around the page cache (direct I/O on)', true],
  ] as const) {
    it(`scans and checks a copy on an fs domain ${how}, with the same records`, async (ctx) => {
      const { dir, cleanup } = tempDir('log-copy-direct');
      const fs = await createFsProvider({ dir, exclusive: true, directWrites: direct });
      try {
        if (direct && !fs.directFileReads) ctx.skip(); // a directory without O_DIRECT (CI's has it)
        expect(fs.directFileReads === true).toBe(direct);
        // 2.5 MiB of records (three windows), the last torn: the scan drops it either way.
        const parts: Uint8Array[] = [];
        let logical = 0;
        for (let i = 0; i < 300; i++) {
          parts.push(rec(1, logical, chunkOf(i, 9000)));
          logical += 9000;
        }
        const torn = Buffer.from(rec(1, logical, chunkOf(999, 5000)));
        torn[100] ^= 1;
        await fs.put('c', Buffer.concat([...parts, torn]));
        const path = fs.blobFilePath('c');
        const domains = new DomainSet([{ id: 'd1', labels: {}, provider: fs }], 5000);
        // The scan's head of the copy reads its blob header buffered (with the kernel's read-ahead):
        // what that leaves cached is the baseline.
        if (pageCacheToolsAvailable) dropFromPageCache(path);
        await fs.head('c');
        const baseline = pageCacheToolsAvailable ? residentPages(path) : 0;
        const { records, verified } = await scanCopyChecked(domains, 'd1', 'c', GEN, true);
        expect(records.length).toBe(300);
        expect(verified.every((v) => v === true)).toBe(true);
        if (!pageCacheToolsAvailable) return;
        expect(baseline).toBeLessThan(64);
        if (direct) expect(residentPages(path)).toBe(baseline);
        else expect(residentPages(path)).toBeGreaterThan(600); // 2.6 MiB: about 650 pages
      } finally {
        await fs.close();
        cleanup();
      }
    });
  }
});

describe('log copy names', () => {
  it('round-trip and refuse malformed log metas', () => {
    const name = { key: 'log/000000000001-aa', layout: 'log' as const, k: 1, m: 0, cellSize: 1, length: 64 * KiB, generation: 1_700_000_000_000_000, index: 0 };
    const child = childKey(name);
    expect(child).toBe(`log/000000000001-aa!l.${(64 * KiB).toString(36)}.${name.generation.toString(36)}`);
    expect(parseChildKey(child)).toEqual(name);
    for (const bad of ['k!l', 'k!l.1', 'k!l.1.2.3', 'k!l._.5', 'k!l.1.', 'k!l.-1.2', 'k!l.1.A', 'k!l.zzzzzzzzzzzz.1'])
      expect(parseChildKey(bad), bad).toBeUndefined();
  });
});

describe('erasure provider openLog', () => {
  it('replicates a segment to m + 1 domains; appends read back exact, the tail reads as zeros', async () => {
    const rig = await killRig(4, 2);
    const p = rig.provider;
    expect(typeof p.openLog).toBe('function');
    const key = 'log/000000000001-aa';
    const log = await p.openLog!(key, 256 * KiB);
    expect(log.preallocated).toBe(256 * KiB);
    const { bytes, end } = await appendAll(log, 40);
    expect((await holders(rig, key)).length).toBe(3);
    expect((await p.head(key)).size).toBe(256 * KiB);
    const all = await getBytes(p, key);
    expect(all.length).toBe(256 * KiB);
    expect(Buffer.from(all.subarray(0, end)).equals(bytes)).toBe(true);
    expect(all.subarray(end).every((b) => b === 0)).toBe(true);
    // Ranged reads at odd places, across records and into the zero tail.
    const rand = prng(5);
    for (let i = 0; i < 60; i++) {
      const s = rand() % (end + 100);
      const e = Math.min(256 * KiB - 1, s + (rand() % 20000));
      const got = await p.read!(key, { start: s, end: e });
      const want = Buffer.alloc(e - s + 1);
      bytes.subarray(s, e + 1).copy(want);
      expect(Buffer.from(got).equals(want), `range ${s}-${e}`).toBe(true);
    }
    // A streamed get agrees.
    const res = await p.get(key, { range: { start: 5, end: end + 9 } });
    const chunks: Buffer[] = [];
    for await (const c of res.body) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(Buffer.concat([bytes.subarray(5), Buffer.alloc(10)]))).toBe(true);
    // Appends past the preallocation grow the segment; backwards appends are refused.
    const tail = chunkOf(99, 5000);
    await log.append(256 * KiB - 10, [tail]);
    expect((await p.head(key)).size).toBe(256 * KiB - 10 + 5000);
    await expect(log.append(10, [tail])).rejects.toMatchObject({ stage: 'write' });
    await log.close();
    await expect(p.openLog!(key, 1024)).rejects.toMatchObject({ code: 'PreconditionFailed' });
    await p.close();
    // A fresh provider over the same domains scans the copies and reads the same bytes.
    const again = await reopen(rig);
    expect(Buffer.from(await getBytes(again.provider, key, { start: 0, end: end - 1 })).equals(bytes)).toBe(true);
    expect(Buffer.from(await getBytes(again.provider, key, { start: 256 * KiB - 10 })).equals(Buffer.from(tail))).toBe(true);
    const listed = (await again.provider.list({ prefix: 'log/' })).items;
    // list() reads sizes from names alone: a segment lists at its preallocated size (head() is exact).
    expect(listed.map((i) => [i.key, i.size])).toEqual([[key, 256 * KiB]]);
    expect((await again.provider.checkBlob(key)).fragments.map((f) => f.state)).toEqual(['ok', 'ok', 'ok']);
    await again.provider.delete(key);
    for (const c of again.inner) expect(await copyName(c, key)).toBeUndefined();
    await again.provider.close();
  });

  it('is not offered when a domain cannot append (memory or s3 children)', async () => {
    const rig = await makeRig({ kind: 'memory' });
    expect(rig.provider.openLog).toBeUndefined();
    await rig.provider.close();
  });

  it('replaces a domain lost mid-run from a surviving copy, losing no acknowledged append', async () => {
    const rig = await killRig(4, 2);
    const p = rig.provider;
    const key = 'log/000000000007-bb';
    const log = await p.openLog!(key, 128 * KiB);
    const first = await appendAll(log, 20);
    const before = await holders(rig, key);
    const gone = before[0]!;
    rig.kill(gone);
    const second = await appendAll(log, 20, 20, first.end);
    const after = (await holders(rig, key)).filter((d) => d !== gone);
    expect(after.length).toBe(3);
    const want = Buffer.concat([first.bytes, second.bytes]);
    expect(Buffer.from(await getBytes(p, key, { start: 0, end: want.length - 1 })).equals(want)).toBe(true);
    // Reads of the live segment served by the survivors while the log stays open.
    expect((await p.checkBlob(key)).fragments.every((f) => f.state === 'ok')).toBe(true);
    await log.close();
    await p.close();
    // Every surviving copy (the replacement included) holds every acknowledged append.
    for (const d of after) {
      const solo = await reopen(rig, [d]);
      expect(Buffer.from(await getBytes(solo.provider, key, { start: 0, end: want.length - 1 })).equals(want), `copy on d${d + 1}`).toBe(true);
      await solo.provider.close();
    }
  });

  it('gives up a copy whose domain hangs, its close included, within the domain timeout, and replaces it', async () => {
    let hung = -1;
    const never = () => new Promise<never>(() => undefined);
    const inner: Provider[] = [];
    const made = await makeRig({
      kind: 'fs',
      k: 4,
      m: 2,
      domainTimeoutMs: 300,
      wrap: (p, i) =>
        (inner[i] = p) &&
        new Proxy(p, {
          get(t, prop, r) {
            const v = Reflect.get(t, prop) as unknown; // getters run on the provider itself (private fields)
            if (prop !== 'openLog' || typeof v !== 'function') return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
            return async (...args: unknown[]) => {
              const log = await (v as (...a: unknown[]) => Promise<AppendLog>).apply(t, args);
              return {
                key: log.key,
                preallocated: log.preallocated,
                append: (o: number, c: readonly Uint8Array[]) => (hung === i ? never() : log.append(o, c)),
                close: () => (hung === i ? never() : log.close()),
              };
            };
          },
        }),
    });
    const rig = { ...made, inner } as never;
    const p = made.provider;
    const key = 'log/000000000009-hh';
    const log = await p.openLog!(key, 128 * KiB);
    const first = await appendAll(log, 5);
    const before = await holders(rig, key);
    hung = before[0]!;
    const t0 = Date.now();
    const second = await Promise.race([
      appendAll(log, 5, 5, first.end),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('appends hung on the dropped copy')), 20_000)),
    ]);
    expect(Date.now() - t0).toBeLessThan(15_000);
    const want = Buffer.concat([first.bytes, second.bytes]);
    expect(Buffer.from(await getBytes(p, key, { start: 0, end: want.length - 1 })).equals(want)).toBe(true);
    const after = (await holders(rig, key)).filter((d) => d !== hung);
    expect(after.length).toBe(3);
    hung = -1;
    await log.close();
  });

  it('fails with AppendError sync (the repository fences) when no domain can replace a lost copy', async () => {
    const rig = await killRig(2, 1, 3);
    const p = rig.provider;
    const key = 'log/000000000009-cc';
    const log = await p.openLog!(key, 64 * KiB);
    const { end } = await appendAll(log, 3);
    const [gone] = await holders(rig, key);
    rig.kill(gone!);
    // The third domain holds no copy but can take one: the append survives.
    await log.append(end, [chunkOf(5)]);
    const left = (await holders(rig, key)).filter((d) => d !== gone);
    expect(left.length).toBe(2);
    rig.kill(left[0]!);
    const err = await log.append(end + 100_000, [chunkOf(6)]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppendError);
    expect((err as AppendError).stage).toBe('sync');
    await expect(log.append(end + 200_000, [chunkOf(7)])).rejects.toMatchObject({ stage: 'sync' });
    await log.close();
    await p.close();
  });

  it('with degradedWrites, goes on with fewer copies and queues the segment for repair', async () => {
    const rig = await killRig(2, 1, 3, { degradedWrites: true });
    const key = 'log/00000000000b-ce';
    const log = await rig.provider.openLog!(key, 64 * KiB);
    const first = await appendAll(log, 2);
    const held = await holders(rig, key);
    // One copy's domain and the only spare die: no replacement, one copy goes on.
    rig.kill(held[0]!);
    rig.kill([0, 1, 2].find((d) => !held.includes(d))!);
    const second = await appendAll(log, 2, 2, first.end);
    expect(rig.provider.takeRepairQueue()).toContain(key);
    const want = Buffer.concat([first.bytes, second.bytes]);
    expect(Buffer.from(await getBytes(rig.provider, key, { start: 0, end: want.length - 1 })).equals(want)).toBe(true);
    // The spare comes back; once the top-up interval and its cooldown have passed, the next
    // append first copies the segment onto it.
    const spare = [0, 1, 2].find((d) => !held.includes(d))!;
    rig.revive(spare);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 120_000);
      const third = await appendAll(log, 1, 4, second.end);
      expect((await holders(rig, key)).filter((d) => d !== held[0])).toHaveLength(2);
      const all = Buffer.concat([want, third.bytes]);
      const solo = rig.inner[spare]!;
      expect(await copyName(solo, key)).toBeDefined();
      // Both live copies verify record for record against the writer's list.
      expect((await rig.provider.checkBlob(key)).fragments.map((f) => f.state)).toEqual(['ok', 'ok']);
      expect(Buffer.from(await getBytes(rig.provider, key, { start: 0, end: all.length - 1 })).equals(all)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
    await log.close();
    await rig.provider.close();
  });

  it('fails with AppendError write, and writes the same place again, when every copy fails before writing', async () => {
    const rig = await killRig(2, 1, 3);
    const key = 'log/00000000000a-cd';
    const log = await rig.provider.openLog!(key, 64 * KiB);
    const { bytes, end } = await appendAll(log, 2);
    for (const d of [0, 1, 2]) rig.kill(d);
    await expect(log.append(end, [chunkOf(8)])).rejects.toMatchObject({ stage: 'write' });
    await log.close();
    await rig.provider.close();
    const again = await reopen(rig);
    expect(Buffer.from(await getBytes(again.provider, key, { start: 0, end: end - 1 })).equals(bytes)).toBe(true);
    expect((await again.provider.head(key)).size).toBe(64 * KiB);
    await again.provider.close();
  });

  it('reads around a corrupt copy; scrub rewrites it and re-replicates a lost copy', async () => {
    const rig = await killRig(4, 2);
    const key = 'log/000000000011-dd';
    const { bytes, end } = await writeSegment(rig.provider, key, 12);
    const [a, b] = await holders(rig, key);
    await corrupt(rig.inner[a!]!, key, 2);
    await rig.inner[b!]!.delete((await copyName(rig.inner[b!]!, key))!);
    await rig.provider.close();
    const again = await reopen(rig);
    const p = again.provider;
    for (let i = 0; i < 3; i++) expect(Buffer.from(await getBytes(p, key, { start: 0, end: end - 1 })).equals(bytes)).toBe(true);
    const found = await p.checkBlob(key);
    expect(found.lost).toBe(false);
    expect(found.fragments.map((f) => f.state).sort()).toEqual(['corrupt', 'missing', 'ok']);
    const fixed = await p.checkBlob(key, { repair: true });
    expect(fixed.repaired).toBe(2);
    expect((await p.checkBlob(key)).fragments.map((f) => f.state)).toEqual(['ok', 'ok', 'ok']);
    const now: number[] = [];
    for (let i = 0; i < again.inner.length; i++) if (await copyName(again.inner[i]!, key)) now.push(i);
    expect(now.length).toBe(3);
    await p.close();
    for (const d of now) {
      const solo = await reopen(rig, [d]);
      expect(Buffer.from(await getBytes(solo.provider, key, { start: 0, end: end - 1 })).equals(bytes), `copy on d${d + 1}`).toBe(true);
      await solo.provider.close();
    }
  });

  it('checks a copy window by window: records across windows, one larger than a window, a flipped one and a copy cut short are each judged alone, in few reads', async () => {
    const rig = await killRig(4, 2);
    const key = 'log/000000000013-ff';
    // 400 appends of 0.7-9.7 KiB (about 2 MiB: the check reads 1 MiB windows), then one of
    // 1.5 MiB (more than a window), then 100 more.
    const log = await rig.provider.openLog!(key, 8 * 1024 * KiB);
    const first = await appendAll(log, 400);
    const big = chunkOf(9999, 1536 * KiB);
    await log.append(first.end, [big]);
    const last = await appendAll(log, 100, 400, first.end + big.length);
    await log.close();
    const bytes = Buffer.concat([first.bytes, Buffer.from(big), last.bytes]);
    const [a, b, c] = await holders(rig, key);
    // Copy a: one record's byte flipped past the first window. Copy b: cut short in the middle
    // of record 450 (the fs file is a 32-byte header, then the copy's records).
    await corrupt(rig.inner[a!]!, key, 300);
    let cut = recordBytes(big.length);
    for (let n = 0; n < 450; n++) cut += recordBytes(chunkOf(n).length);
    const fsB = rig.inner[b!] as FsProvider;
    truncateSync(fsB.blobFilePath((await copyName(fsB, key))!), 32 + cut + 100);
    await rig.provider.close();

    const again = await reopen(rig);
    let reads = 0;
    for (const p of again.inner)
      for (const name of ['read', 'readv', 'get'] as const) {
        const f = (p as unknown as Record<string, (...x: unknown[]) => unknown>)[name];
        if (f) (p as unknown as Record<string, unknown>)[name] = (...x: unknown[]) => (reads++, f.apply(p, x));
      }
    const found = await again.provider.checkBlob(key);
    expect(found.lost).toBe(false);
    const state = (d: number) => found.fragments.find((f) => f.domain === `d${d + 1}`)?.state;
    expect([state(a!), state(b!), state(c!)]).toEqual(['corrupt', 'corrupt', 'ok']);
    // Reading each copy's 501 records one by one took two reads a record.
    expect(reads).toBeLessThan(100);

    const fixed = await again.provider.checkBlob(key, { repair: true });
    expect(fixed.repaired).toBe(2);
    expect((await again.provider.checkBlob(key)).fragments.map((f) => f.state)).toEqual(['ok', 'ok', 'ok']);
    await again.provider.close();
    for (const d of await holders(rig, key)) {
      const solo = await reopen(rig, [d]);
      expect(Buffer.from(await getBytes(solo.provider, key, { start: 0, end: bytes.length - 1 })).equals(bytes), `copy on d${d + 1}`).toBe(true);
      await solo.provider.close();
    }
  });

  it('repairs a copy deleted under the open writer through the writer, so later appends reach m + 1 copies', async () => {
    const rig = await killRig(4, 2);
    const key = 'log/000000000012-ee';
    const log = await rig.provider.openLog!(key, 64 * KiB);
    const first = await appendAll(log, 6);
    const [gone] = await holders(rig, key);
    // Deleted (an emptied domain) while the writer holds the file open: its appends still succeed.
    await rig.inner[gone!]!.delete((await copyName(rig.inner[gone!]!, key))!);
    const second = await appendAll(log, 3, 6, first.end);
    const found = await rig.provider.checkBlob(key);
    expect(found.fragments.filter((f) => f.state !== 'ok').length).toBe(1);
    const fixed = await rig.provider.checkBlob(key, { repair: true });
    expect(fixed.repaired).toBe(1);
    expect(fixed.fragments.map((f) => f.state)).toEqual(['ok', 'ok', 'ok']);
    const third = await appendAll(log, 3, 9, second.end);
    await log.close();
    const bytes = Buffer.concat([first.bytes, second.bytes, third.bytes]);
    const now = await holders(rig, key);
    expect(now.length).toBe(3);
    expect(now).not.toContain(gone);
    await rig.provider.close();
    for (const d of now) {
      const solo = await reopen(rig, [d]);
      expect(Buffer.from(await getBytes(solo.provider, key, { start: 0, end: third.end - 1 })).equals(bytes), `copy on d${d + 1}`).toBe(true);
      await solo.provider.close();
    }
  });

  it('takes a torn last append for never written, on one copy or on all, keeping every earlier one', async () => {
    const rig = await killRig(2, 1, 3);
    const key = 'log/000000000015-ff';
    const log = await rig.provider.openLog!(key, 64 * KiB);
    const three = await appendAll(log, 3);
    const last = chunkOf(3);
    await log.append(three.end, [last]);
    await log.close();
    const lastAt = [0, 1, 2].reduce((n, i) => n + recordBytes(chunkOf(i).length), 0);
    const tear = async (inner: Provider[], d: number) => {
      const name = (await copyName(inner[d]!, key))!;
      const raw = Buffer.from(await getBytes(inner[d]!, name));
      raw.fill(0, lastAt + recordBytes(last.length) - 300, lastAt + recordBytes(last.length)); // the write stopped short
      await inner[d]!.put(name, raw);
    };
    const [a, ...rest] = await holders(rig, key);
    await tear(rig.inner, a!);
    await rig.provider.close();
    let again = await reopen(rig);
    const full = Buffer.concat([three.bytes, last]);
    expect(Buffer.from(await getBytes(again.provider, key, { start: 0, end: full.length - 1 })).equals(full)).toBe(true);
    await again.provider.close();
    again = await reopen(rig);
    for (const d of rest) await tear(again.inner, d);
    const got = Buffer.from(await getBytes(again.provider, key, { start: 0, end: full.length - 1 }));
    expect(got.subarray(0, three.end).equals(three.bytes)).toBe(true);
    expect(got.subarray(three.end).every((b) => b === 0)).toBe(true);
    await again.provider.close();
  });

  it('reads a record from a copy whose scan stopped at an earlier damaged header when the others fail', async () => {
    const rig = await killRig(2, 1, 3);
    const key = 'log/000000000017-ab';
    const { bytes, end } = await writeSegment(rig.provider, key, 4);
    const [a, b] = await holders(rig, key);
    // Copy a: record 1's header damaged (its scan ends after record 0). Copy b: record 2's data.
    const nameA = (await copyName(rig.inner[a!]!, key))!;
    const rawA = Buffer.from(await getBytes(rig.inner[a!]!, nameA));
    rawA[recordBytes(chunkOf(0).length) + 5] ^= 0xff;
    await rig.inner[a!]!.put(nameA, rawA);
    await corrupt(rig.inner[b!]!, key, 2);
    await rig.provider.close();
    const again = await reopen(rig);
    expect(Buffer.from(await getBytes(again.provider, key, { start: 0, end: end - 1 })).equals(bytes)).toBe(true);
    const c = await again.provider.checkBlob(key, { repair: true });
    expect(c.lost).toBe(false);
    expect(c.repaired).toBe(2);
    expect((await again.provider.checkBlob(key)).fragments.map((f) => f.state)).toEqual(['ok', 'ok']);
    await again.provider.close();
  });

  /** A (2,1) log of 4 appends (one record each) whose record 1 is damaged on every copy,
   * reopened. */
  async function damagedEverywhere(key: string) {
    const rig = await killRig(2, 1, 3);
    const { bytes, end } = await writeSegment(rig.provider, key, 4);
    for (const d of await holders(rig, key)) await corrupt(rig.inner[d]!, key, 1);
    await rig.provider.close();
    return { again: await reopen(rig), bytes, end };
  }

  it('fails closed when a record verifies on no copy', async () => {
    const key = 'log/000000000013-ee';
    const { again, end } = await damagedEverywhere(key);
    await expect(getBytes(again.provider, key, { start: 0, end: end - 1 })).rejects.toMatchObject({ code: 'Io' });
    expect((await again.provider.checkBlob(key, { repair: true })).lost).toBe(true);
    await again.provider.close();
  });

  it('with endToEnd, reads a range inside one record as its copy holds it, unchecked; the checked read of it fails closed', async () => {
    const key = 'log/000000000014-ff';
    // Every copy damaged in record 1, differently from the bytes appended.
    const {
      again: { provider: p },
      bytes,
      end,
    } = await damagedEverywhere(key);
    const at = (n: number) => Array.from({ length: n }, (_, i) => chunkOf(i).length).reduce((a, b) => a + b, 0);
    const r1 = { start: at(1) + 10, end: at(2) - 11 }; // inside record 1 (one record per append)
    const got = Buffer.from(await getBytes(p, key, r1, END_TO_END));
    const want = bytes.subarray(r1.start, r1.end + 1);
    expect(got.length).toBe(want.length);
    // Exactly the damaged byte differs: the bytes as stored, CRCs dropped, none checked.
    expect([...got].filter((b, i) => b !== want[i]).length).toBe(1);
    await expect(getBytes(p, key, r1)).rejects.toMatchObject({ code: 'Io' });
    // Healthy records read exact either way; a range over two records is read checked.
    const r3 = { start: at(3) + 1, end: end - 1 };
    expect(Buffer.from(await getBytes(p, key, r3, END_TO_END)).equals(bytes.subarray(r3.start, end))).toBe(true);
    expect(Buffer.from(await getBytes(p, key, { start: at(3) - 5, end: at(3) + 5 }, END_TO_END)).equals(bytes.subarray(at(3) - 5, at(3) + 6))).toBe(true);
    await expect(getBytes(p, key, { start: at(2) - 5, end: at(2) + 5 }, END_TO_END)).rejects.toMatchObject({ code: 'Io' });
    await p.close();
  });
});

