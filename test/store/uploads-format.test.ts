/**
 * The uploads keyspace's byte-level contracts: key layout and order, upload ids, the records
 * and commit mutations it adds, the STR2 root, and the compaction filter. Every parser is fed
 * malformed, truncated, oversized and hostile input and must refuse it (StoreError 'Corrupt'
 * or undefined), never return something else.
 */
import { describe, expect, it } from 'vitest';
import { compareKeys } from '../../src/store/index/compare.js';
import {
  afterUpload,
  completionKey,
  escapeKey,
  escapePrefix,
  GONE,
  makeUploadId,
  parseEntryKey,
  parseQueueKey,
  parseUploadId,
  partKey,
  queueAfter,
  queueKey,
  uploadKey,
  type UploadRef,
} from '../../src/store/upload-keys.js';
import { completionVersion, decodeCompletion, encodeCompletion, encodeUpload, partListDigest } from '../../src/store/uploads.js';
import { decodeCommit, encodeCommit, type Mutation } from '../../src/store/commit.js';
import { decodeRoot, encodeRoot, type RootRecord } from '../../src/store/root.js';
import { uploadsKeep } from '../../src/store/runs.js';
import { StoreError } from '../../src/store/errors.js';
import type { ObjectVersion } from '../../src/store/records.js';
import { prng } from '../support/random.js';

const T0 = Date.UTC(2026, 5, 1);
const ref = (key: string, initiated = T0, uploadId = makeUploadId(initiated)): UploadRef => ({ key, initiated, uploadId });

/** Every prefix and a sample of single-byte flips of `bytes`: none may decode to something else. */
function* damaged(bytes: Uint8Array): Generator<Uint8Array> {
  for (let n = 0; n < bytes.length; n++) yield bytes.subarray(0, n);
  const next = prng(7);
  for (let i = 0; i < 64; i++) {
    const b = bytes.slice();
    b[next() % b.length] ^= 1 << next() % 8;
    yield b;
  }
  yield Uint8Array.from([...bytes, 0]);
}

describe('uploads keyspace keys', () => {
  it('escaped keys sort exactly as the keys do, NULs and non-BMP characters included', () => {
    const keys = ['a', 'a\0', 'a\0\0', 'a\0\x01', 'a\x01', 'a\0b', 'ab', 'b', '\0', '\x01', 'z\u{10000}', 'z\uffff', 'z\u00e9', 'a/b', 'a/', ''].filter(Boolean);
    const byKey = [...keys].sort(compareKeys);
    const byEscaped = [...keys].sort((x, y) => compareKeys(escapeKey(x), escapeKey(y)));
    expect(byEscaped).toEqual(byKey);
    // A key's uploads (and parts) come before every longer key it prefixes.
    for (const k of keys) {
      for (const longer of keys.filter((x) => x !== k && x.startsWith(k))) {
        const u = ref(k, T0 + 5);
        expect(compareKeys(partKey(u, 10000), uploadKey(ref(longer, T0)))).toBeLessThan(0);
      }
    }
  });

  it('escaped prefixes prefix exactly the escaped keys they should', () => {
    const keys = ['dir/a', 'dir\0x', 'dir', 'di', 'dir/\0', 'e'];
    for (const p of ['dir', 'dir/', 'dir\0', 'd', '']) {
      for (const k of keys) expect(`u${escapeKey(k)}`.startsWith(`u${escapePrefix(p)}`), `${JSON.stringify(p)} / ${JSON.stringify(k)}`).toBe(k.startsWith(p));
    }
  });

  it('orders a key’s uploads by initiation, each upload followed by its parts in number order', () => {
    const early = ref('k', T0);
    const late = ref('k', T0 + 1);
    const order = [uploadKey(early), partKey(early, 1), partKey(early, 2), partKey(early, 0x2710), afterUpload(early), uploadKey(late), partKey(late, 1)];
    expect([...order].sort(compareKeys)).toEqual(order);
    expect(compareKeys(completionKey(late), uploadKey(early))).toBeLessThan(0); // 'c' before 'u'
  });

  it('round-trips entry and queue keys, and refuses malformed ones', () => {
    const u = ref('we\0ird/key\u{1F600}');
    expect(parseEntryKey(uploadKey(u))).toEqual(u);
    expect(parseEntryKey(partKey(u, 9999))).toEqual({ ...u, part: 9999 });
    expect(parseEntryKey(completionKey(u))).toEqual(u);
    expect(parseQueueKey(queueKey('c', T0 + 99, u))).toEqual({ kind: 'c', time: T0 + 99, initiated: u.initiated, uploadId: u.uploadId });
    // Whatever parses is exactly what encoding its result gives back: a truncation either
    // fails or is another well-formed key (an old-style 32-digit id), never `u` itself.
    const good = uploadKey(u);
    for (let n = 0; n < good.length; n++) {
      const p = parseEntryKey(good.slice(0, n));
      if (p) expect(p.part === undefined ? uploadKey(p) : partKey(p, p.part)).toBe(good.slice(0, n));
      expect(p).not.toEqual(u);
    }
    for (const bad of [`u\0\0${'0'.repeat(56)}`, `u${escapeKey('k')}XYZ`, `u${escapeKey('k')}${'0'.repeat(12)}${'g'.repeat(32)}`, `u k\0\x02x\0\0${'0'.repeat(44)}`, `${good}\0zz`, `${good}\0${'1'.repeat(5)}`, `u${'k'.repeat(5000)}`]) {
      expect(parseEntryKey(bad), JSON.stringify(bad)).toBeUndefined();
    }
    const otherTime = queueKey('u', T0, u).replace(/u([0-9a-f]{12})/, `u${(T0 + 1).toString(16).padStart(12, '0')}`);
    for (const bad of ['t', 'tzz', `t${'0'.repeat(12)}x${'0'.repeat(44)}`, `${queueKey('u', T0, u)}0`, `t${'0'.repeat(11)}u${'0'.repeat(44)}`, otherTime]) {
      expect(parseQueueKey(bad), bad).toBeUndefined();
    }
    expect(compareKeys(queueKey('u', T0, u), queueAfter(T0))).toBeLessThan(0);
    expect(compareKeys(queueKey('u', T0 + 1, u), queueAfter(T0))).toBeGreaterThanOrEqual(0);
  });

  it('upload ids carry their initiation time; old ids are recognised; anything else names nothing', () => {
    const id = makeUploadId(T0);
    expect(id).toMatch(/^[0-9a-f]{44}$/);
    expect(parseUploadId(id)).toEqual({ initiated: T0 });
    expect(new Set(Array.from({ length: 1000 }, () => makeUploadId(T0))).size).toBe(1000);
    expect(parseUploadId('132fc33c2c92055dacb36be48881a856')).toBe('legacy');
    for (const bad of ['', 'x', id.toUpperCase(), `${id}0`, id.slice(1), '../../etc', `${id.slice(0, 43)}\0`, 'z'.repeat(44), '1'.repeat(100_000)]) {
      expect(parseUploadId(bad), bad.slice(0, 50)).toBeUndefined();
    }
  });
});

describe('completion records', () => {
  const version: ObjectVersion = {
    versionId: 'v1',
    deleteMarker: false,
    size: 12,
    md5: new Uint8Array(16).fill(7),
    partCount: 2,
    lastModified: T0,
    contentType: 'text/plain',
    system: { 'cache-control': 'no-store' },
    userMetadata: { big: 'x'.repeat(2000) },
    tags: { a: 'b' },
    checksums: { type: 'COMPOSITE', primary: 'crc32', values: { crc32: Uint8Array.of(1, 2, 3, 4) }, parts: 2 },
    location: { kind: 'chunks', chunks: [{ blob: 'chunks/x', size: 12, segment: 262144, tag: 5 }] },
    parts: [{ number: 1, size: 6, md5: new Uint8Array(16), checksums: {} }],
  };

  it('keep what a Complete answers with, without body location, parts or metadata', () => {
    const c = { partsDigest: partListDigest([{ partNumber: 1, etag: 'aa' }]), completed: T0 + 5, version: completionVersion(version) };
    const bytes = encodeCompletion(c);
    expect(bytes.length).toBeLessThan(120);
    const back = decodeCompletion(bytes);
    expect(back.completed).toBe(T0 + 5);
    expect(Buffer.from(back.partsDigest)).toEqual(Buffer.from(c.partsDigest));
    expect(back.version).toMatchObject({ versionId: 'v1', size: 12, partCount: 2, contentType: 'text/plain', location: { kind: 'empty' } });
    expect(back.version.parts).toBeUndefined();
    expect(back.version.checksums?.values.crc32).toEqual(Uint8Array.of(1, 2, 3, 4));
  });

  it('part list digests differ when any number or ETag differs, and depend on order', () => {
    const a = [{ partNumber: 1, etag: 'aa' }, { partNumber: 2, etag: 'bb' }];
    const d = (l: { partNumber: number; etag: string }[]) => Buffer.from(partListDigest(l)).toString('hex');
    expect(d(a)).toBe(d([...a]));
    expect(d([a[0]!])).not.toBe(d(a));
    expect(d([{ partNumber: 1, etag: 'aa' }, { partNumber: 3, etag: 'bb' }])).not.toBe(d(a));
    expect(d([{ partNumber: 1, etag: 'aa' }, { partNumber: 2, etag: 'bc' }])).not.toBe(d(a));
    expect(d([{ partNumber: 12, etag: 'a' }])).not.toBe(d([{ partNumber: 1, etag: '2a' }]));
  });

  it('refuse truncated, flipped and padded bytes', () => {
    const good = encodeCompletion({ partsDigest: new Uint8Array(16), completed: 1, version: completionVersion(version) });
    for (const b of damaged(good)) {
      try {
        const c = decodeCompletion(b);
        // A flip inside a digest or a string decodes; it must still decode to a whole record.
        expect(c.version.location).toEqual({ kind: 'empty' });
      } catch (err) {
        expect(err).toBeInstanceOf(StoreError);
        expect((err as StoreError).code).toBe('Corrupt');
      }
    }
    expect(() => decodeCompletion(Uint8Array.of(2))).toThrow(/unknown format/);
    expect(() => decodeCompletion(new Uint8Array(0))).toThrow(StoreError);
  });
});

describe('commit mutations of the uploads keyspace', () => {
  const u = ref('dir/\0k\u{1F600}');
  const mutations: Mutation[] = [
    { op: 'beginUpload', bucket: 'b1', ...u, record: encodeUpload({ key: u.key, initiated: u.initiated, system: {}, userMetadata: {}, tags: {}, checksumType: 'FULL_OBJECT' }) },
    { op: 'setPart', bucket: 'b1', ...u, number: 10000, record: Uint8Array.of(1, 2, 3) },
    { op: 'closeUpload', bucket: 'b1', ...u },
    { op: 'closeUpload', bucket: 'b2', ...u, completion: { time: T0 + 9, record: Uint8Array.of(9) } },
    { op: 'dropCompletion', bucket: 'b2', ...u, completed: T0 + 9 },
  ];
  const parent = { key: 'commits/x', offset: 1, length: 2, hash: '00'.repeat(32) };

  it('round-trip through a commit record', () => {
    const back = decodeCommit(encodeCommit({ seq: 3, parent, time: T0, mutations }));
    expect(back.mutations).toEqual(mutations);
  });

  it('refuse every truncation and any flip that breaks them', () => {
    const good = encodeCommit({ seq: 3, parent, time: T0, mutations });
    for (const b of damaged(good)) {
      try {
        const c = decodeCommit(b);
        expect(c.mutations).toHaveLength(mutations.length); // a flip in a payload byte still parses whole
      } catch (err) {
        expect((err as StoreError).code).toBe('Corrupt');
      }
    }
  });
});

describe('roots', () => {
  const root: RootRecord = {
    seq: 9,
    time: T0,
    repositoryId: 'r',
    buckets: [{ name: 'b', id: 'i', created: 1, configs: [], runs: [Uint8Array.of(1)], uploadRuns: [Uint8Array.of(2), Uint8Array.of(3)], uploadCount: 12345 }],
    uploads: [],
  };

  it('name each bucket’s uploads runs and count (STR2), and never list uploads themselves', () => {
    const back = decodeRoot(encodeRoot(root));
    expect(back.buckets[0]).toEqual(root.buckets[0]);
    expect(back.uploads).toEqual([]);
    expect(() => encodeRoot({ ...root, uploads: [{ bucket: 'b', uploadId: 'x', record: Uint8Array.of(1), parts: [] }] })).toThrow(RangeError);
  });

  it('refuse damage (STR2), and an unknown magic', () => {
    const good = encodeRoot(root);
    for (const b of damaged(good)) {
      try {
        decodeRoot(b);
      } catch (err) {
        expect((err as StoreError).code).toBe('Corrupt');
      }
    }
    const other = good.slice();
    other[3] = 0x33; // "STR3"
    expect(() => decodeRoot(other)).toThrow(/not a root record/);
    // A bucket claiming more upload runs than bytes remain.
    const hostile = Buffer.from(good);
    const at = hostile.lastIndexOf(2) - 2; // the upload-runs count sits before the first run's length
    hostile[at] = 0x7f;
    expect(() => decodeRoot(hostile)).toThrow(StoreError);
  });
});

describe('compaction of an uploads keyspace', () => {
  it('drops deletions and the parts of every upload that is not live, keeping everything else', () => {
    const live = ref('a');
    const ended = ref('b');
    const value = Uint8Array.of(1);
    const entries: [string, Uint8Array][] = [
      [completionKey(ended), value],
      [queueKey('u', T0, live), value],
      [queueKey('u', T0, ended), GONE],
      [uploadKey(live), value],
      [partKey(live, 1), value],
      [partKey(live, 2), GONE],
      [uploadKey(ended), GONE],
      [partKey(ended, 1), value],
      [partKey(ended, 2), value],
      [partKey(ref('c'), 1), value], // orphan: its record is not there at all
    ];
    entries.sort((x, y) => compareKeys(x[0], y[0]));
    const keep = uploadsKeep();
    const kept = entries.filter(([k, v]) => keep(k, v)).map(([k]) => k);
    expect(kept).toEqual([completionKey(ended), queueKey('u', T0, live), uploadKey(live), partKey(live, 1)].sort(compareKeys));
  });
});

