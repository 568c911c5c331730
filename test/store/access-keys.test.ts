/**
 * Access keys in the repository: records, sealing, grants and bucket ownership.
 *
 * Proves that keys created, changed and deleted through the store survive a reopen both by
 * commit replay and from a checkpoint root (so several servers opening one repository see
 * the same keys); that a grant is tied to the bucket's identity (a bucket deleted and
 * re-created under the same name, by anyone, is not covered by the old grant); that the
 * creating key owns its bucket from the creating commit on, and a second CreateBucket is
 * 'BucketAlreadyOwnedByYou' for the owner and 'BucketAlreadyExists' for anyone else, also
 * within one batch; that deleting a key clears it as owner; that the key record codec
 * rejects truncated, trailing, oversized and hostile bytes; and that a sealed secret opens
 * only with the same master key and the same key id (never garbage), and holds no plaintext.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { Store } from '../../src/store/store.js';
import { StoreError } from '../../src/store/errors.js';
import {
  decodeKeyRecord,
  encodeKeyRecord,
  grantFor,
  KeyError,
  MAX_GRANTS_PER_KEY,
  tombstoneOf,
  type KeyRecord,
} from '../../src/store/keys-record.js';
import { createSealer } from '../../src/store/keys-seal.js';
import type { MasterKey } from '../../src/server/master-key.js';
import { prng } from '../support/random.js';
import { makeProvider } from './helpers.js';

const master = (byte: number, id = `m${byte}`): MasterKey => ({ key: Buffer.alloc(32, byte), id, source: 'test' });
const sealer = createSealer(master(1));

function newKey(id: string, extra: Partial<{ admin: boolean; createBucket: boolean; name: string }> = {}) {
  return {
    id,
    name: extra.name ?? `name of ${id}`,
    admin: extra.admin ?? false,
    createBucket: extra.createBucket ?? true,
    sealedBy: sealer.masterId,
    sealed: sealer.seal(id, `secret-of-${id}-0123456789`),
  };
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return (err as { code: string }).code;
  }
  throw new Error('expected a failure');
}

describe('keys in the repository', () => {
  for (const kind of ['memory', 'fs'] as const) {
    it(`survive reopen by replay and from a checkpoint (${kind})`, async () => {
      const { provider, reopen, cleanup } = await makeProvider(kind);
      try {
        let store = await Store.open(provider);
        await store.createBucket('kb-one', 'AKALICE01');
        await store.createBucket('kb-two');
        await store.createKey(newKey('AKALICE01', { admin: true }));
        await store.createKey(newKey('AKBOB0002', { admin: true, name: 'Bob' }));
        await store.createKey(newKey('AKCAROL03'));
        await store.changeKey('AKCAROL03', 'grant', { bucket: 'kb-two', read: true, write: true });
        await store.changeKey('AKCAROL03', 'revoke', { bucket: 'kb-two', write: true });
        await store.changeKey('AKCAROL03', 'grant', { createBucket: true, admin: true });
        await store.changeKey('AKCAROL03', 'revoke', { admin: true });
        await store.deleteKey('AKBOB0002');
        const expected = store.listKeys();
        expect(store.getKey('AKBOB0002')).toBeUndefined();
        expect(store.repo.state.keys.get('AKBOB0002')?.deleted).toBe(true);
        expect(expected.map((k) => k.id)).toEqual(['AKALICE01', 'AKCAROL03']);
        const carol = store.getKey('AKCAROL03')!;
        expect(carol.grants).toEqual([{ bucket: 'kb-two', bucketId: expect.any(String), read: true, write: false, owner: false }]);
        expect(carol.admin).toBe(false);
        expect(carol.createBucket).toBe(true);
        expect(store.bucketOwner('kb-one')).toBe('AKALICE01');
        expect(store.bucketOwner('kb-two')).toBeUndefined();
        await store.close();

        // Replay only (no checkpoint was written).
        store = await Store.open(await reopen());
        expect(store.listKeys()).toEqual(expected);
        expect(store.getKey('AKBOB0002')).toBeUndefined();
        expect(store.repo.state.keys.get('AKBOB0002')?.deleted).toBe(true);
        expect(store.bucketOwner('kb-one')).toBe('AKALICE01');
        await store.checkpoint();
        await store.close();

        // From the root.
        store = await Store.open(await reopen());
        expect(store.repo.seq).toBe(store.repo.rootSeq);
        expect(store.listKeys()).toEqual(expected);
        expect(store.repo.state.keys.get('AKBOB0002')?.deleted).toBe(true);
        expect(store.bucketOwner('kb-one')).toBe('AKALICE01');
        const opened = store.listKeys().map((k) => sealer.open(k.id, k.sealed));
        expect(opened).toEqual(['secret-of-AKALICE01-0123456789', 'secret-of-AKCAROL03-0123456789']);
        await store.close();
      } finally {
        cleanup();
      }
    });
  }

  it('refuses duplicates, unknown keys, empty changes and bucket flags without a bucket', async () => {
    const store = await Store.open(await createMemoryProvider({}));
    await store.createKey(newKey('AKDUP0001'));
    expect(await code(store.createKey(newKey('AKDUP0001')))).toBe('AccessKeyExists');
    expect(await code(store.changeKey('AKNOPE001', 'grant', { admin: true }))).toBe('NoSuchAccessKey');
    expect(await code(store.deleteKey('AKNOPE001'))).toBe('NoSuchAccessKey');
    expect(await code(store.changeKey('AKDUP0001', 'grant', {}))).toBe('InvalidKeyInput');
    expect(await code(store.changeKey('AKDUP0001', 'grant', { read: true }))).toBe('InvalidKeyInput');
    expect(await code(store.changeKey('AKDUP0001', 'grant', { bucket: 'nb-missing', read: true }))).toBe('NoSuchBucket');
    expect(await code(store.createKey(newKey('bad id!')))).toBe('InvalidKeyInput');
    expect(await code(store.createKey(newKey('AKNAME001', { name: 'x'.repeat(129) })))).toBe('InvalidKeyInput');
    expect(await code(store.createKey(newKey('AKNAME002', { name: 'tab\there' })))).toBe('InvalidKeyInput');
    expect(store.listKeys().map((k) => k.id)).toEqual(['AKDUP0001']);
    await store.close();
  });

  it('a deleted key leaves a tombstone: no key, no secret, refused by every change, replaced only by a create', async () => {
    const store = await Store.open(await createMemoryProvider({}));
    await store.createKey(newKey('AKADMIN01', { admin: true }));
    await store.createKey(newKey('AKGONE001', { admin: true }));
    await store.createBucket('kb-tomb', 'AKGONE001');
    await store.changeKey('AKGONE001', 'grant', { bucket: 'kb-tomb', read: true });
    await store.deleteKey('AKGONE001');
    const tomb = store.repo.state.keys.get('AKGONE001')!;
    expect(tomb).toMatchObject({ id: 'AKGONE001', deleted: true, admin: false, createBucket: false, grants: [] });
    expect(tomb.sealed).toHaveLength(0);
    expect(store.getKey('AKGONE001')).toBeUndefined();
    expect(store.listKeys().map((k) => k.id)).toEqual(['AKADMIN01']);
    expect(await code(store.deleteKey('AKGONE001'))).toBe('NoSuchAccessKey');
    expect(await code(store.changeKey('AKGONE001', 'grant', { admin: true }))).toBe('NoSuchAccessKey');
    // The tombstone never counts as the other admin.
    expect(await code(store.deleteKey('AKADMIN01'))).toBe('LastAdmin');
    await store.createKey(newKey('AKGONE001'));
    expect(store.getKey('AKGONE001')).toMatchObject({ admin: false, grants: [] });
    expect(store.getKey('AKGONE001')!.deleted).toBeUndefined();
    expect(store.bucketOwner('kb-tomb')).toBeUndefined();
    await store.close();
  });

  it('keeps at least one admin key', async () => {
    const store = await Store.open(await createMemoryProvider({}));
    await store.createKey(newKey('AKADMIN01', { admin: true }));
    await store.createKey(newKey('AKPLAIN01'));
    expect(await code(store.deleteKey('AKADMIN01'))).toBe('LastAdmin');
    expect(await code(store.changeKey('AKADMIN01', 'revoke', { admin: true }))).toBe('LastAdmin');
    await store.changeKey('AKPLAIN01', 'grant', { admin: true });
    await store.changeKey('AKADMIN01', 'revoke', { admin: true });
    expect(await code(store.deleteKey('AKPLAIN01'))).toBe('LastAdmin');
    await store.deleteKey('AKADMIN01');
    expect(store.listKeys().map((k) => [k.id, k.admin])).toEqual([['AKPLAIN01', true]]);
    await store.close();
  });

  it('a grant does not follow a bucket name to a re-created bucket', async () => {
    const store = await Store.open(await createMemoryProvider({}));
    await store.createKey(newKey('AKGRANT01'));
    await store.createBucket('kb-reborn');
    await store.changeKey('AKGRANT01', 'grant', { bucket: 'kb-reborn', read: true, write: true });
    const before = store.repo.state.buckets.get('kb-reborn')!;
    expect(grantFor(store.getKey('AKGRANT01')!, 'kb-reborn', before.id)).toBeDefined();
    await store.deleteBucket('kb-reborn');
    await store.createBucket('kb-reborn', 'AKSOMEONE');
    const after = store.repo.state.buckets.get('kb-reborn')!;
    expect(after.id).not.toBe(before.id);
    expect(grantFor(store.getKey('AKGRANT01')!, 'kb-reborn', after.id)).toBeUndefined();
    // The next change of the key drops the stale grant.
    await store.changeKey('AKGRANT01', 'grant', { createBucket: true });
    expect(store.getKey('AKGRANT01')!.grants).toEqual([]);
    await store.close();
  });

  it('caps the grants of one key', async () => {
    const store = await Store.open(await createMemoryProvider({}));
    await store.createKey(newKey('AKMANY001'));
    const record = store.getKey('AKMANY001')!;
    const many: KeyRecord = { ...record, grants: Array.from({ length: MAX_GRANTS_PER_KEY + 1 }, (_, i) => ({ bucket: `b${i}`, bucketId: 'x', read: true, write: false, owner: false })) };
    expect(() => decodeKeyRecord(encodeKeyRecord(many))).toThrow(StoreError);
    await store.close();
  });
});

describe('bucket ownership', () => {
  it('the creator owns the bucket; others get BucketAlreadyExists', async () => {
    const store = await Store.open(await createMemoryProvider({}));
    await store.createBucket('kb-owned', 'AKOWNER01');
    expect(store.bucketOwner('kb-owned')).toBe('AKOWNER01');
    expect(await code(store.createBucket('kb-owned', 'AKOWNER01'))).toBe('BucketAlreadyOwnedByYou');
    expect(await code(store.createBucket('kb-owned', 'AKOTHER01'))).toBe('BucketAlreadyExists');
    // No owner given (store-level callers): the legacy answer.
    expect(await code(store.createBucket('kb-owned'))).toBe('BucketAlreadyOwnedByYou');
    await store.close();
  });

  it('two creations of one name in one batch: the second sees the first owner', async () => {
    const store = await Store.open(await createMemoryProvider({}));
    const results = await Promise.allSettled([
      store.createBucket('kb-race', 'AKFIRST01'),
      store.createBucket('kb-race', 'AKSECOND2'),
      store.createBucket('kb-race', 'AKFIRST01'),
    ]);
    expect(results[0]!.status).toBe('fulfilled');
    expect((results[1] as PromiseRejectedResult).reason.code).toBe('BucketAlreadyExists');
    expect((results[2] as PromiseRejectedResult).reason.code).toBe('BucketAlreadyOwnedByYou');
    expect(store.bucketOwner('kb-race')).toBe('AKFIRST01');
    await store.close();
  });

  it('deleting a key clears it as owner, so a re-created id inherits nothing', async () => {
    const store = await Store.open(await createMemoryProvider({}));
    await store.createKey(newKey('AKLEAVE01'));
    await store.createBucket('kb-left-a', 'AKLEAVE01');
    await store.createBucket('kb-left-b', 'AKLEAVE01');
    await store.createBucket('kb-kept', 'AKSTAY001');
    const { owned } = await store.deleteKey('AKLEAVE01');
    expect(owned).toEqual(['kb-left-a', 'kb-left-b']);
    expect(store.bucketOwner('kb-left-a')).toBeUndefined();
    expect(store.bucketOwner('kb-kept')).toBe('AKSTAY001');
    await store.createKey(newKey('AKLEAVE01'));
    expect(store.bucketOwner('kb-left-b')).toBeUndefined();
    await store.close();
  });

  it('a deleted and re-created bucket has no owner left from before', async () => {
    const store = await Store.open(await createMemoryProvider({}));
    await store.createBucket('kb-again', 'AKFIRST01');
    await store.deleteBucket('kb-again');
    await store.createBucket('kb-again');
    expect(store.bucketOwner('kb-again')).toBeUndefined();
    await store.close();
  });
});

describe('key record codec', () => {
  const sample: KeyRecord = {
    id: 'AKCODEC01',
    name: 'codec ünïcode',
    created: 1_700_000_000_000,
    admin: true,
    createBucket: false,
    sealedBy: 'abcdef0123456789',
    sealed: new Uint8Array([1, 2, 3, 4, 5]),
    grants: [
      { bucket: 'zz', bucketId: 'id2', read: false, write: true, owner: true },
      { bucket: 'aa', bucketId: 'id1', read: true, write: false, owner: false },
    ],
  };

  it('round-trips, with grants in canonical order', () => {
    const back = decodeKeyRecord(encodeKeyRecord(sample));
    expect(back).toEqual({ ...sample, grants: [sample.grants[1], sample.grants[0]] });
    expect(encodeKeyRecord(back)).toEqual(encodeKeyRecord(sample));
  });

  it('refuses every truncation, trailing bytes and unknown flags', () => {
    const bytes = encodeKeyRecord(sample);
    for (let n = 0; n < bytes.length; n++) expect(() => decodeKeyRecord(bytes.subarray(0, n))).toThrow(StoreError);
    expect(() => decodeKeyRecord(Buffer.concat([bytes, Buffer.of(0)]))).toThrow(/trailing/);
    const flags = Buffer.from(bytes);
    flags[4 + 1 + sample.id.length + 1 + Buffer.byteLength(sample.name) + 6] = 0xff; // the flags byte
    expect(() => decodeKeyRecord(flags)).toThrow(StoreError);
  });

  it('never throws anything but StoreError on seeded random mutations', () => {
    const bytes = encodeKeyRecord(sample);
    const next = prng(7);
    for (let i = 0; i < 2000; i++) {
      const b = Buffer.from(bytes);
      for (let j = 0, n = 1 + (next() % 4); j < n; j++) b[next() % b.length] = next() & 0xff;
      try {
        const k = decodeKeyRecord(b);
        expect(typeof k.id).toBe('string');
      } catch (err) {
        expect(err).toBeInstanceOf(StoreError);
      }
    }
  });

  it('a tombstone round-trips; one carrying a secret, a capability or a grant is Corrupt', () => {
    const tomb = tombstoneOf(sample, 1_800_000_000_000);
    expect(decodeKeyRecord(encodeKeyRecord(tomb))).toEqual(tomb);
    for (const bad of [
      { ...tomb, admin: true },
      { ...tomb, createBucket: true },
      { ...tomb, sealed: new Uint8Array([1]) },
      { ...tomb, grants: [sample.grants[0]!] },
    ]) {
      expect(() => decodeKeyRecord(encodeKeyRecord(bad))).toThrow(/tombstone holds capabilities/);
    }
  });

  it('refuses a huge grant count without allocating for it', () => {
    const b = Buffer.from(encodeKeyRecord({ ...sample, grants: [] }));
    const withCount = Buffer.concat([b.subarray(0, b.length - 1), Buffer.of(0xff, 0xff, 0xff, 0x7f)]);
    expect(() => decodeKeyRecord(withCount)).toThrow(/grants cannot fit/);
  });
});

describe('sealed secrets', () => {
  it('open only with the same master key and key id; altered bytes fail', () => {
    const secret = 'my-Secret/Key+with=signs0123456789';
    const sealed = sealer.seal('AKSEAL001', secret);
    expect(Buffer.from(sealed).includes(Buffer.from(secret))).toBe(false);
    expect(sealer.open('AKSEAL001', sealed)).toBe(secret);
    const other = createSealer(master(2));
    expect(() => other.open('AKSEAL001', sealed)).toThrow(KeyError);
    expect(() => other.open('AKSEAL001', sealed)).toThrow(/does not open with master key m2/);
    expect(() => sealer.open('AKSEAL002', sealed)).toThrow(KeyError);
    for (let i = 0; i < sealed.length; i++) {
      const bad = Buffer.from(sealed);
      bad[i] ^= 0x01;
      expect(() => sealer.open('AKSEAL001', bad)).toThrow(KeyError);
    }
    expect(() => sealer.open('AKSEAL001', sealed.subarray(0, 20))).toThrow(KeyError);
    expect(() => sealer.open('AKSEAL001', new Uint8Array(0))).toThrow(KeyError);
  });

  it('two seals of one secret differ (fresh nonce)', () => {
    const a = sealer.seal('AKSEAL001', 'same-secret-value');
    const b = sealer.seal('AKSEAL001', 'same-secret-value');
    expect(Buffer.compare(Buffer.from(a), Buffer.from(b))).not.toBe(0);
    expect(sealer.open('AKSEAL001', b)).toBe('same-secret-value');
  });
});
