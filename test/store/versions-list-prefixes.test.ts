/**
 * ListObjectVersions with a delimiter lists a common prefix only when something S3 shows lies
 * under it. Regression (found by the model-based history test, seed 24839): the version log
 * keeps history that S3 never shows — a never-versioned DELETE's absence, a version removed by
 * id, a replaced null write — and the first log entry under a prefix made it a common prefix,
 * so a deleted directory still appeared in ListObjectVersions (and a client walking it found
 * nothing inside).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { makeProvider, stream } from './helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function open(): Promise<Store> {
  const p = await makeProvider('memory');
  cleanups.push(p.cleanup);
  // Checkpoint after every commit: entries come from runs as well as from the overlay.
  return Store.open(p.provider, { checkpointEvery: 1 });
}

async function put(store: Store, key: string, body = 'x') {
  const b = new TextEncoder().encode(body);
  return store.putObject('bkt', key, stream(b), { size: b.length });
}

async function prefixes(store: Store, prefix = '', maxKeys = 1000): Promise<string[]> {
  const out: string[] = [];
  let keyMarker: string | undefined;
  for (let i = 0; i < 100; i++) {
    const r = await store.listVersions('bkt', { prefix, delimiter: '/', maxKeys, ...(keyMarker ? { keyMarker } : {}) });
    out.push(...r.commonPrefixes, ...r.versions.map((v) => `${v.key} ${v.versionId}`));
    if (!r.isTruncated) return out;
    keyMarker = r.nextKeyMarker;
  }
  throw new Error('listing never ends');
}

describe('ListObjectVersions common prefixes', () => {
  it('a never-versioned bucket: a prefix whose keys were all deleted is not listed', async () => {
    const store = await open();
    await store.createBucket('bkt');
    await put(store, 'gone/a');
    await put(store, 'gone/b');
    await put(store, 'kept/a');
    await store.deleteObject('bkt', 'gone/a');
    await store.deleteObject('bkt', 'gone/b');
    expect(await prefixes(store)).toEqual(['kept/']);
    expect(await prefixes(store, '', 1)).toEqual(['kept/']);
    await store.close();
  });

  it('a versioned bucket: a prefix whose versions were all removed by id is not listed; a delete marker keeps it', async () => {
    const store = await open();
    await store.createBucket('bkt');
    await store.putVersioning('bkt', 'Enabled');
    const a = await put(store, 'gone/a');
    const b1 = await put(store, 'gone/b');
    const b2 = await put(store, 'gone/b', 'y');
    await put(store, 'marked/a');
    await store.deleteObject('bkt', 'marked/a');
    for (const [key, id] of [['gone/a', a.versionId], ['gone/b', b1.versionId], ['gone/b', b2.versionId]] as const) {
      await store.deleteObject('bkt', key, undefined, { versionId: id });
    }
    expect(await prefixes(store)).toEqual(['marked/']);
    // Paged one entry at a time, from a key marker inside the removed prefix.
    expect(await prefixes(store, '', 1)).toEqual(['marked/']);
    await store.close();
  });

  it('a Suspended bucket: replaced null writes do not make a prefix, a visible one does', async () => {
    const store = await open();
    await store.createBucket('bkt');
    await store.putVersioning('bkt', 'Suspended');
    await put(store, 'n/a/x');
    await put(store, 'n/a/x', 'again');
    await store.deleteObject('bkt', 'n/a/x', undefined, { versionId: 'null' });
    await put(store, 'n/b/y');
    expect(await prefixes(store, 'n/')).toEqual(['n/b/']);
    await store.close();
  });
});
