/**
 * PutObject for bodies of unknown length (chunked transfer, POST Object files).
 *
 * Proves: sizes on each side of every boundary (empty, PACK_MAX_BODY, one piece, pieces
 * plus a tail) read back byte for byte with the MD5 ETag, whatever the fragmentation of
 * the stream (1-byte pieces included); bodies up to PACK_MAX_BODY are packed, larger ones
 * carried in pieces; maxBytes is enforced while streaming (EntityTooLarge, nothing
 * stored, no chunk blob left behind) and minBytes at the end (EntityTooSmall); a body that
 * fails mid-stream leaves nothing; preconditions and claims apply as for a sized put; the
 * pending budget holds at most one piece plus the head per upload and is released after;
 * encrypted (SSE-S3, SSE-C) unsized bodies, packed or in pieces (one stream each), read back
 * exactly with the key, over every range across piece boundaries, never without it, and no
 * stored blob holds the plaintext.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { PACK_MAX_BODY } from '../../src/store/layout.js';
import { UNSIZED_PIECE_BYTES } from '../../src/store/objects-unsized.js';
import { Store } from '../../src/store/store.js';
import { isStoreError } from '../../src/store/errors.js';
import { randomBytes } from '../support/random.js';
import { collect, stream } from './helpers.js';
import { getBytes } from '../../src/provider/provider.js';

const B = 'unsized';

async function openStore(pendingBytes?: number) {
  const provider = await createMemoryProvider({});
  const store = await Store.open(provider, pendingBytes ? { pendingBytes } : {});
  await store.createBucket(B);
  return { store, provider };
}

async function chunkBlobs(store: Store): Promise<number> {
  let n = 0;
  let startAfter: string | undefined;
  do {
    const page = await store.repo.provider.list({ prefix: 'chunks/', ...(startAfter ? { startAfter } : {}) });
    n += page.items.length;
    startAfter = page.next;
  } while (startAfter);
  return n;
}

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

async function expectStoreError(p: Promise<unknown>, code: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e
  );
  expect(isStoreError(err), String(err)).toBe(true);
  expect((err as { code: string }).code).toBe(code);
}

describe('unsized PutObject', () => {
  const sizes = [0, 1, PACK_MAX_BODY - 1, PACK_MAX_BODY, PACK_MAX_BODY + 1, PACK_MAX_BODY + UNSIZED_PIECE_BYTES, PACK_MAX_BODY + 2 * UNSIZED_PIECE_BYTES + 7];
  it.each(sizes)('round-trips %i bytes (packed when small, pieces when large)', async (size) => {
    const { store } = await openStore();
    const data = randomBytes(size, size + 1);
    const res = await store.putObjectUnsized(B, 'k', stream(data, 100_003), {});
    expect(res.size).toBe(size);
    expect(res.etag).toBe(md5(data));
    const v = await store.version(B, 'k');
    expect(v.location.kind).toBe(size === 0 ? 'empty' : size <= PACK_MAX_BODY ? 'pack' : 'chunks');
    if (v.location.kind === 'chunks') expect(v.location.chunks.reduce((s, c) => s + c.size, 0)).toBe(size);
    expect(Buffer.from(await collect((await store.getObject(B, 'k')).body)).equals(Buffer.from(data))).toBe(true);
    // Ranged reads across piece boundaries return the right bytes.
    if (size > PACK_MAX_BODY + 10) {
      const start = PACK_MAX_BODY - 5;
      const g = await store.getObject(B, 'k', { range: { start, end: start + 9 } });
      expect(Buffer.from(await collect(g.body)).equals(Buffer.from(data.subarray(start, start + 10)))).toBe(true);
    }
    expect(store.repo.budget.used).toBe(0);
    await store.close();
  });

  it('gives the same object whatever the fragmentation (1-byte pieces)', async () => {
    const { store } = await openStore();
    const data = randomBytes(PACK_MAX_BODY + 3000, 5);
    const res = await store.putObjectUnsized(B, 'k', stream(data, 1), {});
    expect(res.etag).toBe(md5(data));
    expect(Buffer.from(await collect((await store.getObject(B, 'k')).body)).equals(Buffer.from(data))).toBe(true);
    await store.close();
  });

  it('refuses a body over maxBytes while streaming and leaves nothing behind', async () => {
    const { store } = await openStore();
    for (const [max, size] of [
      [0, 1],
      [10, 11],
      [PACK_MAX_BODY, PACK_MAX_BODY + 1],
      [PACK_MAX_BODY + 100, PACK_MAX_BODY + 101],
      [PACK_MAX_BODY + UNSIZED_PIECE_BYTES, 4 * UNSIZED_PIECE_BYTES],
    ] as const) {
      let pulled = 0;
      const data = randomBytes(size, 9);
      const counted = (async function* () {
        for await (const c of stream(data, 4096)) {
          pulled += c.length;
          yield c;
        }
      })();
      await expectStoreError(store.putObjectUnsized(B, `big-${max}`, counted, { maxBytes: max }), 'EntityTooLarge');
      // It stopped reading soon after the limit (within one piece and one network chunk).
      expect(pulled).toBeLessThanOrEqual(max + UNSIZED_PIECE_BYTES + 4096);
      await expectStoreError(store.version(B, `big-${max}`), 'NoSuchKey');
    }
    // Exactly maxBytes is accepted.
    const exact = randomBytes(PACK_MAX_BODY + 100, 3);
    await store.putObjectUnsized(B, 'exact', stream(exact), { maxBytes: exact.length });
    expect((await store.version(B, 'exact')).size).toBe(exact.length);
    expect(await chunkBlobs(store)).toBe((await store.version(B, 'exact')).location.kind === 'chunks' ? 2 : 0);
    expect(store.repo.budget.used).toBe(0);
    await store.close();
  });

  it('refuses a body under minBytes (packed and carried)', async () => {
    const { store } = await openStore();
    await expectStoreError(store.putObjectUnsized(B, 'small', stream(randomBytes(3, 1)), { minBytes: 4 }), 'EntityTooSmall');
    const mid = randomBytes(PACK_MAX_BODY + 10, 2);
    await expectStoreError(store.putObjectUnsized(B, 'small2', stream(mid), { minBytes: PACK_MAX_BODY + 11 }), 'EntityTooSmall');
    await expectStoreError(store.version(B, 'small'), 'NoSuchKey');
    await expectStoreError(store.version(B, 'small2'), 'NoSuchKey');
    expect(await chunkBlobs(store)).toBe(0);
    await store.putObjectUnsized(B, 'ok', stream(randomBytes(4, 1)), { minBytes: 4 });
    await store.close();
  });

  it('leaves nothing when the body fails mid-stream', async () => {
    const { store } = await openStore();
    const data = randomBytes(3 * UNSIZED_PIECE_BYTES, 4);
    const failing = (async function* () {
      yield* stream(data.subarray(0, 2 * UNSIZED_PIECE_BYTES + 5));
      throw new Error('connection reset');
    })();
    await expect(store.putObjectUnsized(B, 'broken', failing, {})).rejects.toThrow('connection reset');
    await expectStoreError(store.version(B, 'broken'), 'NoSuchKey');
    expect(await chunkBlobs(store)).toBe(0);
    expect(store.repo.budget.used).toBe(0);
    await store.close();
  });

  it('applies write conditions and body claims like a sized put', async () => {
    const { store } = await openStore();
    const data = randomBytes(PACK_MAX_BODY + 5, 6);
    await store.putObjectUnsized(B, 'c', stream(data), { conditions: { ifNoneMatch: '*' } });
    await expectStoreError(store.putObjectUnsized(B, 'c', stream(data), { conditions: { ifNoneMatch: '*' } }), 'PreconditionFailed');
    const wrongMd5 = Buffer.alloc(16).toString('base64');
    await expectStoreError(store.putObjectUnsized(B, 'd', stream(data), { claims: { contentMd5: wrongMd5 } }), 'BadDigest');
    const rightMd5 = createHash('md5').update(data).digest('base64');
    await store.putObjectUnsized(B, 'd', stream(data), { claims: { contentMd5: rightMd5 } });
    await expectStoreError(store.putObjectUnsized('nope', 'd', stream(data), {}), 'NoSuchBucket');
    expect(await chunkBlobs(store)).toBe(2 * 2); // 'c' and 'd': head + tail each
    await store.close();
  });

  it('charges at most the head or one piece (plus the next) to the pending budget', async () => {
    const { store } = await openStore();
    let peakDuring = 0;
    const data = randomBytes(6 * UNSIZED_PIECE_BYTES, 8);
    const watched = (async function* () {
      for await (const c of stream(data, 65536)) {
        peakDuring = Math.max(peakDuring, store.repo.budget.used);
        yield c;
      }
    })();
    await store.putObjectUnsized(B, 'w', watched, {});
    expect(peakDuring).toBeGreaterThan(0);
    expect(peakDuring).toBeLessThanOrEqual(2 * UNSIZED_PIECE_BYTES);
    expect(store.repo.budget.used).toBe(0);
    await store.close();
  });

  it('is refused with SlowDown before reading when the budget cannot hold the head', async () => {
    const { store } = await openStore(PACK_MAX_BODY - 1);
    let pulled = false;
    const body = (async function* () {
      pulled = true;
      yield new Uint8Array(1);
    })();
    await expectStoreError(store.putObjectUnsized(B, 's', body, {}), 'SlowDown');
    expect(pulled).toBe(false);
    await store.close();
  });

  it('encrypts unsized bodies (SSE-S3, SSE-C), packed or one stream per piece', async () => {
    const { store, provider } = await openStore();
    const s3root = Buffer.from(randomBytes(32, 71));
    const cust = Buffer.from(randomBytes(32, 72));
    for (const [mode, root, size] of [
      ['sse-s3', s3root, 1000],
      ['sse-s3', s3root, PACK_MAX_BODY + 2 * UNSIZED_PIECE_BYTES + 12345],
      ['sse-c', cust, PACK_MAX_BODY + UNSIZED_PIECE_BYTES + 1],
    ] as const) {
      const data = randomBytes(size, size);
      const key = `${mode}-${size}`;
      await store.putObjectUnsized(B, key, stream(data, 33_333), { encryption: { mode, root } });
      const v = await store.version(B, key);
      expect(v.encryption?.mode).toBe(mode);
      expect(v.encryption?.streams.reduce((n, st) => n + st.size, 0)).toBe(size);
      if (size > PACK_MAX_BODY) expect(v.encryption?.streams.length).toBe(1 + Math.ceil((size - PACK_MAX_BODY) / UNSIZED_PIECE_BYTES));
      const keys = mode === 'sse-s3' ? { sseS3: s3root } : { customer: cust };
      expect(Buffer.from(await collect((await store.getObject(B, key, { keys })).body)).equals(Buffer.from(data))).toBe(true);
      for (const start of [0, PACK_MAX_BODY - 7, PACK_MAX_BODY + UNSIZED_PIECE_BYTES - 3].filter((x) => x + 10 < size)) {
        const g = await store.getObject(B, key, { keys, range: { start, end: start + 9 } });
        expect(Buffer.from(await collect(g.body)).equals(Buffer.from(data.subarray(start, start + 10))), `${key} @${start}`).toBe(true);
      }
      await expect(store.getObject(B, key, {})).rejects.toThrow();
      // No stored blob holds a 48-byte window of the plaintext.
      let after: string | undefined;
      const probes = [0, Math.floor(size / 2), size - 48].map((o) => Buffer.from(data.subarray(o, o + 48)));
      do {
        const page = await provider.list(after ? { startAfter: after } : {});
        for (const item of page.items) {
          const bytes = Buffer.from(await getBytes(provider, item.key));
          for (const p of probes) expect(bytes.includes(p), `${key}: plaintext in ${item.key}`).toBe(false);
        }
        after = page.next;
      } while (after);
    }
    await store.close();
  });
});
