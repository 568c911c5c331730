/**
 * Encryption at rest through the Store API: SSE-S3 and SSE-C bodies (packed and carrier,
 * single PUT and multipart, copies between modes) read back exactly, ranges opened across
 * segment and part boundaries, keys checked before any byte, the body cache never a way
 * around the key, and stored blobs that never hold the plaintext. Tampering with a sealed
 * segment in a correctly re-framed pack (so only the cipher can notice) fails the read.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { StoreError } from '../../src/store/errors.js';
import { decodePack } from '../../src/pack/reader.js';
import { encodePack } from '../../src/pack/writer.js';
import { getBytes, type Provider } from '../../src/provider/provider.js';
import type { KeyRing } from '../../src/store/crypto/envelope.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';
import { collect, makeProvider, stream } from './helpers.js';

const KIB = 1024;
const SEG = 256 * KIB;
const S3_ROOT = Buffer.from(randomBytes(32, 901));
const CUST_A = Buffer.from(randomBytes(32, 902));
const CUST_B = Buffer.from(randomBytes(32, 903));
const sseS3 = { mode: 'sse-s3' as const, root: S3_ROOT };
const sseC = (root: Buffer) => ({ mode: 'sse-c' as const, root });
const ring = (customer?: Buffer): KeyRing => (customer ? { sseS3: S3_ROOT, customer } : { sseS3: S3_ROOT });

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function open(): Promise<{ store: Store; provider: Provider }> {
  const p = await makeProvider('memory');
  cleanups.push(p.cleanup);
  const store = await Store.open(p.provider);
  await store.createBucket('bkt');
  return { store, provider: p.provider };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    const r = await p;
    if (r && typeof r === 'object' && 'body' in r) await collect((r as { body: AsyncIterable<Uint8Array> }).body);
  } catch (err) {
    if (err instanceof StoreError) return err.code;
    throw err;
  }
  return 'ok';
}

/** Every stored blob's bytes, concatenated per blob. */
async function allBlobs(provider: Provider): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  let startAfter: string | undefined;
  for (;;) {
    const page = await provider.list({ ...(startAfter ? { startAfter } : {}) });
    for (const i of page.items) out.set(i.key, Buffer.from(await getBytes(provider, i.key)));
    if (!page.next) return out;
    startAfter = page.next;
  }
}

/** A body that is easy to find: a 64-byte marker repeated (any 64-byte window is unique-ish). */
function marked(n: number, seed: number): Uint8Array {
  return randomBytes(n, seed);
}

function expectNoPlaintext(blobs: Map<string, Buffer>, plain: Uint8Array, label: string): void {
  // Probe 48-byte windows at 16 places (first, last and between, so every segment of a small
  // body): ciphertext shares no such window with the plaintext.
  const step = Math.max(1, Math.floor((plain.length - 48) / 15));
  for (let off = 0; off + 48 <= plain.length; off += step) {
    const probe = Buffer.from(plain.subarray(off, off + 48));
    for (const [key, bytes] of blobs) expect(bytes.includes(probe), `${label}: plaintext at ${off} found in ${key}`).toBe(false);
  }
}

describe('encrypted objects in the store', () => {
  it('round-trips SSE-S3 and SSE-C bodies of every shape and serves every range across segment boundaries', async () => {
    const { store, provider } = await open();
    const sizes = [0, 1, SEG - 1, SEG, SEG + 1, 512 * KIB, 512 * KIB + 1, 3 * SEG + 5, 8 * 1024 * KIB + 3];
    const bodies = sizes.map((n, i) => marked(n, 10 + i));
    for (const [i, body] of bodies.entries()) {
      const enc = i % 2 ? sseC(CUST_A) : sseS3;
      const r = await store.putObject('bkt', `o/${i}`, stream(body, 70_001), { size: body.length, encryption: enc });
      expect(r.version.encryption?.mode).toBe(enc.mode);
    }
    for (const [i, body] of bodies.entries()) {
      const keys = ring(i % 2 ? CUST_A : undefined);
      expectBytes(await collect((await store.getObject('bkt', `o/${i}`, { keys })).body), body, `o/${i}`);
      const n = body.length;
      const cuts = [0, 1, SEG - 1, SEG, SEG + 1, 2 * SEG, n - 2, n - 1].filter((x) => x >= 0 && x < n);
      for (const start of cuts) {
        // Ranges ending near the end of an 8 MiB body read all of it: a few suffice there.
        for (const end of cuts.filter((x) => x >= start && (n < 2 * 1024 * KIB || x - start < 4 * SEG || start > n - 4))) {
          const g = await store.getObject('bkt', `o/${i}`, { keys, range: { start, end } });
          expectBytes(await collect(g.body), body.subarray(start, end + 1), `o/${i} ${start}-${end}`);
        }
      }
    }
    const blobs = await allBlobs(provider);
    for (const [i, body] of bodies.entries()) expectNoPlaintext(blobs, body, `o/${i}`);
    await store.close();
  });

  it('checks keys before any byte: missing, wrong, unneeded; the cache does not bypass them', async () => {
    const { store } = await open();
    const body = marked(10 * KIB, 1);
    await store.putObject('bkt', 'c', stream(body), { size: body.length, encryption: sseC(CUST_A) });
    await store.putObject('bkt', 'p', stream(body), { size: body.length });
    await store.putObject('bkt', 's', stream(body), { size: body.length, encryption: sseS3 });
    // Warm the body cache with the right key first.
    expectBytes(await collect((await store.getObject('bkt', 'c', { keys: ring(CUST_A) })).body), body, 'c');
    expect(store.repo.bodies.bytes).toBeGreaterThan(0);
    expect(await codeOf(store.getObject('bkt', 'c', { keys: ring() }))).toBe('InvalidRequest');
    expect(await codeOf(store.getObject('bkt', 'c'))).toBe('InvalidRequest');
    expect(await codeOf(store.getObject('bkt', 'c', { keys: ring(CUST_B) }))).toBe('AccessDenied');
    expect(await codeOf(store.headObject('bkt', 'c', { keys: ring(CUST_B) }))).toBe('AccessDenied');
    expect(await codeOf(store.headObject('bkt', 'c'))).toBe('InvalidRequest');
    expect(await codeOf(store.getObject('bkt', 'p', { keys: ring(CUST_A) }))).toBe('InvalidRequest');
    expect(await codeOf(store.getObject('bkt', 's', { keys: ring(CUST_A) }))).toBe('InvalidRequest');
    // SSE-S3 needs the server's key to read, not to HEAD.
    expect(await codeOf(store.getObject('bkt', 's'))).toBe('KeyUnavailable');
    expect(await codeOf(store.getObject('bkt', 's', { keys: { sseS3: CUST_B } }))).toBe('KeyUnavailable');
    expect(await codeOf(store.headObject('bkt', 's'))).toBe('ok');
    // A part past the end is reported before the key is asked for.
    expect(await codeOf(store.getObject('bkt', 'c', { partNumber: 2 }))).toBe('InvalidPartNumber');
    await store.close();
  });

  it('masks SSE-C ETags (no plaintext MD5 in the index) and keeps SSE-S3 ETags as MD5', async () => {
    const { store } = await open();
    const body = marked(1000, 2);
    const md5 = (await import('node:crypto')).createHash('md5').update(body).digest('hex');
    const c = await store.putObject('bkt', 'c', stream(body), { size: body.length, encryption: sseC(CUST_A) });
    const s = await store.putObject('bkt', 's', stream(body), { size: body.length, encryption: sseS3 });
    expect(s.etag).toBe(md5);
    expect(c.etag).not.toBe(md5);
    expect(c.etag).toMatch(/^[0-9a-f]{32}$/);
    // Content-MD5 is still checked against the plaintext.
    const bad = store.putObject('bkt', 'c2', stream(body), { size: body.length, encryption: sseC(CUST_A), claims: { contentMd5: Buffer.alloc(16).toString('base64') } });
    expect(await codeOf(bad)).toBe('BadDigest');
    const good = await store.putObject('bkt', 'c3', stream(body), {
      size: body.length,
      encryption: sseC(CUST_A),
      claims: { contentMd5: Buffer.from(md5, 'hex').toString('base64') },
    });
    expect(good.etag).not.toBe(md5);
    await store.close();
  });

  it('seals SSE-C checksum values at rest: the index and every blob hold none of them, the key holder sees them', async () => {
    const { store, provider } = await open();
    const { createHash } = await import('node:crypto');
    const body = marked(300 * KIB, 9);
    const sha = createHash('sha256').update(body).digest();
    const put = await store.putObject('bkt', 'c', stream(body), { size: body.length, encryption: sseC(CUST_A), checksumAlgorithm: 'sha256' });
    expect(Buffer.from(put.version.checksums!.values.sha256!).equals(sha)).toBe(true);
    const raw = await store.version('bkt', 'c');
    expect(raw.checksums?.primary).toBe('sha256');
    expect(raw.checksums?.values).toEqual({});
    expect(raw.encryption?.sealedChecksums?.length).toBeGreaterThan(16);
    const head = await store.headObject('bkt', 'c', { keys: ring(CUST_A) });
    expect(Buffer.from(head.version.checksums!.values.sha256!).equals(sha)).toBe(true);
    expect(head.version.checksums!.values.crc64nvme?.length).toBe(8);
    // SSE-S3 keeps them readable (the server holds the key anyway).
    const other = marked(1000, 12);
    const otherSha = createHash('sha256').update(other).digest();
    const s3 = await store.putObject('bkt', 's', stream(other), { size: other.length, encryption: sseS3, checksumAlgorithm: 'sha256' });
    expect((await store.version('bkt', 's')).checksums?.values.sha256).toBeDefined();
    expect(s3.version.encryption?.sealedChecksums).toBeUndefined();
    // Multipart: parts sealed until Complete, which opens them with the key.
    const p1 = marked(5 * 1024 * KIB, 10);
    const p2 = marked(1000, 11);
    const id = await store.createMultipartUpload('bkt', 'mp', { encryption: sseC(CUST_A), checksumAlgorithm: 'crc32' });
    const r1 = await store.uploadPart('bkt', 'mp', id, 1, stream(p1), { size: p1.length, keys: ring(CUST_A), checksumAlgorithm: 'crc32' });
    const r2 = await store.uploadPart('bkt', 'mp', id, 2, stream(p2), { size: p2.length, keys: ring(CUST_A), checksumAlgorithm: 'crc32' });
    expect(r1.values.crc32?.length).toBe(4);
    expect((await store.listParts('bkt', 'mp', id)).parts.map((p) => p.values)).toEqual([{}, {}]);
    const b64 = (v: Uint8Array | undefined) => Buffer.from(v!).toString('base64');
    const done = await store.completeMultipartUpload(
      'bkt',
      'mp',
      id,
      [
        { partNumber: 1, etag: r1.etag, checksums: { crc32: b64(r1.values.crc32) } },
        { partNumber: 2, etag: r2.etag, checksums: { crc32: b64(r2.values.crc32) } },
      ],
      { keys: ring(CUST_A) }
    );
    expect(done.checksums?.type).toBe('COMPOSITE');
    expect(done.checksums?.values.crc32?.length).toBe(4);
    const rawMp = await store.version('bkt', 'mp');
    expect(rawMp.checksums?.values).toEqual({});
    expect(rawMp.parts?.map((p) => p.checksums)).toEqual([{}, {}]);
    const headMp = await store.headObject('bkt', 'mp', { keys: ring(CUST_A), partNumber: 2 });
    expect(b64(headMp.version.parts![1]!.checksums.crc32)).toBe(b64(r2.values.crc32));
    expect(b64(headMp.version.checksums!.values.crc32)).toBe(b64(done.checksums!.values.crc32));
    // Nothing at rest (commits, and index runs after a checkpoint) holds the digests.
    await store.checkpoint();
    const blobs = await allBlobs(provider);
    for (const [what, digest] of [
      ['sha256', sha],
      ['crc64nvme', head.version.checksums!.values.crc64nvme!],
      ['part crc32', r1.values.crc32!],
    ] as const) {
      for (const [k, bytes] of blobs) {
        if (k.startsWith('chunks/')) continue; // random ciphertext: 4-byte CRCs would match by chance
        expect(bytes.includes(Buffer.from(digest)), `${what} in ${k}`).toBe(false);
      }
    }
    // The SSE-S3 object's SHA-256 is there: the search works.
    expect([...blobs.values()].some((b) => b.includes(otherSha))).toBe(true);
    await store.close();
  });

  it('multipart SSE-C: every part needs the upload key, parts are separate streams, ranges cross parts', async () => {
    const { store, provider } = await open();
    const part1 = marked(5 * 1024 * KIB + 1, 3);
    const part2 = marked(300 * KIB, 4);
    const id = await store.createMultipartUpload('bkt', 'mp', { encryption: sseC(CUST_A) });
    expect(await codeOf(store.uploadPart('bkt', 'mp', id, 1, stream(part1), { size: part1.length }))).toBe('InvalidRequest');
    expect(await codeOf(store.uploadPart('bkt', 'mp', id, 1, stream(part1), { size: part1.length, keys: ring(CUST_B) }))).toBe('InvalidRequest');
    const p1 = await store.uploadPart('bkt', 'mp', id, 1, stream(part1), { size: part1.length, keys: ring(CUST_A) });
    const p2 = await store.uploadPart('bkt', 'mp', id, 2, stream(part2), { size: part2.length, keys: ring(CUST_A) });
    const parts = [
      { partNumber: 1, etag: p1.etag },
      { partNumber: 2, etag: p2.etag },
    ];
    expect(await codeOf(store.completeMultipartUpload('bkt', 'mp', id, parts))).toBe('InvalidRequest');
    expect(await codeOf(store.completeMultipartUpload('bkt', 'mp', id, parts, { keys: ring(CUST_B) }))).toBe('InvalidRequest');
    const v = await store.completeMultipartUpload('bkt', 'mp', id, parts, { keys: ring(CUST_A) });
    expect(v.encryption?.streams.map((s) => s.size)).toEqual([part1.length, part2.length]);
    const whole = Buffer.concat([part1, part2]);
    const keys = ring(CUST_A);
    expectBytes(await collect((await store.getObject('bkt', 'mp', { keys })).body), whole, 'mp');
    for (const [start, end] of [
      [part1.length - 10, part1.length + 10],
      [SEG - 1, SEG],
      [part1.length - 1, part1.length - 1],
      [whole.length - 3, whole.length - 1],
    ] as const) {
      expectBytes(await collect((await store.getObject('bkt', 'mp', { keys, range: { start, end } })).body), whole.subarray(start, end + 1), `${start}-${end}`);
    }
    expectBytes(await collect((await store.getObject('bkt', 'mp', { keys, partNumber: 2 })).body), part2, 'part 2');
    expect(await codeOf(store.getObject('bkt', 'mp', { keys: ring(CUST_B) }))).toBe('AccessDenied');
    expectNoPlaintext(await allBlobs(provider), whole, 'mp');
    // A customer key on an upload that did not ask for SSE-C is refused too.
    const plainId = await store.createMultipartUpload('bkt', 'mp2', { encryption: sseS3 });
    expect(await codeOf(store.uploadPart('bkt', 'mp2', plainId, 1, stream(part2), { size: part2.length, keys: ring(CUST_A) }))).toBe('InvalidRequest');
    await store.close();
  });

  it('copies between modes: shares the body when the key is the same, re-encrypts otherwise', async () => {
    const { store, provider } = await open();
    const small = marked(70 * KIB, 5);
    const big = marked(2 * 1024 * KIB + 9, 6);
    for (const [name, body] of [
      ['small', small],
      ['big', big],
    ] as const) {
      await store.putObject('bkt', `${name}/plain`, stream(body), { size: body.length });
      // plain -> SSE-S3 -> SSE-C(A) -> SSE-C(B) -> SSE-C(B) -> plain
      const s3 = await store.copyObject({ bucket: 'bkt', key: `${name}/plain` }, { bucket: 'bkt', key: `${name}/s3` }, { encryption: sseS3, sourceKeys: ring() });
      expect(s3.encryption?.mode).toBe('sse-s3');
      expect(s3.location).not.toEqual((await store.version('bkt', `${name}/plain`)).location);
      const cA = await store.copyObject({ bucket: 'bkt', key: `${name}/s3` }, { bucket: 'bkt', key: `${name}/cA` }, { encryption: sseC(CUST_A), sourceKeys: ring() });
      expect(await codeOf(store.copyObject({ bucket: 'bkt', key: `${name}/cA` }, { bucket: 'bkt', key: `${name}/cB` }, { encryption: sseC(CUST_B), sourceKeys: ring() }))).toBe('InvalidRequest');
      expect(await codeOf(store.copyObject({ bucket: 'bkt', key: `${name}/cA` }, { bucket: 'bkt', key: `${name}/cB` }, { encryption: sseC(CUST_B), sourceKeys: ring(CUST_B) }))).toBe('AccessDenied');
      const cB = await store.copyObject({ bucket: 'bkt', key: `${name}/cA` }, { bucket: 'bkt', key: `${name}/cB` }, { encryption: sseC(CUST_B), sourceKeys: ring(CUST_A) });
      expect(cB.location).not.toEqual(cA.location);
      const cB2 = await store.copyObject({ bucket: 'bkt', key: `${name}/cB` }, { bucket: 'bkt', key: `${name}/cB2` }, { encryption: sseC(CUST_B), sourceKeys: ring(CUST_B) });
      expect(cB2.location).toEqual(cB.location); // same key: metadata only
      expect(Buffer.from(cB2.md5).equals(Buffer.from(cB.md5))).toBe(true);
      await store.copyObject({ bucket: 'bkt', key: `${name}/cB2` }, { bucket: 'bkt', key: `${name}/back` }, { sourceKeys: ring(CUST_B) });
      expectBytes(await collect((await store.getObject('bkt', `${name}/s3`, { keys: ring() })).body), body, `${name}/s3`);
      expectBytes(await collect((await store.getObject('bkt', `${name}/cA`, { keys: ring(CUST_A) })).body), body, `${name}/cA`);
      expectBytes(await collect((await store.getObject('bkt', `${name}/cB2`, { keys: ring(CUST_B) })).body), body, `${name}/cB2`);
      const back = await store.getObject('bkt', `${name}/back`, { keys: ring() });
      expect(back.version.encryption).toBeUndefined();
      expectBytes(await collect(back.body), body, `${name}/back`);
    }
    // In place: same encryption and nothing else changed is refused; a change of mode is allowed.
    expect(await codeOf(store.copyObject({ bucket: 'bkt', key: 'small/s3' }, { bucket: 'bkt', key: 'small/s3' }, { encryption: sseS3, sourceKeys: ring() }))).toBe('InvalidRequest');
    await store.copyObject({ bucket: 'bkt', key: 'small/s3' }, { bucket: 'bkt', key: 'small/s3' }, { encryption: sseC(CUST_A), sourceKeys: ring() });
    expect((await store.version('bkt', 'small/s3')).encryption?.mode).toBe('sse-c');
    // Only the two plaintext objects (and their plain copies) hold plaintext.
    const blobs = await allBlobs(provider);
    const plainBlobs = new Set<string>();
    for (const k of ['small/plain', 'small/back', 'big/plain', 'big/back']) {
      const loc = (await store.version('bkt', k)).location;
      if (loc.kind === 'pack') plainBlobs.add(loc.blob);
      if (loc.kind === 'chunks') for (const c of loc.chunks) plainBlobs.add(c.blob);
    }
    for (const k of plainBlobs) blobs.delete(k);
    expectNoPlaintext(blobs, small, 'small copies');
    expectNoPlaintext(blobs, big, 'big copies');
    await store.close();
  });

  it('fails a read of a tampered, reordered or transplanted sealed segment even when the pack framing is valid', async () => {
    const { store, provider } = await open();
    const body = marked(4 * SEG + 100, 7);
    const other = marked(4 * SEG + 100, 8);
    await store.putObject('bkt', 'x', stream(body), { size: body.length, encryption: sseS3 });
    await store.putObject('bkt', 'y', stream(other), { size: other.length, encryption: sseS3 });
    const chunkOf = async (k: string) => {
      const loc = (await store.version('bkt', k)).location;
      if (loc.kind !== 'chunks') throw new Error('expected a carrier');
      return loc.chunks[0]!.blob;
    };
    const [cx, cy] = [await chunkOf('x'), await chunkOf('y')];
    const original = await getBytes(provider, cx);
    const px = decodePack(original);
    const py = decodePack(await getBytes(provider, cy));
    /** Re-frames `bodies` as pack `cx` (same id, fresh CRCs) so only the cipher can object. */
    const reframe = async (bodies: Uint8Array[]) => {
      const pack = encodePack(bodies, { id: px.id });
      await provider.put(cx, (async function* () {
        yield* pack.chunks;
      })(), { contentLength: pack.size });
    };
    const bodies = () => px.entries.map((e) => Buffer.from(e.body));
    // [what, stored entries, first segment that no longer opens]
    const attacks: [string, Uint8Array[], number][] = [];
    const flipped = bodies();
    flipped[1]![100]! ^= 1;
    attacks.push(['bit flip in segment 1', flipped, 1]);
    const swapped = bodies();
    [swapped[1], swapped[2]] = [swapped[2]!, swapped[1]!];
    attacks.push(['segments 1 and 2 swapped', swapped, 1]);
    const transplanted = bodies();
    transplanted[1] = Buffer.from(py.entries[1]!.body);
    attacks.push(['segment 1 from another object', transplanted, 1]);
    const replayed = bodies();
    replayed[2] = Buffer.from(replayed[1]!);
    attacks.push(['segment 1 replayed as segment 2', replayed, 2]);
    for (const [what, damaged, firstBad] of attacks) {
      await reframe(damaged);
      const code = await codeOf(store.getObject('bkt', 'x', { keys: ring(), range: { start: SEG, end: 3 * SEG - 1 } }));
      expect(code, what).toBe('Corrupt');
      // Bytes before the damage still verify and are served; nothing after it is.
      const got: Uint8Array[] = [];
      const g = await store.getObject('bkt', 'x', { keys: ring() });
      await expect(
        (async () => {
          for await (const c of g.body) got.push(c);
        })()
      ).rejects.toThrow(StoreError);
      const served = Buffer.concat(got);
      expect(served.length, what).toBeLessThanOrEqual(firstBad * SEG);
      expectBytes(served, body.subarray(0, served.length), `${what}: served prefix`);
    }
    await provider.put(cx, (async function* () {
      yield original;
    })(), { contentLength: original.length });
    expectBytes(await collect((await store.getObject('bkt', 'x', { keys: ring() })).body), body, 'restored');
    await store.close();
  });
});
