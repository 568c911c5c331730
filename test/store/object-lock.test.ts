/**
 * Object Lock in the store: the retention rules as a table (every mode x state x request),
 * the record and configuration forms (round trips, and corrupt bytes refused), the default
 * retention's arithmetic, and the store operations on a real repository: a lock-enabled
 * bucket, versions written with a lock by PUT / multipart / copy, retention changes checked
 * at the commit's time, and everything surviving a reopen.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { StoreError } from '../../src/store/errors.js';
import {
  activeRetention,
  assertRemovable,
  assertRetentionChange,
  checkRetainUntil,
  decodeObjectLock,
  encodeObjectLock,
  isLocked,
  MAX_RETAIN_UNTIL_MS,
  withLegalHold,
  withRetention,
  type ObjectLock,
  type Retention,
} from '../../src/store/object-lock.js';
import {
  decodeLockConfig,
  defaultRetainUntil,
  encodeLockConfig,
  lockedBucketConfigs,
  readLockRequest,
  resolveLock,
  writeLockRequest,
  type LockRequest,
} from '../../src/store/object-lock-config.js';
import { decodeVersion, encodeVersion, type ObjectVersion } from '../../src/store/records.js';
import { decodeUpload, encodeUpload } from '../../src/store/uploads.js';
import { ByteReader, ByteWriter } from '../../src/store/binary.js';
import { makeProvider, stream } from './helpers.js';

const NOW = Date.UTC(2030, 0, 1);
const HOUR = 3_600_000;
const code = (f: () => unknown): string => {
  try {
    f();
    return 'ok';
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    return (err as StoreError).code;
  }
};

describe('removal rules (assertRemovable)', () => {
  const cases: [string, ObjectLock | undefined, boolean, string][] = [
    ['no lock', undefined, false, 'ok'],
    ['legal hold OFF', { legalHold: false }, false, 'ok'],
    ['legal hold ON', { legalHold: true }, false, 'AccessDenied'],
    ['legal hold ON, bypass', { legalHold: true }, true, 'AccessDenied'],
    ['COMPLIANCE active', { mode: 'COMPLIANCE', retainUntil: NOW + HOUR }, false, 'AccessDenied'],
    ['COMPLIANCE active, bypass', { mode: 'COMPLIANCE', retainUntil: NOW + HOUR }, true, 'AccessDenied'],
    ['COMPLIANCE expired', { mode: 'COMPLIANCE', retainUntil: NOW - 1 }, false, 'ok'],
    ['COMPLIANCE ending now', { mode: 'COMPLIANCE', retainUntil: NOW }, false, 'ok'],
    ['GOVERNANCE active', { mode: 'GOVERNANCE', retainUntil: NOW + 1 }, false, 'AccessDenied'],
    ['GOVERNANCE active, bypass', { mode: 'GOVERNANCE', retainUntil: NOW + 1 }, true, 'ok'],
    ['GOVERNANCE expired', { mode: 'GOVERNANCE', retainUntil: NOW - HOUR }, false, 'ok'],
    ['GOVERNANCE expired + hold', { mode: 'GOVERNANCE', retainUntil: NOW - HOUR, legalHold: true }, true, 'AccessDenied'],
  ];
  for (const [name, lock, bypass, want] of cases) {
    it(`${name}${bypass ? ' with bypass' : ''}: ${want}`, () => {
      expect(code(() => assertRemovable(lock ? { lock } : {}, { now: NOW, bypassGovernance: bypass }))).toBe(want);
      expect(isLocked(lock, NOW)).toBe(lock?.legalHold === true || activeRetention(lock, NOW) !== undefined);
    });
  }
});

describe('retention changes (assertRetentionChange)', () => {
  const later: Retention = { mode: 'COMPLIANCE', retainUntil: NOW + 2 * HOUR };
  const earlier: Retention = { mode: 'COMPLIANCE', retainUntil: NOW + HOUR / 2 };
  const gLater: Retention = { mode: 'GOVERNANCE', retainUntil: NOW + 2 * HOUR };
  const gEarlier: Retention = { mode: 'GOVERNANCE', retainUntil: NOW + HOUR / 2 };
  const compliance: ObjectLock = { mode: 'COMPLIANCE', retainUntil: NOW + HOUR };
  const governance: ObjectLock = { mode: 'GOVERNANCE', retainUntil: NOW + HOUR };
  const cases: [string, ObjectLock | undefined, Retention | undefined, boolean, string][] = [
    ['COMPLIANCE extended', compliance, later, false, 'ok'],
    ['COMPLIANCE kept as is', compliance, { mode: 'COMPLIANCE', retainUntil: NOW + HOUR }, false, 'ok'],
    ['COMPLIANCE shortened', compliance, earlier, false, 'AccessDenied'],
    ['COMPLIANCE shortened with bypass', compliance, earlier, true, 'AccessDenied'],
    ['COMPLIANCE removed with bypass', compliance, undefined, true, 'AccessDenied'],
    ['COMPLIANCE to GOVERNANCE with bypass', compliance, gLater, true, 'AccessDenied'],
    ['GOVERNANCE extended', governance, gLater, false, 'ok'],
    ['GOVERNANCE shortened', governance, gEarlier, false, 'AccessDenied'],
    ['GOVERNANCE shortened with bypass', governance, gEarlier, true, 'ok'],
    ['GOVERNANCE removed', governance, undefined, false, 'AccessDenied'],
    ['GOVERNANCE removed with bypass', governance, undefined, true, 'ok'],
    ['GOVERNANCE to COMPLIANCE', governance, later, false, 'AccessDenied'],
    ['GOVERNANCE to COMPLIANCE with bypass', governance, later, true, 'ok'],
    ['expired COMPLIANCE shortened', { mode: 'COMPLIANCE', retainUntil: NOW - 1 }, earlier, false, 'ok'],
    ['none to GOVERNANCE', undefined, gEarlier, false, 'ok'],
    ['legal hold only, retention removed', { legalHold: true }, undefined, false, 'ok'],
  ];
  for (const [name, cur, next, bypass, want] of cases) {
    it(`${name}: ${want}`, () => {
      expect(code(() => assertRetentionChange(cur, next, { now: NOW, bypassGovernance: bypass }))).toBe(want);
    });
  }

  it('a retain-until must be in the future and within 9999', () => {
    expect(code(() => checkRetainUntil(NOW + 1, NOW))).toBe('ok');
    expect(code(() => checkRetainUntil(NOW, NOW))).toBe('InvalidArgument');
    expect(code(() => checkRetainUntil(NOW - HOUR, NOW))).toBe('InvalidArgument');
    expect(code(() => checkRetainUntil(MAX_RETAIN_UNTIL_MS, NOW))).toBe('ok');
    expect(code(() => checkRetainUntil(MAX_RETAIN_UNTIL_MS + 1, NOW))).toBe('InvalidArgument');
    expect(code(() => checkRetainUntil(NOW + 0.5, NOW))).toBe('InvalidArgument');
  });

  it('retention and legal hold change independently', () => {
    const both = withLegalHold({ mode: 'GOVERNANCE', retainUntil: NOW }, true);
    expect(both).toEqual({ mode: 'GOVERNANCE', retainUntil: NOW, legalHold: true });
    expect(withRetention(both, undefined)).toEqual({ legalHold: true });
    expect(withRetention({ mode: 'GOVERNANCE', retainUntil: NOW }, undefined)).toBeUndefined();
    expect(withLegalHold(undefined, false)).toEqual({ legalHold: false });
  });
});

describe('record forms', () => {
  const base: ObjectVersion = {
    versionId: 'v1',
    deleteMarker: false,
    size: 3,
    md5: new Uint8Array(16).fill(7),
    partCount: 0,
    lastModified: NOW,
    system: {},
    userMetadata: {},
    tags: {},
    location: { kind: 'empty' },
    access: { acl: 'public-read' },
  };

  it('a version keeps its lock through encode/decode (flag 32), and has none when absent', () => {
    for (const lock of [{ mode: 'COMPLIANCE', retainUntil: MAX_RETAIN_UNTIL_MS }, { legalHold: false }, { mode: 'GOVERNANCE', retainUntil: 1, legalHold: true }] as ObjectLock[]) {
      const v = decodeVersion(encodeVersion({ ...base, lock }));
      expect(v.lock).toEqual(lock);
      expect(v.access).toEqual({ acl: 'public-read' });
    }
    expect(decodeVersion(encodeVersion(base)).lock).toBeUndefined();
    expect(encodeVersion(base)[0]! & 32).toBe(0);
  });

  it('corrupt lock bytes are refused, never misread', () => {
    const bad = [
      Uint8Array.of(8), // unknown bit
      Uint8Array.of(4), // hold ON without hold set
      Uint8Array.of(1, 2, 5), // unknown mode
      Uint8Array.of(1, 0), // truncated retain-until
      Uint8Array.of(3, 0, 1, 0), // trailing byte
    ];
    for (const b of bad) expect(code(() => decodeObjectLock(b)), String(b)).toBe('Corrupt');
    expect(() => encodeObjectLock({ mode: 'GOVERNANCE' })).toThrow(RangeError);
  });

  it('bucket configuration: round trip; corrupt or out-of-range stored values refused', () => {
    for (const c of [{}, { rule: { mode: 'GOVERNANCE' as const, days: 1 } }, { rule: { mode: 'COMPLIANCE' as const, years: 100 } }]) {
      expect(decodeLockConfig(encodeLockConfig(c))).toEqual(c);
    }
    for (const b of [Uint8Array.of(2, 0), Uint8Array.of(1, 3, 0, 1), Uint8Array.of(1, 1, 2, 1), Uint8Array.of(1, 1, 0, 0), Uint8Array.of(1, 0, 0), Uint8Array.of(1, 1, 1, 101)]) {
      expect(code(() => decodeLockConfig(b)), String(b)).toBe('Corrupt');
    }
    expect(code(() => encodeLockConfig({ rule: { mode: 'GOVERNANCE', days: 36_501 } }))).toBe('InvalidArgument');
    expect(code(() => encodeLockConfig({ rule: { mode: 'GOVERNANCE', years: 0 } }))).toBe('InvalidArgument');
    expect(lockedBucketConfigs().map(([n]) => n)).toEqual(['versioning', 'object-lock']);
  });

  it('lock requests (upload records) round trip; a bad period is corrupt', () => {
    const reqs: LockRequest[] = [
      {},
      { retention: { mode: 'COMPLIANCE', retainUntil: NOW }, legalHold: true },
      { defaultRule: { mode: 'GOVERNANCE', years: 3 }, legalHold: false },
    ];
    for (const req of reqs) {
      const w = new ByteWriter();
      writeLockRequest(w, req);
      const r = new ByteReader(w.finish(), 'test');
      expect(readLockRequest(r)).toEqual(req);
      r.end();
    }
    expect(code(() => readLockRequest(new ByteReader(Uint8Array.of(2, 0, 0, 0), 't')))).toBe('Corrupt');
    expect(code(() => readLockRequest(new ByteReader(Uint8Array.of(16), 't')))).toBe('Corrupt');
    const rec = { key: 'k', initiated: 5, system: {}, userMetadata: {}, tags: {}, checksumType: 'FULL_OBJECT' as const, lock: reqs[1]! };
    expect(decodeUpload(encodeUpload(rec)).lock).toEqual(reqs[1]);
  });
});

describe('default retention', () => {
  it('days add whole days; years are calendar years (UTC)', () => {
    expect(defaultRetainUntil({ mode: 'GOVERNANCE', days: 1 }, NOW)).toBe(NOW + 24 * HOUR);
    const leap = Date.UTC(2028, 1, 29, 12);
    expect(new Date(defaultRetainUntil({ mode: 'GOVERNANCE', years: 1 }, leap)).toISOString()).toBe('2029-03-01T12:00:00.000Z');
    expect(new Date(defaultRetainUntil({ mode: 'COMPLIANCE', years: 100 }, NOW)).toISOString()).toBe('2130-01-01T00:00:00.000Z');
  });

  it('an explicit retention wins over the default; the legal hold is kept either way', () => {
    const rule = { mode: 'GOVERNANCE' as const, days: 2 };
    expect(resolveLock({ defaultRule: rule }, NOW)).toEqual({ mode: 'GOVERNANCE', retainUntil: NOW + 48 * HOUR });
    expect(resolveLock({ retention: { mode: 'COMPLIANCE', retainUntil: NOW + 1 }, defaultRule: rule, legalHold: true }, NOW)).toEqual({
      mode: 'COMPLIANCE',
      retainUntil: NOW + 1,
      legalHold: true,
    });
    expect(resolveLock({}, NOW)).toBeUndefined();
    expect(resolveLock(undefined, NOW)).toBeUndefined();
  });
});

describe('store operations', () => {
  let cleanup: () => void = () => undefined;
  afterEach(() => cleanup());

  async function open() {
    const p = await makeProvider('fs');
    cleanup = p.cleanup;
    const store = await Store.open(p.provider);
    return { store, reopen: async () => Store.open(await p.reopen()) };
  }
  const put = (store: Store, bucket: string, key: string, lock?: LockRequest) =>
    store.putObject(bucket, key, stream(Buffer.from('abc')), { size: 3, ...(lock ? { lock } : {}) });
  const soon = () => Date.now() + HOUR;

  it('lock configuration: only on a lock-enabled (or versioning-Enabled) bucket', async () => {
    const { store } = await open();
    await store.createBucket('plain');
    await store.createBucket('locked', undefined, lockedBucketConfigs());
    expect(store.bucketLockConfig('plain')).toBeUndefined();
    expect(store.bucketLockConfig('locked')).toEqual({});
    await expect(store.putBucketLockConfig('plain', {})).rejects.toMatchObject({ code: 'InvalidBucketState' });
    await store.putBucketConfig('plain', 'versioning', Buffer.from('Suspended'));
    await expect(store.putBucketLockConfig('plain', {})).rejects.toMatchObject({ code: 'InvalidBucketState' });
    await store.putBucketConfig('plain', 'versioning', Buffer.from('Enabled'));
    await store.putBucketLockConfig('plain', { rule: { mode: 'COMPLIANCE', years: 1 } });
    expect(store.bucketLockConfig('plain')).toEqual({ rule: { mode: 'COMPLIANCE', years: 1 } });
    await expect(store.putBucketLockConfig('missing', {})).rejects.toMatchObject({ code: 'NoSuchBucket' });
    await store.close();
  });

  it('retention and legal hold: allowed changes are committed, refused ones change nothing, and both survive a reopen', async () => {
    const { store, reopen } = await open();
    await store.createBucket('bkt', undefined, lockedBucketConfigs());
    const v = (await put(store, 'bkt', 'k')).version;
    expect(v.lock).toBeUndefined();
    const until = soon();
    expect(await store.putObjectRetention('bkt', 'k', undefined, { mode: 'GOVERNANCE', retainUntil: until }, { bypassGovernance: false })).toBe(v.versionId);
    await expect(store.putObjectRetention('bkt', 'k', undefined, { mode: 'GOVERNANCE', retainUntil: until - 1000 }, { bypassGovernance: false })).rejects.toMatchObject({ code: 'AccessDenied' });
    await expect(store.putObjectRetention('bkt', 'k', undefined, undefined, { bypassGovernance: false })).rejects.toMatchObject({ code: 'AccessDenied' });
    await expect(store.putObjectRetention('bkt', 'k', undefined, { mode: 'GOVERNANCE', retainUntil: Date.now() - 1000 }, { bypassGovernance: true })).rejects.toMatchObject({ code: 'InvalidArgument' });
    expect((await store.lockedVersion('bkt', 'k', undefined)).lock).toEqual({ mode: 'GOVERNANCE', retainUntil: until });
    await store.putObjectRetention('bkt', 'k', v.versionId, { mode: 'COMPLIANCE', retainUntil: until + 1000 }, { bypassGovernance: true });
    await store.putObjectLegalHold('bkt', 'k', undefined, true);
    await expect(store.putObjectRetention('bkt', 'k', undefined, { mode: 'COMPLIANCE', retainUntil: until }, { bypassGovernance: true })).rejects.toMatchObject({ code: 'AccessDenied' });
    await expect(store.putObjectLegalHold('bkt', 'k', '00000000000a000001', false)).rejects.toMatchObject({ code: 'NoSuchVersion' });
    await expect(store.putObjectLegalHold('bkt', 'k', 'not-a-version', false)).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(store.putObjectLegalHold('bkt', 'nokey', undefined, true)).rejects.toMatchObject({ code: 'NoSuchKey' });
    // The body and identity are untouched by lock changes.
    const after = await store.lockedVersion('bkt', 'k', undefined);
    expect(after.versionId).toBe(v.versionId);
    expect(Buffer.from(after.md5)).toEqual(Buffer.from(v.md5));
    await store.close();
    const again = await reopen();
    expect((await again.lockedVersion('bkt', 'k', v.versionId)).lock).toEqual({ mode: 'COMPLIANCE', retainUntil: until + 1000, legalHold: true });
    await again.close();
  });

  it('a bucket without Object Lock refuses retention and legal hold (InvalidRequest)', async () => {
    const { store } = await open();
    await store.createBucket('plain');
    await put(store, 'plain', 'k');
    await expect(store.putObjectRetention('plain', 'k', undefined, { mode: 'GOVERNANCE', retainUntil: soon() }, { bypassGovernance: true })).rejects.toMatchObject({ code: 'InvalidRequest' });
    await expect(store.putObjectLegalHold('plain', 'k', undefined, true)).rejects.toMatchObject({ code: 'InvalidRequest' });
    await expect(store.lockedVersion('plain', 'k', undefined)).rejects.toMatchObject({ code: 'InvalidRequest' });
    await store.close();
  });

  it('new versions get their lock from the request or the default rule, at the commit time; copies never inherit the source lock', async () => {
    const { store } = await open();
    await store.createBucket('bkt', undefined, lockedBucketConfigs());
    const rule = { mode: 'GOVERNANCE' as const, days: 3 };
    const before = Date.now();
    const d = (await put(store, 'bkt', 'default', { defaultRule: rule })).version;
    expect(d.lock?.mode).toBe('GOVERNANCE');
    expect(d.lock!.retainUntil).toBe(d.lastModified + 3 * 24 * HOUR);
    expect(d.lastModified).toBeGreaterThanOrEqual(before);
    const until = soon();
    const e = (await put(store, 'bkt', 'explicit', { retention: { mode: 'COMPLIANCE', retainUntil: until }, legalHold: true })).version;
    expect(e.lock).toEqual({ mode: 'COMPLIANCE', retainUntil: until, legalHold: true });
    const plainCopy = await store.copyObject({ bucket: 'bkt', key: 'explicit' }, { bucket: 'bkt', key: 'copy' });
    expect(plainCopy.lock).toBeUndefined();
    const lockedCopy = await store.copyObject({ bucket: 'bkt', key: 'explicit' }, { bucket: 'bkt', key: 'copy2' }, { lock: { legalHold: true } });
    expect(lockedCopy.lock).toEqual({ legalHold: true });
    // Multipart: the request at creation, applied to the completed object.
    const id = await store.createMultipartUpload('bkt', 'mp', { lock: { defaultRule: rule, legalHold: true } });
    expect(await store.uploadLocked('bkt', 'mp', id)).toBe(true);
    const part = await store.uploadPart('bkt', 'mp', id, 1, stream(Buffer.from('xyz')), { size: 3 });
    const mp = await store.completeMultipartUpload('bkt', 'mp', id, [{ partNumber: 1, etag: part.etag }]);
    expect(mp.lock).toEqual({ mode: 'GOVERNANCE', retainUntil: mp.lastModified + 3 * 24 * HOUR, legalHold: true });
    const plainId = await store.createMultipartUpload('bkt', 'mp2');
    expect(await store.uploadLocked('bkt', 'mp2', plainId)).toBe(false);
    await store.close();
  });
});
