/**
 * The provider contract, as one suite run against every provider (memory, fs, s3).
 *
 * `backend.create()` returns a fresh, empty provider (or an empty namespace of a
 * shared store). Conditional-write tests skip — visibly, with the reason — when the
 * provider *reports* `capabilities.conditionalWrites: false`. Limitations of a test
 * server (not of the provider) are declared in `quirks` and adapt or skip the
 * affected checks, again with the reason shown.
 */
import { Readable } from 'node:stream';
import { describe, expect, it, type TestContext } from 'vitest';
import { MAX_KEY_BYTES, ProviderError, type Provider } from '../../src/provider/provider.js';
import {
  asyncChunks,
  byteSorted,
  bytes,
  chunked,
  expectCode,
  exposeGc,
  listAll,
  prng,
  readableOf,
  readAll,
} from './helpers.js';

export interface BackendQuirks {
  /**
   * The server stores each key at the file path it spells (s3rver): keys with empty,
   * `.` or `..` segments, or segments longer than its file-name limit, cannot work,
   * and its listing walks directories, so list tests use keys whose first difference
   * comes before any `/`.
   */
  pathMappedKeys?: string;
  /** The server writes a PUT body in place (s3rver): an aborted PUT may leave a partial object. */
  nonAtomicPut?: string;
  /** The server refuses object keys with C0 control characters (Ceph RGW: 400 InvalidObjectName). */
  noControlKeys?: string;
}

export interface ContractBackend {
  name: string;
  create(): Promise<Provider>;
  quirks?: BackendQuirks;
  /** The provider buffers whole put bodies by design (memory): skip the memory bound. */
  buffersPuts?: boolean;
  /** Etags are per write, not derived from content (fs, memory): same bytes, new etag. */
  etagPerWrite?: boolean;
  /**
   * Longest key the backend stores, when less than MAX_KEY_BYTES: an s3 provider with a key
   * prefix on a server enforcing S3's 1024-byte limit loses the prefix's bytes.
   */
  maxKeyBytes?: number;
  /**
   * Bytes the provider holds in memory by design for a stream of unknown length (s3: one
   * multipart part); added to the memory bound of the unsized-stream test.
   */
  unsizedBufferBytes?: number;
  /**
   * Bytes a provider that fans one put or get out to several child calls holds in them by
   * design (erasure: k + m fragment puts at once, each with its queue and in-flight writes;
   * k fragment reads per stripe, stripes read ahead); added to the streaming memory bounds.
   */
  fanOutBufferBytes?: number;
}

const MiB = 1024 * 1024;
const STREAM_BYTES = 20 * MiB;
/** Over the 16 MiB an s3 provider could once buffer for an unsized body: needs two parts. */
const UNSIZED_BYTES = 19 * MiB + 17;
/** Peak growth of live ArrayBuffer memory allowed while streaming STREAM_BYTES. */
const STREAM_MEMORY_BOUND = 8 * MiB;

const TRICKY_PIECES = [
  'a',
  'Z',
  '9',
  ' ',
  '%',
  '%2F',
  '+',
  '~',
  '!',
  '*',
  "'",
  '(',
  ')',
  '&',
  '=',
  '?',
  '#',
  ':',
  ';',
  ',',
  '@',
  '$',
  '[',
  ']',
  '<',
  '>',
  '"',
  '\\',
  '^',
  '`',
  '|',
  '\u0001',
  '\u007f',
  'é',
  '中',
  '\ue000',
  '\uffff',
  '😀',
  '𝄞',
  '/',
];

function trickyText(rand: () => number, maxPieces: number): string {
  let s = '';
  const n = 1 + Math.floor(rand() * maxPieces);
  for (let i = 0; i < n; i++) s += TRICKY_PIECES[Math.floor(rand() * TRICKY_PIECES.length)];
  return s;
}

/** True if a test server that maps keys to paths can store `key` (see BackendQuirks). */
function pathSafe(key: string): boolean {
  return key
    .split('/')
    .every(
      (seg, i, all) =>
        (seg !== '' || i === all.length - 1) &&
        seg !== '.' &&
        seg !== '..' &&
        Buffer.byteLength(seg) <= 200
    );
}

/** A key of exactly `size` UTF-8 bytes made of `unit` (topped up with 'z'), with a '/' every `segment` bytes. */
function keyOfExactly(size: number, unit: string, segment: number): string {
  let key = '';
  let run = 0;
  for (let left = size; left > 0; left = size - Buffer.byteLength(key)) {
    const u = Buffer.byteLength(unit);
    if (run + u > segment && left >= 2) {
      key += '/';
      run = 0;
    } else if (left >= u) {
      key += unit;
      run += u;
    } else {
      key += 'z';
      run += 1;
    }
  }
  return key;
}

/** Skips the whole test, with the quirk as the reason, when the backend has it. */
function skipFor(ctx: TestContext, reason: string | undefined): void {
  if (reason !== undefined) ctx.skip(`test server quirk: ${reason}`);
}

/**
 * For a test whose first checks ran: true (and the reason recorded as an
 * annotation) when the backend's quirk rules out the remaining checks.
 */
async function stopFor(ctx: TestContext, reason: string | undefined): Promise<boolean> {
  if (reason === undefined) return false;
  await ctx.annotate(`remaining checks not applicable: test server quirk: ${reason}`);
  return true;
}

async function expectAbsent(provider: Provider, key: string): Promise<void> {
  await expectCode(provider.head(key), 'NotFound');
  await expectCode(provider.get(key), 'NotFound');
}

export function runProviderContract(backend: ContractBackend): void {
  const quirks = backend.quirks ?? {};

  async function conditional(ctx: TestContext): Promise<Provider> {
    const p = await backend.create();
    if (!p.capabilities.conditionalWrites) {
      await p.close();
      ctx.skip(`${backend.name} reports capabilities.conditionalWrites = false`);
    }
    return p;
  }

  describe(`provider contract: ${backend.name}`, () => {
    describe('put / get / head', () => {
      for (const size of [0, 1, 4096, MiB + 17]) {
        it(`round-trips ${size} bytes given as bytes, chunk list, Readable and AsyncIterable`, async () => {
          const p = await backend.create();
          const data = bytes(size);
          const forms = {
            bytes: () => data,
            list: () => chunked(data, 70_000, size),
            readable: () => readableOf(chunked(data, 70_000, size + 1)),
            iterable: () => asyncChunks(chunked(data, 70_000, size + 2)),
          };
          for (const [form, make] of Object.entries(forms)) {
            const key = `rt/${size}/${form}`;
            const info = await p.put(key, make(), { contentLength: size });
            expect(info).toMatchObject({ key, size });
            expect(info.etag).toBeTruthy();
            expect((await readAll(p, key)).equals(data), form).toBe(true);
            const head = await p.head(key);
            expect(head).toMatchObject({ key, size, etag: info.etag });
            const got = await p.get(key);
            expect(got).toMatchObject({ start: 0, length: size });
            expect(got.info.etag).toBe(info.etag);
            got.body.destroy();
          }
          await p.close();
        });
      }

      it('accepts a stream without contentLength', async () => {
        const p = await backend.create();
        const data = bytes(100_000, 5);
        await p.put('nolen', readableOf(chunked(data, 9000)));
        expect((await readAll(p, 'nolen')).equals(data)).toBe(true);
        await p.close();
      });

      it(`stores a ${(UNSIZED_BYTES / MiB).toFixed(1)} MiB stream without contentLength, in bounded memory`, async () => {
        const p = await backend.create();
        const gc = exposeGc();
        const CHUNK = 200 * 1024 + 3; // odd-sized, so parts are cut inside chunks
        let produced = 0;
        let peak = 0;
        gc();
        const base = process.memoryUsage().arrayBuffers;
        const byteAt = (i: number): number => (i * 31 + (i >>> 13)) & 0xff;
        async function* source(): AsyncGenerator<Uint8Array> {
          while (produced < UNSIZED_BYTES) {
            const n = Math.min(CHUNK, UNSIZED_BYTES - produced);
            const chunk = Buffer.allocUnsafe(n);
            for (let i = 0; i < n; i++) chunk[i] = byteAt(produced + i);
            produced += n;
            if (Math.floor(produced / MiB) !== Math.floor((produced - n) / MiB)) {
              gc();
              peak = Math.max(peak, process.memoryUsage().arrayBuffers - base);
            }
            yield chunk;
          }
        }
        const info = await p.put('unsized', source());
        expect(info.size).toBe(UNSIZED_BYTES);
        if (!backend.buffersPuts)
          expect(peak, 'put memory growth').toBeLessThan(
            STREAM_MEMORY_BOUND + (backend.unsizedBufferBytes ?? 0) + (backend.fanOutBufferBytes ?? 0)
          );
        expect((await p.head('unsized')).size).toBe(UNSIZED_BYTES);
        expect((await p.head('unsized')).etag).toBe(info.etag);
        const back = await readAll(p, 'unsized');
        expect(back.length).toBe(UNSIZED_BYTES);
        for (let i = 0; i < back.length; i++) {
          if (back[i] !== byteAt(i)) throw new Error(`wrong byte at ${i}`);
        }
        const range = await p.get('unsized', { range: { start: 16 * MiB - 5, end: 16 * MiB + 4 } });
        const part: Buffer[] = [];
        for await (const c of range.body as AsyncIterable<Buffer>) part.push(c);
        expect([...Buffer.concat(part)]).toEqual(
          Array.from({ length: 10 }, (_, i) => byteAt(16 * MiB - 5 + i))
        );
        await p.close();
      });

      it('replaces a blob, and the etag changes', async () => {
        const p = await backend.create();
        const a = await p.put('re', Buffer.from('first'));
        const b = await p.put('re', Buffer.from('second!'));
        expect(b.etag).not.toBe(a.etag);
        expect((await readAll(p, 're')).toString()).toBe('second!');
        expect((await p.head('re')).size).toBe(7);
        await p.close();
      });

      it('gives identical bytes a new etag on every write when etags are per write', async (ctx) => {
        if (!backend.etagPerWrite) ctx.skip(`${backend.name} etags are content-derived (S3 MD5)`);
        const p = await backend.create();
        const seen = new Set<string>();
        for (let i = 0; i < 20; i++) seen.add((await p.put('same', Buffer.from('x'))).etag);
        expect(seen.size).toBe(20);
        await p.close();
      });

      it(`streams ${STREAM_BYTES / MiB} MiB in and out with bounded memory`, async () => {
        const p = await backend.create();
        const gc = exposeGc();
        const CHUNK = 256 * 1024;
        let produced = 0;
        let peak = 0;
        gc();
        const base = process.memoryUsage().arrayBuffers;
        const sample = (): void => {
          gc();
          peak = Math.max(peak, process.memoryUsage().arrayBuffers - base);
        };
        const source = new Readable({
          highWaterMark: CHUNK,
          read() {
            if (produced >= STREAM_BYTES) return void this.push(null);
            const chunk = Buffer.alloc(CHUNK, (produced / CHUNK) & 0xff);
            produced += CHUNK;
            if (produced % (2 * MiB) === 0) sample();
            this.push(chunk);
          },
        });
        const info = await p.put('big', source, { contentLength: STREAM_BYTES });
        expect(info.size).toBe(STREAM_BYTES);
        if (!backend.buffersPuts)
          expect(peak, 'put memory growth').toBeLessThan(STREAM_MEMORY_BOUND + (backend.fanOutBufferBytes ?? 0));

        peak = 0;
        const got = await p.get('big');
        let read = 0;
        for await (const chunk of got.body as AsyncIterable<Buffer>) {
          for (let i = 0; i < chunk.length; i += 4093) {
            if (chunk[i] !== (((read + i) / CHUNK) & 0xff))
              throw new Error(`wrong byte at ${read + i}`);
          }
          read += chunk.length;
          if (read % (2 * MiB) < chunk.length) sample();
        }
        expect(read).toBe(STREAM_BYTES);
        if (!backend.buffersPuts)
          expect(peak, 'get memory growth').toBeLessThan(STREAM_MEMORY_BOUND + (backend.fanOutBufferBytes ?? 0));
        await p.close();
      });
    });

    describe('ranges', () => {
      it('serves first-last, open-ended, clamped and single-byte ranges', async () => {
        const p = await backend.create();
        const data = bytes(1000, 3);
        await p.put('r', data);
        const cases: [number, number | undefined, number, number][] = [
          [0, 9, 0, 10],
          [1, 1, 1, 1],
          [10, undefined, 10, 990],
          [990, 5000, 990, 10],
          [999, 999, 999, 1],
          [0, 999, 0, 1000],
          [500, 1500, 500, 500],
        ];
        for (const [start, end, wantStart, wantLength] of cases) {
          const res = await p.get('r', { range: { start, end } });
          expect({ start: res.start, length: res.length }, `${start}-${end}`).toEqual({
            start: wantStart,
            length: wantLength,
          });
          const chunks: Buffer[] = [];
          for await (const c of res.body as AsyncIterable<Buffer>) chunks.push(c);
          expect(
            Buffer.concat(chunks).equals(data.subarray(wantStart, wantStart + wantLength)),
            `${start}-${end}`
          ).toBe(true);
          expect(res.info.size).toBe(1000);
        }
        await p.close();
      });

      it('serves the one-byte range 0-0', async () => {
        const p = await backend.create();
        await p.put('r0', Buffer.from('hello'));
        const res = await p.get('r0', { range: { start: 0, end: 0 } });
        expect(res.length).toBe(1);
        const chunks: Buffer[] = [];
        for await (const c of res.body as AsyncIterable<Buffer>) chunks.push(c);
        expect(Buffer.concat(chunks).toString()).toBe('h');
        await p.close();
      });

      it('refuses a start at or past the end with InvalidRange', async () => {
        const p = await backend.create();
        await p.put('r', bytes(100));
        await expectCode(p.get('r', { range: { start: 100 } }), 'InvalidRange');
        await expectCode(p.get('r', { range: { start: 5000, end: 6000 } }), 'InvalidRange');
        await p.close();
      });

      it('returns nothing, not an error, for a range of an empty blob', async () => {
        const p = await backend.create();
        await p.put('empty', new Uint8Array(0));
        const res = await p.get('empty', { range: { start: 0, end: 10 } });
        expect(res.length).toBe(0);
        expect(res.info.size).toBe(0);
        for await (const _ of res.body) throw new Error('expected no bytes');
        await p.close();
      });
    });

    describe('list', () => {
      it('pages through hundreds of tricky keys in byte order, with prefix and startAfter', async () => {
        const p = await backend.create();
        const rand = prng(42);
        const keys = new Set<string>();
        for (let i = 0; keys.size < 300; i++) {
          // A unique fixed-width number first: keys differ before any '/' (see BackendQuirks).
          const key = `l/${String(i).padStart(4, '0')}${trickyText(rand, 6)}`;
          if (!quirks.pathMappedKeys || pathSafe(key)) keys.add(key);
        }
        const all = [...keys];
        const concurrency = 8;
        for (let i = 0; i < all.length; i += concurrency) {
          await Promise.all(all.slice(i, i + concurrency).map((k) => p.put(k, Buffer.from(k))));
        }
        await p.put('m/outside', Buffer.from('x'));
        const sorted = byteSorted(all);

        expect(await listAll(p, 'l/', 37)).toEqual(sorted);
        expect(await listAll(p, 'l/', 1000)).toEqual(sorted);
        expect(await listAll(p, 'l/00', 25)).toEqual(sorted.filter((k) => k.startsWith('l/00')));
        expect(await listAll(p, 'l/zzz', 10)).toEqual([]);

        const middle = sorted[150];
        const after = await p.list({ prefix: 'l/', startAfter: middle, limit: 5 });
        expect(after.items.map((i) => i.key)).toEqual(sorted.slice(151, 156));
        const afterMissing = await p.list({
          prefix: 'l/',
          startAfter: middle + '\u0000',
          limit: 3,
        });
        expect(afterMissing.items.map((i) => i.key)).toEqual(sorted.slice(151, 154));

        const last = await p.list({ prefix: 'l/', startAfter: sorted[sorted.length - 2] });
        expect(last.items.map((i) => i.key)).toEqual([sorted[sorted.length - 1]]);
        expect(last.next).toBeUndefined();

        const page = await p.list({ prefix: 'l/', limit: 3 });
        for (const item of page.items) {
          expect(item.size).toBe(Buffer.byteLength(item.key));
          expect(item.etag).toBe((await p.head(item.key)).etag);
          expect(item.lastModified).toBeInstanceOf(Date);
        }

        // Without etags: the same keys, pages, sizes and times; an etag is '' or the real one.
        expect(await listAll(p, 'l/', 37, false)).toEqual(sorted);
        expect(await listAll(p, 'l/00', 7, false)).toEqual(sorted.filter((k) => k.startsWith('l/00')));
        const full = await p.list({ prefix: 'l/', startAfter: sorted[10], limit: 100 });
        const lean = await p.list({ prefix: 'l/', startAfter: sorted[10], limit: 100, etags: false });
        expect(lean.next).toBe(full.next);
        expect(lean.items.map((i) => [i.key, i.size, i.lastModified.getTime()])).toEqual(
          full.items.map((i) => [i.key, i.size, i.lastModified.getTime()])
        );
        lean.items.forEach((item, j) => expect(['', full.items[j]!.etag]).toContain(item.etag));
        await p.close();
      });

      it('orders by UTF-8 bytes, not UTF-16 units, and keeps prefix relations', async (ctx) => {
        skipFor(ctx, quirks.pathMappedKeys);
        const p = await backend.create();
        // '\uffff' < '😀' in UTF-8, but not in UTF-16; 'a' < 'a-b' < 'a/b' < 'a0'.
        const keys = [
          'o/😀',
          'o/\uffff',
          'o/\ue000',
          'o/a',
          'o/a-b',
          'o/a/b',
          'o/a0',
          'o/a/',
          'o/a//b',
          'o/ab',
          'o/\u0001',
        ];
        for (const k of keys) await p.put(k, Buffer.from(k));
        expect(await listAll(p, 'o/', 2)).toEqual(byteSorted(keys));
        expect(await listAll(p, 'o/a', 100)).toEqual(
          byteSorted(keys.filter((k) => k.startsWith('o/a')))
        );
        await p.close();
      });
    });

    describe('delete', () => {
      it('is idempotent and makes the blob absent everywhere', async () => {
        const p = await backend.create();
        await p.delete('never-existed');
        await p.put('d/x', Buffer.from('x'));
        await p.delete('d/x');
        await expectAbsent(p, 'd/x');
        expect((await p.list({ prefix: 'd/' })).items).toEqual([]);
        await p.delete('d/x');
        await p.close();
      });
    });

    describe('keys', () => {
      it('round-trips awkward keys exactly and lists them back', async (ctx) => {
        skipFor(ctx, quirks.pathMappedKeys);
        const p = await backend.create();
        const keys = [
          '..',
          '.',
          'k/..',
          'k/../x',
          'k//x',
          '/lead',
          'trail/',
          'k/%2F',
          'k/a+b',
          'k/a b',
          'k/\u0001',
          'k/😀',
          'k/\u0000',
          'k/?q=1#f',
          'k\\w',
          '%',
          '+',
        ].filter((k) => !quirks.noControlKeys || !/[\u0000-\u001f]/.test(k));
        if (quirks.noControlKeys) await ctx.annotate(`control-character keys left out: ${quirks.noControlKeys}`);
        for (const k of keys) await p.put(k, Buffer.from(`v:${k}`));
        for (const k of keys) expect((await readAll(p, k)).toString()).toBe(`v:${k}`);
        const listed: string[] = [];
        for (let next: string | undefined, first = true; first || next; first = false) {
          const page = await p.list({ startAfter: next, limit: 4 });
          listed.push(...page.items.map((i) => i.key));
          next = page.next;
        }
        expect(listed).toEqual(byteSorted(keys));
        await p.close();
      });

      const maxKey = backend.maxKeyBytes ?? MAX_KEY_BYTES;
      it(`accepts keys of exactly ${maxKey} UTF-8 bytes and refuses longer ones`, async () => {
        const p = await backend.create();
        const segment = quirks.pathMappedKeys ? 150 : Infinity;
        const longKeys = [
          keyOfExactly(maxKey, 'x', segment),
          keyOfExactly(maxKey, 'é', segment),
          keyOfExactly(maxKey, '😀', segment),
        ];
        for (const k of longKeys) {
          expect(Buffer.byteLength(k)).toBe(maxKey);
          await p.put(k, Buffer.from('long'));
          expect((await readAll(p, k)).toString()).toBe('long');
        }
        const listed = (await p.list({ limit: 10 })).items.map((i) => i.key);
        expect(listed).toEqual(byteSorted(longKeys));
        const tooLong = [
          'x'.repeat(MAX_KEY_BYTES + 1),
          'é'.repeat(MAX_KEY_BYTES / 2) + 'x',
          '😀'.repeat(MAX_KEY_BYTES / 4 + 1),
        ];
        for (const k of tooLong) {
          await expectCode(p.put(k, Buffer.from('x')), 'InvalidKey');
          await expectCode(p.get(k), 'InvalidKey');
          await expectCode(p.head(k), 'InvalidKey');
          await expectCode(p.delete(k), 'InvalidKey');
        }
        await expectCode(p.put('', Buffer.from('x')), 'InvalidKey');
        await expectCode(p.put('lone\ud800', Buffer.from('x')), 'InvalidKey');
        await p.close();
      });
    });

    describe('failed puts leave nothing behind', () => {
      for (const [name, sent, declared] of [
        ['short', 1000, 1001],
        ['long', 1001, 1000],
      ] as const) {
        it(`a ${name} streamed body fails with LengthMismatch`, async (ctx) => {
          const p = await backend.create();
          await p.put('old', Buffer.from('previous'));
          const data = bytes(sent);
          await expectCode(
            p.put('lm', readableOf(chunked(data, 300)), { contentLength: declared }),
            'LengthMismatch'
          );
          await expectCode(
            p.put('old', asyncChunks(chunked(data, 300)), { contentLength: declared }),
            'LengthMismatch'
          );
          await expectCode(p.put('lm2', data, { contentLength: declared }), 'LengthMismatch');
          if (await stopFor(ctx, quirks.nonAtomicPut)) return;
          expect((await readAll(p, 'old')).toString()).toBe('previous');
          await expectAbsent(p, 'lm');
          await expectAbsent(p, 'lm2');
          await p.close();
        });
      }

      it('an abort signal mid-put rejects with Aborted', async (ctx) => {
        const p = await backend.create();
        await p.put('old', Buffer.from('previous'));
        for (const key of ['ab', 'old']) {
          const controller = new AbortController();
          let sent = 0;
          const source = new Readable({
            read() {
              if (sent === 0) {
                sent++;
                this.push(bytes(64 * 1024));
                setTimeout(() => controller.abort(new Error('stop')), 50);
              } // then stall: the abort must end the put
            },
          });
          await expectCode(
            p.put(key, source, { contentLength: 1024 * 1024, signal: controller.signal }),
            'Aborted'
          );
        }
        if (await stopFor(ctx, quirks.nonAtomicPut)) return;
        expect((await readAll(p, 'old')).toString()).toBe('previous');
        await expectAbsent(p, 'ab');
        await p.close();
      });

      it('a failing body stream rejects with Io', async (ctx) => {
        const p = await backend.create();
        const source = new Readable({
          read() {
            this.destroy(new Error('disk on fire'));
          },
        });
        const err = await p.put('broken', source, { contentLength: 10 }).then(
          () => undefined,
          (e: unknown) => e
        );
        expect(err).toBeInstanceOf(ProviderError);
        expect(['Io', 'Unavailable']).toContain((err as ProviderError).code);
        if (await stopFor(ctx, quirks.nonAtomicPut)) return;
        await expectAbsent(p, 'broken');
        await p.close();
      });
    });

    describe('conditional puts', () => {
      it("ifNoneMatch: '*' creates once, then fails without touching the blob", async (ctx) => {
        const p = await conditional(ctx);
        const first = await p.put('c', Buffer.from('one'), { ifNoneMatch: '*' });
        await expectCode(
          p.put('c', Buffer.from('two'), { ifNoneMatch: '*' }),
          'PreconditionFailed'
        );
        await expectCode(
          p.put('c', readableOf([Buffer.from('three')]), { ifNoneMatch: '*', contentLength: 5 }),
          'PreconditionFailed'
        );
        expect((await readAll(p, 'c')).toString()).toBe('one');
        expect((await p.head('c')).etag).toBe(first.etag);
        await p.close();
      });

      it('lets exactly one of 8 concurrent create-if-absent puts win', async (ctx) => {
        const p = await conditional(ctx);
        for (let round = 0; round < 3; round++) {
          const key = `race/${round}`;
          const results = await Promise.allSettled(
            Array.from({ length: 8 }, (_, i) =>
              p.put(key, Buffer.from(`writer ${i}`), { ifNoneMatch: '*' })
            )
          );
          const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
          expect(winners).toHaveLength(1);
          for (const r of results) {
            if (r.status === 'rejected')
              expect((r.reason as ProviderError).code).toBe('PreconditionFailed');
          }
          expect((await readAll(p, key)).toString()).toBe(`writer ${winners[0]}`);
        }
        await p.close();
      });

      it('chains compare-and-swap with ifMatch; stale and absent etags fail', async (ctx) => {
        const p = await conditional(ctx);
        await expectCode(
          p.put('cas', Buffer.from('x'), { ifMatch: 'no-such-etag' }),
          'PreconditionFailed'
        );
        let info = await p.put('cas', Buffer.from('v0'), { ifNoneMatch: '*' });
        const etags = [info.etag];
        for (let i = 1; i <= 10; i++) {
          info = await p.put('cas', Buffer.from(`v${i}`), { ifMatch: info.etag });
          expect(etags).not.toContain(info.etag);
          etags.push(info.etag);
        }
        await expectCode(
          p.put('cas', Buffer.from('stale'), { ifMatch: etags[3] }),
          'PreconditionFailed'
        );
        expect((await readAll(p, 'cas')).toString()).toBe('v10');

        const racers = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) =>
            p.put('cas', Buffer.from(`racer ${i}`), { ifMatch: info.etag })
          )
        );
        expect(racers.filter((r) => r.status === 'fulfilled')).toHaveLength(1);

        await p.delete('cas');
        await expectCode(
          p.put('cas', Buffer.from('v10'), { ifMatch: info.etag }),
          'PreconditionFailed'
        );
        await p.close();
      });
    });
  });
}
