/**
 * The version log (store level, real providers): ids and their order, S3 versioning semantics
 * (Enabled, Suspended, never enabled), delete markers, permanent removal, per-version
 * updates, ListObjectVersions paging, the point-in-time primitive, and that all of it
 * survives replay, checkpoints, compaction and reopen.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { deleteMarkerOf } from '../../src/store/objects-read.js';
import { parseVersionId, formatVersionId } from '../../src/store/version-id.js';
import type { ListVersionsResult } from '../../src/store/versions-list.js';
import { collect, makeProvider, stream, type ProviderKind } from './helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const utf8 = (s: string) => new TextEncoder().encode(s);
const text = async (body: AsyncIterable<Uint8Array>) => Buffer.from(await collect(body)).toString();

async function open(kind: ProviderKind, opts: Parameters<typeof Store.open>[1] = {}) {
  const p = await makeProvider(kind);
  cleanups.push(p.cleanup);
  const store = await Store.open(p.provider, opts);
  return { store, reopen: async () => Store.open(await p.reopen(), opts) };
}

async function put(store: Store, bucket: string, key: string, body: string) {
  const b = utf8(body);
  return store.putObject(bucket, key, stream(b), { size: b.length });
}

/** Every page of ListObjectVersions with `maxKeys` per page, concatenated. */
async function listAll(store: Store, bucket: string, maxKeys: number, extra: { prefix?: string; delimiter?: string } = {}) {
  const versions: { key: string; versionId: string; isLatest: boolean; marker: boolean }[] = [];
  const prefixes: string[] = [];
  let keyMarker: string | undefined;
  let versionIdMarker: string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const r: ListVersionsResult = await store.listVersions(bucket, {
      ...extra,
      maxKeys,
      ...(keyMarker !== undefined ? { keyMarker } : {}),
      ...(versionIdMarker !== undefined ? { versionIdMarker } : {}),
    });
    versions.push(...r.versions.map((v) => ({ key: v.key, versionId: v.versionId, isLatest: v.isLatest, marker: v.version.deleteMarker })));
    prefixes.push(...r.commonPrefixes);
    expect(r.versions.length + r.commonPrefixes.length).toBeLessThanOrEqual(maxKeys);
    if (!r.isTruncated) return { versions, prefixes };
    keyMarker = r.nextKeyMarker;
    versionIdMarker = r.nextVersionIdMarker;
  }
  throw new Error('listing did not end');
}

describe.each(['memory', 'fs'] as const)('version log on %s', (kind) => {
  it('gives each write of an Enabled bucket an ordered, parseable id and keeps every version readable', async () => {
    const { store } = await open(kind);
    await store.createBucket('vbk');
    await store.putVersioning('vbk', 'Enabled');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await put(store, 'vbk', 'k', `body ${i}`)).versionId);
    expect(new Set(ids).size).toBe(5);
    const positions = ids.map((id) => parseVersionId(id)!);
    for (let i = 1; i < positions.length; i++) expect(positions[i]!.seq).toBeGreaterThan(positions[i - 1]!.seq);
    expect(ids.map((id) => formatVersionId(parseVersionId(id)!))).toEqual(ids);
    for (const [i, id] of ids.entries()) expect(await text((await store.getObject('vbk', 'k', { versionId: id })).body)).toBe(`body ${i}`);
    expect(await text((await store.getObject('vbk', 'k')).body)).toBe('body 4');
    const list = await store.listVersions('vbk');
    expect(list.versions.map((v) => v.versionId)).toEqual([...ids].reverse());
    expect(list.versions.map((v) => v.isLatest)).toEqual([true, false, false, false, false]);
    expect((await store.getVersion('vbk', 'k', ids[4]!)).isLatest).toBe(true);
    expect((await store.getVersion('vbk', 'k', ids[0]!)).isLatest).toBe(false);
    await expect(store.getObject('vbk', 'k', { versionId: 'null' })).rejects.toMatchObject({ code: 'NoSuchVersion' });
    await expect(store.getObject('vbk', 'k', { versionId: formatVersionId({ seq: 999999, index: 0 }) })).rejects.toMatchObject({ code: 'NoSuchVersion' });
    for (const bad of ['', 'x', 'NULL', '0'.repeat(17), '0'.repeat(19), 'g'.repeat(18), '../etc', '\u0000'.repeat(18)]) {
      await expect(store.getObject('vbk', 'k', { versionId: bad }), JSON.stringify(bad)).rejects.toMatchObject({ code: 'InvalidArgument' });
    }
    // An id of another key is no version of this one.
    const other = (await put(store, 'vbk', 'other', 'x')).versionId;
    await expect(store.getVersion('vbk', 'k', other)).rejects.toMatchObject({ code: 'NoSuchVersion' });
  });

  it('gives writes in a bucket never versioned the null id, shows one null version per key, and keeps the history', async () => {
    const { store } = await open(kind);
    await store.createBucket('plain');
    const first = await put(store, 'plain', 'k', 'one');
    const t1 = first.version.lastModified;
    await new Promise((r) => setTimeout(r, 5));
    const second = await put(store, 'plain', 'k', 'two');
    expect(first.versionId).toBe('null');
    expect(second.versionId).toBe('null');
    expect(second.version.logId).toMatch(/^[0-9a-f]{18}$/);
    const list = await store.listVersions('plain');
    expect(list.versions.map((v) => [v.key, v.versionId, v.isLatest])).toEqual([['k', 'null', true]]);
    expect(await text((await store.getObject('plain', 'k', { versionId: 'null' })).body)).toBe('two');
    // As of the first write's time, the key was the first body (history kept for point-in-time).
    const past = await store.versionAt('plain', 'k', t1);
    expect(past?.record?.md5).toEqual(first.version.md5);
    expect(await store.versionAt('plain', 'k', t1 - 1)).toBeUndefined();
    // An unversioned DELETE leaves nothing S3 shows, and no marker.
    const del = await store.deleteObject('plain', 'k');
    expect(del).toMatchObject({ existed: true });
    expect(del.deleteMarker).toBeUndefined();
    expect((await store.listVersions('plain')).versions).toEqual([]);
    const gone = await store.getObject('plain', 'k').catch((e) => e);
    expect(gone.code).toBe('NoSuchKey');
    expect(deleteMarkerOf(gone)).toBeUndefined();
    expect((await store.versionAt('plain', 'k', Date.now() + 1000))?.entry.kind).toBe('absence');
    expect((await store.versionAt('plain', 'k', second.version.lastModified))?.record?.md5).toEqual(second.version.md5);
    // Deleting a missing key records nothing.
    expect(await store.deleteObject('plain', 'never')).toMatchObject({ existed: false });
    await store.deleteBucket('plain');
  });

  it('makes delete markers in Enabled buckets: 404 with the marker, 405 by id, removable to bring the object back', async () => {
    const { store } = await open(kind);
    await store.createBucket('dmk');
    await store.putVersioning('dmk', 'Enabled');
    const v1 = await put(store, 'dmk', 'k', 'v1');
    const del = await store.deleteObject('dmk', 'k');
    expect(del.deleteMarker).toBe(true);
    expect(parseVersionId(del.versionId!)).toBeDefined();
    const err = await store.getObject('dmk', 'k').catch((e) => e);
    expect(err.code).toBe('NoSuchKey');
    expect(deleteMarkerOf(err)?.versionId).toBe(del.versionId);
    const byId = await store.headObject('dmk', 'k', { versionId: del.versionId! }).catch((e) => e);
    expect(byId.code).toBe('MethodNotAllowed');
    expect(deleteMarkerOf(byId)?.versionId).toBe(del.versionId);
    expect((await store.listObjects('dmk')).contents).toEqual([]);
    // A second DELETE stacks another marker (as S3 does).
    const del2 = await store.deleteObject('dmk', 'k');
    let list = await store.listVersions('dmk');
    expect(list.versions.map((v) => [v.versionId, v.isLatest, v.version.deleteMarker])).toEqual([
      [del2.versionId, true, true],
      [del.versionId, false, true],
      [v1.versionId, false, false],
    ]);
    // The bucket is not empty while versions or markers remain.
    await expect(store.deleteBucket('dmk')).rejects.toMatchObject({ code: 'BucketNotEmpty' });
    const r2 = await store.deleteObject('dmk', 'k', undefined, { versionId: del2.versionId! });
    expect(r2).toMatchObject({ existed: true, deleteMarker: true });
    expect((await store.getObject('dmk', 'k').catch((e) => e)).code).toBe('NoSuchKey');
    await store.removeVersion('dmk', 'k', del.versionId!);
    expect(await text((await store.getObject('dmk', 'k')).body)).toBe('v1');
    list = await store.listVersions('dmk');
    expect(list.versions.map((v) => [v.versionId, v.isLatest])).toEqual([[v1.versionId, true]]);
    // Removing a version that is gone is a no-op success; a malformed id is refused.
    expect(await store.removeVersion('dmk', 'k', del.versionId!)).toMatchObject({ removed: false });
    await expect(store.removeVersion('dmk', 'k', 'bogus')).rejects.toMatchObject({ code: 'InvalidArgument' });
    await store.removeVersion('dmk', 'k', v1.versionId);
    await expect(store.getObject('dmk', 'k')).rejects.toMatchObject({ code: 'NoSuchKey' });
    expect((await store.listVersions('dmk')).versions).toEqual([]);
    await store.deleteBucket('dmk');
  });

  it('replaces only the null version in a Suspended bucket and keeps the versions made while Enabled', async () => {
    const { store } = await open(kind);
    await store.createBucket('sus');
    const n0 = await put(store, 'sus', 'k', 'null before versioning');
    await store.putVersioning('sus', 'Enabled');
    const a = await put(store, 'sus', 'k', 'a');
    const b = await put(store, 'sus', 'k', 'b');
    let list = await store.listVersions('sus');
    expect(list.versions.map((v) => v.versionId)).toEqual([b.versionId, a.versionId, 'null']);
    expect(await text((await store.getObject('sus', 'k', { versionId: 'null' })).body)).toBe('null before versioning');
    await store.putVersioning('sus', 'Suspended');
    const n1 = await put(store, 'sus', 'k', 'n1');
    expect(n1.versionId).toBe('null');
    list = await store.listVersions('sus');
    // The new null write replaced the old null version; a and b stay.
    expect(list.versions.map((v) => [v.versionId, v.isLatest])).toEqual([
      ['null', true],
      [b.versionId, false],
      [a.versionId, false],
    ]);
    expect(await text((await store.getObject('sus', 'k', { versionId: 'null' })).body)).toBe('n1');
    // DELETE in a Suspended bucket: a null delete marker that replaces the null version.
    const del = await store.deleteObject('sus', 'k');
    expect(del).toMatchObject({ deleteMarker: true, versionId: 'null' });
    list = await store.listVersions('sus');
    expect(list.versions.map((v) => [v.versionId, v.version.deleteMarker, v.isLatest])).toEqual([
      ['null', true, true],
      [b.versionId, false, false],
      [a.versionId, false, false],
    ]);
    // Removing the null marker makes b current again.
    await store.removeVersion('sus', 'k', 'null');
    expect(await text((await store.getObject('sus', 'k')).body)).toBe('b');
    await expect(store.getVersion('sus', 'k', 'null')).rejects.toMatchObject({ code: 'NoSuchVersion' });
    // Every write remains in history: as of n0's time, n0.
    expect((await store.versionAt('sus', 'k', n0.version.lastModified))?.record?.md5).toEqual(n0.version.md5);
  });

  it('rewrites one version (tags, ACL) without touching the others or the current one', async () => {
    const { store } = await open(kind);
    await store.createBucket('tgk');
    await store.putVersioning('tgk', 'Enabled');
    const a = await put(store, 'tgk', 'k', 'a');
    const b = await put(store, 'tgk', 'k', 'b');
    expect(await store.putObjectTagging('tgk', 'k', { old: 'yes' }, a.versionId)).toBe(a.versionId);
    expect(await store.getObjectTagging('tgk', 'k', a.versionId)).toEqual({ old: 'yes' });
    expect(await store.getObjectTagging('tgk', 'k')).toEqual({});
    await store.putObjectTagging('tgk', 'k', { cur: '1' });
    expect((await store.version('tgk', 'k')).tags).toEqual({ cur: '1' });
    expect(await store.getObjectTagging('tgk', 'k', b.versionId)).toEqual({ cur: '1' });
    expect((await store.getVersion('tgk', 'k', a.versionId)).version.tags).toEqual({ old: 'yes' });
    await store.putObjectAcl('tgk', 'k', 'public-read', a.versionId);
    expect((await store.getVersion('tgk', 'k', a.versionId)).version.access).toEqual({ acl: 'public-read' });
    expect((await store.version('tgk', 'k')).access).toBeUndefined();
    // The versions keep their ids and bodies.
    expect(await text((await store.getObject('tgk', 'k', { versionId: a.versionId })).body)).toBe('a');
    const del = await store.deleteObject('tgk', 'k');
    await expect(store.putObjectTagging('tgk', 'k', {}, del.versionId!)).rejects.toMatchObject({ code: 'MethodNotAllowed' });
    await expect(store.putObjectTagging('tgk', 'k', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
    await expect(store.putObjectTagging('tgk', 'k', {}, formatVersionId({ seq: 1, index: 7 }))).rejects.toMatchObject({ code: 'NoSuchVersion' });
  });

  it('copies an old version (restore) and removes versions in a DeleteObjects batch', async () => {
    const { store } = await open(kind);
    await store.createBucket('cpk');
    await store.putVersioning('cpk', 'Enabled');
    const a = await put(store, 'cpk', 'k', 'original');
    await put(store, 'cpk', 'k', 'oops');
    const restored = await store.copyObject({ bucket: 'cpk', key: 'k', versionId: a.versionId }, { bucket: 'cpk', key: 'k' });
    expect(restored.copySourceVersionId).toBe(a.versionId);
    expect(restored.versionId).not.toBe(a.versionId);
    expect(await text((await store.getObject('cpk', 'k')).body)).toBe('original');
    const marker = await store.deleteObject('cpk', 'm');
    await expect(store.copyObject({ bucket: 'cpk', key: 'm', versionId: marker.versionId! }, { bucket: 'cpk', key: 'x' })).rejects.toMatchObject({ code: 'InvalidRequest' });
    const all = await store.listVersions('cpk');
    const res = await store.deleteObjects(
      'cpk',
      [...all.versions.map((v) => ({ key: v.key, versionId: v.versionId })), { key: 'k', versionId: 'not-an-id' }]
    );
    expect(res.filter((r) => r.error).map((r) => r.error!.code)).toEqual(['InvalidArgument']);
    expect(res.filter((r) => !r.error).every((r) => r.existed)).toBe(true);
    expect((await store.listVersions('cpk')).versions).toEqual([]);
    await store.deleteBucket('cpk');
  });

  it('pages ListObjectVersions by key-marker and version-id-marker, with prefix and delimiter', async () => {
    const { store } = await open(kind);
    await store.createBucket('pgk');
    await put(store, 'pgk', 'a/null-only', 'x');
    await store.putVersioning('pgk', 'Enabled');
    const expected: [string, string][] = [];
    for (const key of ['a/1', 'a/2', 'b', 'c/d/e', 'a/null-only']) {
      for (let i = 0; i < 3; i++) expected.push([key, (await put(store, 'pgk', key, `${key}#${i}`)).versionId]);
    }
    await store.deleteObject('pgk', 'b');
    await store.putVersioning('pgk', 'Suspended');
    await put(store, 'pgk', 'c/d/e', 'null now');
    const full = await listAll(store, 'pgk', 1000);
    for (const n of [1, 2, 3, 7]) expect(await listAll(store, 'pgk', n), `page ${n}`).toEqual(full);
    expect(full.versions.filter((v) => v.key === 'a/null-only').map((v) => v.versionId).at(-1)).toBe('null');
    expect(full.versions.filter((v) => v.isLatest).map((v) => v.key)).toEqual(['a/1', 'a/2', 'a/null-only', 'b', 'c/d/e']);
    expect(full.versions.find((v) => v.key === 'b')).toMatchObject({ marker: true, isLatest: true });
    const delim = await listAll(store, 'pgk', 1, { delimiter: '/' });
    expect(delim.prefixes).toEqual(['a/', 'c/']);
    expect(delim.versions.map((v) => v.key)).toEqual(['b', 'b', 'b', 'b']);
    const pre = await listAll(store, 'pgk', 2, { prefix: 'c/', delimiter: '/' });
    expect(pre).toEqual({ versions: [], prefixes: ['c/d/'] });
    const inner = await listAll(store, 'pgk', 2, { prefix: 'c/d/' });
    expect(inner.versions.map((v) => v.versionId)).toEqual(['null', ...expected.filter(([k]) => k === 'c/d/e').map(([, id]) => id).reverse()]);
    await expect(store.listVersions('pgk', { versionIdMarker: expected[0]![1] })).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(store.listVersions('pgk', { keyMarker: 'a/1', versionIdMarker: 'zzz' })).rejects.toMatchObject({ code: 'InvalidArgument' });
  });

  it('keeps every version across replay, checkpoints, compaction and reopen', async () => {
    const { store, reopen } = await open(kind, { maxRuns: 2 });
    await store.createBucket('dur');
    await put(store, 'dur', 'plain', 'p0');
    await store.putVersioning('dur', 'Enabled');
    const written: { key: string; id: string; body: string }[] = [];
    for (let round = 0; round < 6; round++) {
      for (const key of ['x', 'y']) {
        const body = `${key}-${round}`;
        written.push({ key, id: (await put(store, 'dur', key, body)).versionId, body });
      }
      if (round % 2 === 1) await store.checkpoint();
    }
    await store.deleteObject('dur', 'y');
    const before = await listAll(store, 'dur', 1000);
    await store.close();
    let again = await reopen(); // replays the commits after the last root
    expect(await listAll(again, 'dur', 1000)).toEqual(before);
    await again.checkpoint();
    expect(again.repo.state.buckets.get('dur')!.versions.runs.length).toBeLessThanOrEqual(3);
    await again.close();
    again = await reopen(); // from the root alone
    expect(await listAll(again, 'dur', 1000)).toEqual(before);
    for (const w of written) expect(await text((await again.getObject('dur', w.key, { versionId: w.id })).body)).toBe(w.body);
    expect(await text((await again.getObject('dur', 'plain', { versionId: 'null' })).body)).toBe('p0');
    await again.close();
  });
});

describe('version log cost', () => {
  it('stores one O(1) entry per overwrite: commit bytes do not grow with the number of versions', async () => {
    const { store } = await open('memory');
    await store.createBucket('o1k');
    await store.putVersioning('o1k', 'Enabled');
    const sizes: number[] = [];
    const repo = store.repo;
    const provider = repo.provider;
    const origPut = provider.put.bind(provider);
    provider.put = (async (key: string, body: Parameters<typeof provider.put>[1], opts?: Parameters<typeof provider.put>[2]) => {
      if (key.startsWith('commits/')) sizes.push(opts?.contentLength ?? -1);
      return origPut(key, body, opts);
    }) as typeof provider.put;
    const body = new Uint8Array(0);
    const N = 3000;
    for (let i = 0; i < N; i++) await store.putObject('o1k', 'same', stream(body), { size: 0 });
    expect(sizes.length).toBe(N);
    // The first and the last commits differ by at most the varint growth of the sequence.
    expect(Math.max(...sizes.slice(-100))).toBeLessThanOrEqual(Math.min(...sizes.slice(0, 100)) + 4);
    expect((await store.listVersions('o1k', { maxKeys: 1000 })).versions).toHaveLength(1000);
  }, 60_000);
});
