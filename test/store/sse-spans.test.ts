/**
 * Large encrypted bodies on a provider with positional reads (fs): a carrier chunk is read a
 * span of segments at a time, the next span read (into the second of two scratch buffers)
 * while this one is opened and sent. Every range comes back byte-exact, across spans and
 * chunks, whole or cut short by the reader; a tampered segment fails the read with only the
 * segments before it served.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { StoreError } from '../../src/store/errors.js';
import { getBytes, type Provider } from '../../src/provider/provider.js';
import { PACK_HEADER_SIZE, ENTRY_HEADER_SIZE } from '../../src/pack/stream-writer.js';
import { SEGMENT_TAG_BYTES } from '../../src/store/crypto/segment-cipher.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';
import { collect, stream, tempDir } from './helpers.js';
import { createFsProvider } from '../../src/provider/fs/index.js';

const KIB = 1024;
const MIB = 1024 * KIB;
const SEG = 256 * KIB;
const ROOT = Buffer.from(randomBytes(32, 71));
const CUSTOMER = Buffer.from(randomBytes(32, 72));
const S3_KEYS = { sseS3: ROOT };
const C_KEYS = { sseS3: ROOT, customer: CUSTOMER };

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function open(): Promise<{ store: Store; provider: Provider }> {
  // Exclusive, as the server opens it: reads go through cached handles, so a read ahead is
  // issued at once (its bytes land while the span before it is still being opened).
  const { dir, cleanup } = tempDir('sse-spans');
  cleanups.push(cleanup);
  const provider = await createFsProvider({ dir, exclusive: true });
  const store = await Store.open(provider);
  await store.createBucket('bkt');
  return { store, provider };
}

describe('large encrypted bodies read span by span (fs)', () => {
  it('serves whole bodies and ranges across spans and chunks byte-exact', async () => {
    const { store, provider } = await open();
    expect(provider.read).toBeDefined(); // the positional path under test
    const sizes = [4 * SEG + 1, 8 * MIB, 8 * MIB + 5 * SEG + 17, 20 * MIB + 3];
    const bodies = sizes.map((n, i) => randomBytes(n, 80 + i));
    for (const [i, body] of bodies.entries()) {
      const encryption = i % 2 ? { mode: 'sse-c' as const, root: CUSTOMER } : { mode: 'sse-s3' as const, root: ROOT };
      await store.putObject('bkt', `o/${i}`, stream(body, MIB), { size: body.length, encryption });
    }
    for (const [i, body] of bodies.entries()) {
      const keys = i % 2 ? C_KEYS : S3_KEYS;
      expectBytes(await collect((await store.getObject('bkt', `o/${i}`, { keys })).body), body, `o/${i}`);
      const n = body.length;
      // Ranges starting and ending inside spans, on span and chunk boundaries, across chunks.
      const ranges: [number, number][] = [
        [1, n - 2],
        [SEG - 1, 4 * SEG],
        [MIB - 1, 3 * MIB + 1],
        [5, MIB + SEG + 3],
        [n - MIB - 7, n - 1],
        [8 * MIB - 3, 8 * MIB + 2 * SEG],
      ];
      for (const [start, end] of ranges.filter(([a, b]) => a >= 0 && a <= b && b < n)) {
        const g = await store.getObject('bkt', `o/${i}`, { keys, range: { start, end } });
        expectBytes(await collect(g.body), body.subarray(start, end + 1), `o/${i} ${start}-${end}`);
      }
    }
    // A reader that stops early (the client went away) leaves nothing running: the next GETs
    // of the same object are whole.
    const g = await store.getObject('bkt', 'o/3', { keys: C_KEYS });
    for await (const piece of g.body) {
      expect(piece.length).toBeGreaterThan(0);
      break;
    }
    expectBytes(await collect((await store.getObject('bkt', 'o/3', { keys: C_KEYS })).body), bodies[3]!, 'after an early stop');
    await store.close();
  });

  it('fails a read at a tampered segment, serving only the segments before it', async () => {
    const { store, provider } = await open();
    const body = randomBytes(8 * MIB, 90);
    await store.putObject('bkt', 'x', stream(body, MIB), { size: body.length, encryption: { mode: 'sse-s3', root: ROOT } });
    const loc = (await store.version('bkt', 'x')).location;
    if (loc.kind !== 'chunks') throw new Error('expected a carrier');
    const blob = loc.chunks[0]!.blob;
    const original = Buffer.from(await getBytes(provider, blob));
    // One bit of segment 5's ciphertext, in the second read span. The entry CRCs are not what
    // catches it (encrypted entries are checked by their GCM tags).
    const damaged = Buffer.from(original);
    damaged[PACK_HEADER_SIZE + 5 * (ENTRY_HEADER_SIZE + SEG + SEGMENT_TAG_BYTES) + ENTRY_HEADER_SIZE + 1000]! ^= 4;
    await provider.put(blob, damaged, { contentLength: damaged.length });
    const got: Uint8Array[] = [];
    const g = await store.getObject('bkt', 'x', { keys: S3_KEYS });
    const err = await (async () => {
      for await (const c of g.body) got.push(c);
    })().then(
      () => undefined,
      (e: unknown) => e
    );
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('Corrupt');
    expect((err as Error).message).toMatch(/segment 5 failed authentication/);
    const served = Buffer.concat(got);
    expect(served.length).toBe(5 * SEG);
    expectBytes(served, body.subarray(0, 5 * SEG), 'served prefix');
    // A range reaching the damaged segment fails; one that ends before it is served.
    await expect(collect((await store.getObject('bkt', 'x', { keys: S3_KEYS, range: { start: 5 * SEG + 9, end: 7 * SEG } })).body)).rejects.toThrow(/failed authentication/);
    expectBytes(await collect((await store.getObject('bkt', 'x', { keys: S3_KEYS, range: { start: 10, end: 5 * SEG - 1 } })).body), body.subarray(10, 5 * SEG), 'before');
    await provider.put(blob, original, { contentLength: original.length });
    expectBytes(await collect((await store.getObject('bkt', 'x', { keys: S3_KEYS })).body), body, 'restored');
    await store.close();
  });
});
