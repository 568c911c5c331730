import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { StoreError } from '../../src/store/errors.js';
import { etagOf } from '../../src/store/records.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';
import { collect, makeProvider, stream, type ProviderKind } from './helpers.js';
import { createHash } from 'node:crypto';

const md5hex = (b: Uint8Array) => createHash('md5').update(b).digest('hex');
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function open(kind: ProviderKind) {
  const p = await makeProvider(kind);
  cleanups.push(p.cleanup);
  const store = await Store.open(p.provider);
  return { store, reopen: async () => Store.open(await p.reopen()) };
}

describe.each(['memory', 'fs'] as const)('store on %s', (kind) => {
  it('puts, gets, lists and survives a reopen, for packed and carrier bodies', async () => {
    const { store, reopen } = await open(kind);
    await store.createBucket('bucket-one');
    const sizes = [0, 1, 4096, 512 * 1024, 512 * 1024 + 1, 3 * 1024 * 1024 + 17];
    const bodies = sizes.map((n, i) => randomBytes(n, i + 1));
    for (const [i, body] of bodies.entries()) {
      const r = await store.putObject('bucket-one', `k/${i}`, stream(body, 7777), { size: body.length, contentType: 'application/x-test' });
      expect(r.etag).toBe(md5hex(body));
    }
    for (const [i, body] of bodies.entries()) {
      const g = await store.getObject('bucket-one', `k/${i}`);
      expectBytes(await collect(g.body), body, `k/${i}`);
      expect(g.version.contentType).toBe('application/x-test');
    }
    const list = await store.listObjects('bucket-one', { prefix: 'k/' });
    expect(list.contents.map((e) => e.key)).toEqual(sizes.map((_, i) => `k/${i}`));
    await store.close();
    const again = await reopen();
    for (const [i, body] of bodies.entries()) {
      expectBytes(await collect((await again.getObject('bucket-one', `k/${i}`)).body), body, `reopened k/${i}`);
    }
    await again.checkpoint();
    const third = await reopen();
    expect((await third.listObjects('bucket-one')).contents).toHaveLength(sizes.length);
    const g = await third.getObject('bucket-one', 'k/5', { range: { start: 1000, end: 300_000 } });
    expectBytes(await collect(g.body), bodies[5]!.subarray(1000, 300_001), 'range over a carrier');
  });

  it('serves ranges, conditions and deletes', async () => {
    const { store } = await open(kind);
    await store.createBucket('bucket-two');
    const body = randomBytes(10_000, 3);
    await store.putObject('bucket-two', 'x', stream(body), { size: body.length });
    expectBytes(await collect((await store.getObject('bucket-two', 'x', { range: { suffix: 100 } })).body), body.subarray(9_900), 'suffix');
    expectBytes(await collect((await store.getObject('bucket-two', 'x', { range: { start: 9_990, end: 20_000 } })).body), body.subarray(9_990), 'clamped');
    await expect(store.getObject('bucket-two', 'x', { range: { start: 10_000 } })).rejects.toMatchObject({ code: 'InvalidRange' });
    const v = await store.version('bucket-two', 'x');
    await expect(store.getObject('bucket-two', 'x', { conditions: { ifMatch: `"${etagOf(v)}"` } })).resolves.toBeDefined();
    await expect(store.getObject('bucket-two', 'x', { conditions: { ifMatch: '"nope"' } })).rejects.toMatchObject({ code: 'PreconditionFailed' });
    await expect(store.getObject('bucket-two', 'x', { conditions: { ifNoneMatch: etagOf(v) } })).rejects.toMatchObject({ code: 'NotModified' });
    await expect(store.putObject('bucket-two', 'x', stream(body), { size: body.length, conditions: { ifNoneMatch: '*' } })).rejects.toMatchObject({ code: 'PreconditionFailed' });
    await store.deleteObject('bucket-two', 'x');
    await expect(store.getObject('bucket-two', 'x')).rejects.toMatchObject({ code: 'NoSuchKey' });
    await expect(store.deleteBucket('bucket-two')).resolves.toBeUndefined();
  });

  it('runs a multipart upload without copying bytes and builds S3 ETags and checksums', async () => {
    const { store } = await open(kind);
    await store.createBucket('multi');
    const id = await store.createMultipartUpload('multi', 'big', { checksumAlgorithm: 'crc32' });
    const p1 = randomBytes(5 * 1024 * 1024, 1);
    const p2 = randomBytes(1234, 2);
    const r2 = await store.uploadPart('multi', 'big', id, 2, stream(p2), { size: p2.length });
    const r1 = await store.uploadPart('multi', 'big', id, 1, stream(p1), { size: p1.length });
    const v = await store.completeMultipartUpload('multi', 'big', id, [
      { partNumber: 1, etag: `"${r1.etag}"` },
      { partNumber: 2, etag: r2.etag },
    ]);
    const want = createHash('md5').update(Buffer.from(r1.etag, 'hex')).update(Buffer.from(r2.etag, 'hex')).digest('hex');
    expect(etagOf(v)).toBe(`${want}-2`);
    expect(v.checksums?.type).toBe('COMPOSITE');
    const all = await collect((await store.getObject('multi', 'big')).body);
    expectBytes(all, Buffer.concat([p1, p2]), 'completed object');
    expectBytes(await collect((await store.getObject('multi', 'big', { partNumber: 2 })).body), p2, 'part 2');
    await expect(store.listParts('multi', 'big', id)).rejects.toThrow(/upload does not exist/);
  });

  it('refuses bad input with typed errors', async () => {
    const { store } = await open(kind);
    await expect(store.createBucket('Bad_Name')).rejects.toBeInstanceOf(StoreError);
    await store.createBucket('ok-bucket');
    await expect(store.createBucket('ok-bucket')).rejects.toMatchObject({ code: 'BucketAlreadyOwnedByYou' });
    await expect(store.putObject('ok-bucket', 'k'.repeat(1025), stream(new Uint8Array(1)), { size: 1 })).rejects.toMatchObject({ code: 'KeyTooLong' });
    await expect(store.putObject('nope', 'k', stream(new Uint8Array(1)), { size: 1 })).rejects.toMatchObject({ code: 'NoSuchBucket' });
    await expect(store.putObject('ok-bucket', 'k', stream(new Uint8Array(5)), { size: 4 })).rejects.toMatchObject({ code: 'IncompleteBody' });
    await expect(store.putObject('ok-bucket', 'k', stream(new Uint8Array(3)), { size: 4 })).rejects.toMatchObject({ code: 'IncompleteBody' });
    await expect(store.getObject('ok-bucket', 'k')).rejects.toMatchObject({ code: 'NoSuchKey' });
  });
});
