/**
 * A locked version is never removed: the removal hook (versions-remove.ts checkRemovable ->
 * object-lock.ts assertRemovable) on a real repository, through every permanent removal path
 * there is: Store.removeVersion, DELETE with a versionId (deleteObject), DeleteObjects with
 * VersionId, and stageRemoveVersion inside a commit of one's own, which is the path later
 * expiry and garbage collection must take (issue 10: add them to REMOVAL_PATHS below; a path
 * that removes versions without going through stageRemoveVersion must not exist).
 *
 * Also: a DELETE without a versionId only hides a locked version behind a delete marker; an
 * overwrite keeps it (versioning stays Enabled: it cannot be suspended); a lock survives a
 * reopen, tagging/ACL rewrites, and is changed only through the retention rules; a bucket
 * holding a locked version cannot be deleted; a retention that has ended no longer protects.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { StoreError } from '../../src/store/errors.js';
import { lockedBucketConfigs, type LockRequest } from '../../src/store/object-lock-config.js';
import { stageRemoveVersion } from '../../src/store/versions-remove.js';
import { makeProvider, stream } from './helpers.js';

const HOUR = 3_600_000;
const B = 'locked';

let cleanup: () => void = () => undefined;
afterEach(() => cleanup());

async function open() {
  const p = await makeProvider('fs');
  cleanup = p.cleanup;
  const store = await Store.open(p.provider);
  await store.createBucket(B, undefined, lockedBucketConfigs());
  return { store, reopen: async () => Store.open(await p.reopen()) };
}

const put = async (store: Store, key: string, lock?: LockRequest, body = 'abc') =>
  (await store.putObject(B, key, stream(Buffer.from(body)), { size: body.length, ...(lock ? { lock } : {}) })).version.versionId;

const until = (ms: number) => Date.now() + ms;

/** Every way a version can be removed permanently; each resolves to 'removed' or an error code. */
type Removal = (store: Store, key: string, versionId: string, bypass: boolean) => Promise<string>;
const outcome = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
    return 'removed';
  } catch (err) {
    if (err instanceof StoreError) return err.code;
    throw err;
  }
};
const REMOVAL_PATHS: Record<string, Removal> = {
  removeVersion: (s, k, v, bypass) => outcome(s.removeVersion(B, k, v, { bypassGovernance: bypass })),
  'DELETE ?versionId': (s, k, v, bypass) => outcome(s.deleteObject(B, k, undefined, { versionId: v, bypassGovernance: bypass })),
  'DeleteObjects VersionId': async (s, k, v, bypass) => {
    const [r] = await s.deleteObjects(B, [{ key: k, versionId: v, bypassGovernance: bypass }]);
    return r!.error ? r!.error.code : 'removed';
  },
  // What expiry and GC will use: the staged removal inside a commit of their own.
  stageRemoveVersion: (s, k, v, bypass) => outcome(s.repo.run((tx) => stageRemoveVersion(tx, B, k, v, { bypassGovernance: bypass }))),
};

describe('every removal path honours the lock', () => {
  const cases: [string, LockRequest, boolean, string][] = [
    ['legal hold', { legalHold: true }, true, 'AccessDenied'],
    ['COMPLIANCE', { retention: { mode: 'COMPLIANCE', retainUntil: until(HOUR) } }, true, 'AccessDenied'],
    ['GOVERNANCE without bypass', { retention: { mode: 'GOVERNANCE', retainUntil: until(HOUR) } }, false, 'AccessDenied'],
    ['GOVERNANCE with bypass', { retention: { mode: 'GOVERNANCE', retainUntil: until(HOUR) } }, true, 'removed'],
    ['GOVERNANCE + legal hold with bypass', { retention: { mode: 'GOVERNANCE', retainUntil: until(HOUR) }, legalHold: true }, true, 'AccessDenied'],
    ['legal hold OFF', { legalHold: false }, false, 'removed'],
  ];
  for (const [path, remove] of Object.entries(REMOVAL_PATHS)) {
    it(`${path}: refused while locked, the version intact after a reopen`, async () => {
      const { store, reopen } = await open();
      const ids: Record<string, string> = {};
      for (const [name, lock] of cases) ids[name] = await put(store, name, lock, `body of ${name}`);
      for (const [name, , bypass, want] of cases) expect(await remove(store, name, ids[name]!, bypass), name).toBe(want);
      await store.close();
      const again = await reopen();
      for (const [name, , , want] of cases) {
        const got = await outcome(again.getVersion(B, name, ids[name]!));
        expect(got, name).toBe(want === 'removed' ? 'NoSuchVersion' : 'removed');
      }
      await again.close();
    });
  }

  it('a retention that has ended protects nothing; one extended in time keeps protecting', async () => {
    const { store } = await open();
    const ended = await put(store, 'ended', { retention: { mode: 'COMPLIANCE', retainUntil: until(300) } });
    const kept = await put(store, 'kept', { retention: { mode: 'COMPLIANCE', retainUntil: until(300) } });
    await store.putObjectRetention(B, 'kept', kept, { mode: 'COMPLIANCE', retainUntil: until(HOUR) }, { bypassGovernance: false });
    expect(await REMOVAL_PATHS.removeVersion!(store, 'ended', ended, false)).toBe('AccessDenied');
    await new Promise((r) => setTimeout(r, 400));
    expect(await REMOVAL_PATHS.removeVersion!(store, 'ended', ended, false)).toBe('removed');
    expect(await REMOVAL_PATHS.removeVersion!(store, 'kept', kept, false)).toBe('AccessDenied');
    await store.close();
  });

  it('DeleteObjects: a locked target fails alone, the others are removed; bypass is per target', async () => {
    const { store } = await open();
    const a = await put(store, 'a', { retention: { mode: 'GOVERNANCE', retainUntil: until(HOUR) } });
    const b = await put(store, 'b');
    const c = await put(store, 'c', { retention: { mode: 'GOVERNANCE', retainUntil: until(HOUR) } });
    const res = await store.deleteObjects(B, [{ key: 'a', versionId: a, bypassGovernance: false }, { key: 'b', versionId: b }, { key: 'c', versionId: c }], { bypassGovernance: true });
    expect(res.map((r) => r.error?.code ?? 'removed')).toEqual(['AccessDenied', 'removed', 'removed']);
    await store.close();
  });
});

describe('what may still happen to a locked version', () => {
  it('a DELETE without versionId hides it behind a delete marker; an overwrite keeps it; both stay readable by id', async () => {
    const { store } = await open();
    const v1 = await put(store, 'k', { retention: { mode: 'COMPLIANCE', retainUntil: until(HOUR) } }, 'one');
    const v2 = await put(store, 'k', undefined, 'two');
    const del = await store.deleteObject(B, 'k');
    expect(del.deleteMarker).toBe(true);
    const listed = (await store.listVersions(B)).versions.map((v) => [v.versionId, v.version.deleteMarker, v.version.lock?.mode]);
    expect(listed).toEqual([
      [del.versionId, true, undefined],
      [v2, false, undefined],
      [v1, false, 'COMPLIANCE'],
    ]);
    // The marker itself carries no lock: removing it brings the object back.
    expect(await REMOVAL_PATHS.removeVersion!(store, 'k', del.versionId!, false)).toBe('removed');
    expect((await store.version(B, 'k')).versionId).toBe(v2);
    // A marker has no retention to read or set (405).
    const marker = (await store.deleteObject(B, 'k')).versionId!;
    await expect(store.putObjectRetention(B, 'k', marker, { mode: 'GOVERNANCE', retainUntil: until(HOUR) }, { bypassGovernance: true })).rejects.toMatchObject({ code: 'MethodNotAllowed' });
    await expect(store.lockedVersion(B, 'k', marker)).rejects.toMatchObject({ code: 'MethodNotAllowed' });
    await store.close();
  });

  it('an older version is locked by its id; tagging and ACL rewrites never change a lock', async () => {
    const { store } = await open();
    const old = await put(store, 'k', undefined, 'old');
    await put(store, 'k', undefined, 'new');
    await store.putObjectRetention(B, 'k', old, { mode: 'GOVERNANCE', retainUntil: until(HOUR) }, { bypassGovernance: false });
    await store.putObjectLegalHold(B, 'k', old, true);
    expect((await store.lockedVersion(B, 'k', undefined)).lock).toBeUndefined();
    await store.putObjectTagging(B, 'k', { t: '1' }, old);
    await store.putObjectAcl(B, 'k', 'public-read', old);
    // Even a rewrite that drops the field keeps the lock.
    await store.updateVersion(B, 'k', old, (v) => ({ ...v, lock: undefined as never }));
    const v = await store.lockedVersion(B, 'k', old);
    expect(v.lock).toMatchObject({ mode: 'GOVERNANCE', legalHold: true });
    expect(v.tags).toEqual({ t: '1' });
    expect(await REMOVAL_PATHS.removeVersion!(store, 'k', old, true)).toBe('AccessDenied');
    await store.close();
  });

  it('versioning stays Enabled on a lock-enabled bucket; lock can be enabled on a versioned bucket, then it stays too', async () => {
    const { store } = await open();
    await expect(store.putVersioning(B, 'Suspended')).rejects.toMatchObject({ code: 'InvalidBucketState' });
    await store.putVersioning(B, 'Enabled');
    expect(store.getVersioning(B)).toBe('Enabled');
    await store.createBucket('later');
    await store.putVersioning('later', 'Enabled');
    await store.putBucketLockConfig('later', { rule: { mode: 'GOVERNANCE', days: 1 } });
    await expect(store.putVersioning('later', 'Suspended')).rejects.toMatchObject({ code: 'InvalidBucketState' });
    await store.close();
  });

  it('a bucket holding a locked version cannot be deleted, even with only delete markers current', async () => {
    const { store } = await open();
    await put(store, 'k', { legalHold: true });
    await store.deleteObject(B, 'k');
    await expect(store.deleteBucket(B)).rejects.toMatchObject({ code: 'BucketNotEmpty' });
    expect(store.headBucket(B).name).toBe(B);
    await store.close();
  });
});
