/**
 * @module What the fork tests share: a store on a fresh provider behind a request counter,
 * puts, paged listings, content checks, and a source bucket with objects in every place an
 * object can be (two runs, the overlay, overwritten, deleted, carrier and multipart bodies).
 */
import { afterEach, expect } from 'vitest';
import { Store } from '../../src/store/store.js';
import { etagOf } from '../../src/store/records.js';
import type { Provider } from '../../src/provider/provider.js';
import { CountingProvider } from '../../bench/lib/counting-provider.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';
import { collect, makeProvider, stream, type ProviderKind } from './helpers.js';

/** Temp directories of the stores `open` made; removed after each test of every file importing this. */
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

export const utf8 = (s: string) => new TextEncoder().encode(s);

export async function open(kind: ProviderKind, options: Parameters<typeof Store.open>[1] = {}) {
  const p = await makeProvider(kind);
  cleanups.push(p.cleanup);
  const counter = new CountingProvider(p.provider);
  const store = await Store.open(counter, options);
  return { store, counter, provider: p.provider as Provider, reopen: async () => Store.open(await p.reopen(), options) };
}

export async function put(store: Store, bucket: string, key: string, body: Uint8Array): Promise<string> {
  return (await store.putObject(bucket, key, stream(body, 100_000), { size: body.length })).etag;
}

/** Every key of `bucket` with its ETag, through paged listings. */
export async function listing(store: Store, bucket: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let token: string | undefined;
  for (;;) {
    const page = await store.listObjects(bucket, { maxKeys: 7, ...(token ? { continuationToken: token } : {}) });
    for (const e of page.contents) out.set(e.key, etagOf(e.version));
    if (!page.isTruncated) return out;
    token = page.nextContinuationToken;
  }
}

/** Asserts that `bucket` holds exactly `expected` (key -> body), by listing and by reading each. */
export async function expectContents(store: Store, bucket: string, expected: Map<string, Uint8Array>, label: string): Promise<void> {
  const listed = await listing(store, bucket);
  expect([...listed.keys()], `${label}: keys`).toEqual([...expected.keys()].sort());
  for (const [key, body] of expected) {
    expectBytes(await collect((await store.getObject(bucket, key)).body), body, `${label}: ${key}`);
  }
}

/**
 * A source bucket with objects in two runs and in the overlay, an overwrite, deletions
 * shadowing run entries, a carrier body and a completed multipart upload. Returns its model.
 */
export async function populate(store: Store, bucket: string): Promise<Map<string, Uint8Array>> {
  const m = new Map<string, Uint8Array>();
  await store.createBucket(bucket);
  const write = async (key: string, body: Uint8Array) => {
    await put(store, bucket, key, body);
    m.set(key, body);
  };
  for (let i = 0; i < 12; i++) await write(`run1/${i}`, randomBytes(100 + i, i + 1));
  await write('carrier', randomBytes(700 * 1024, 99));
  await store.checkpoint();
  for (let i = 0; i < 6; i++) await write(`run2/${i}`, randomBytes(50 + i, i + 100));
  await write('run1/3', utf8('overwritten in run 2'));
  await store.checkpoint();
  for (let i = 0; i < 9; i++) await write(`overlay/${i}`, randomBytes(30 + i, i + 200));
  await write('run2/0', utf8('overwritten in the overlay'));
  for (const key of ['run1/0', 'run2/1', 'overlay/8']) {
    await store.deleteObject(bucket, key);
    m.delete(key);
  }
  const id = await store.createMultipartUpload(bucket, 'multipart');
  const p1 = randomBytes(5 * 1024 * 1024, 7);
  const p2 = randomBytes(333, 8);
  const r1 = await store.uploadPart(bucket, 'multipart', id, 1, stream(p1), { size: p1.length });
  const r2 = await store.uploadPart(bucket, 'multipart', id, 2, stream(p2), { size: p2.length });
  await store.completeMultipartUpload(bucket, 'multipart', id, [
    { partNumber: 1, etag: r1.etag },
    { partNumber: 2, etag: r2.etag },
  ]);
  m.set('multipart', Buffer.concat([p1, p2]));
  return m;
}

