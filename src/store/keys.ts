/**
 * @module Access keys and bucket ownership in the repository: create, change, grant,
 * revoke, delete, list — each one group-commit operation, so every server that opens the
 * repository sees the same keys.
 *
 * Ownership: the key that creates a bucket owns it; the owner is the bucket configuration
 * {@link OWNER_CONFIG} (the access key id), written in the commit that creates the bucket
 * (buckets.ts). Deleting a key clears it from the buckets it owned (they become owned by
 * nobody: admins only), so a later key that reuses the id inherits nothing.
 *
 * A deleted key leaves a tombstone (keys-record.ts): readers here never see it as a key, but
 * the start-up bootstrap does not re-create a deleted key from a configuration that still
 * names it ({@link isKeyDeleted}); only an explicit create does.
 */
import type { Repository } from './repository.js';
import type { Tx } from './tx.js';
import { StoreError } from './errors.js';
import {
  checkKeyId,
  checkKeyName,
  encodeKeyRecord,
  KeyError,
  MAX_GRANTS_PER_KEY,
  tombstoneOf,
  type Grant,
  type KeyRecord,
} from './keys-record.js';

/** Bucket configuration naming the owning access key id (UTF-8). */
export const OWNER_CONFIG = 'owner';

/** What a new key is made of; the secret arrives already sealed (keys-seal.ts). */
export interface NewKey {
  id: string;
  name: string;
  admin: boolean;
  createBucket: boolean;
  sealedBy: string;
  sealed: Uint8Array;
}

/** Permissions to add (grant) or remove (revoke). A bucket is needed only for the three bucket flags. */
export interface KeyChange {
  bucket?: string;
  read?: boolean;
  write?: boolean;
  owner?: boolean;
  admin?: boolean;
  createBucket?: boolean;
}

const noSuchKey = (id: string) => new KeyError('NoSuchAccessKey', `no access key ${id}`);
const utf8 = (s: string) => new TextEncoder().encode(s);

/** Key `id` as `tx` sees it; undefined for a missing or deleted (tombstone) key. */
function liveKey(tx: Tx, id: string): KeyRecord | undefined {
  const k = tx.key(id);
  return k?.deleted ? undefined : k;
}

/** Throws KeyError 'LastAdmin' unless a key other than `id` is admin (nobody could manage keys over HTTP). */
function keepAnAdmin(tx: Tx, id: string): void {
  if (!tx.keyRecords().some((k) => k.admin && !k.deleted && k.id !== id)) {
    throw new KeyError('LastAdmin', `access key ${id} is the last admin key: make another key admin first`);
  }
}

function stage(tx: Tx, k: KeyRecord): void {
  tx.setKey(k.id, k, encodeKeyRecord(k));
}

/** Grants whose bucket still exists with the same id (the others can never apply again). */
function liveGrants(tx: Tx, grants: readonly Grant[]): Grant[] {
  return grants.filter((g) => tx.bucket(g.bucket)?.id === g.bucketId);
}

/**
 * Creates a key (also over the tombstone of a deleted key with that id: an explicit
 * re-creation). Throws KeyError 'AccessKeyExists' when the id is taken, 'InvalidKeyInput'
 * for a malformed id or name. Commits one mutation; returns the stored record.
 */
export async function createKey(repo: Repository, k: NewKey): Promise<KeyRecord> {
  checkKeyId(k.id);
  checkKeyName(k.name);
  return repo.run(async (tx) => {
    if (liveKey(tx, k.id)) throw new KeyError('AccessKeyExists', `access key ${k.id} already exists`);
    const record: KeyRecord = { ...k, created: tx.time, grants: [] };
    stage(tx, record);
    return record;
  });
}

/**
 * Adds (`grant`) or removes (`revoke`) permissions of key `id`. Bucket flags need
 * `change.bucket` (an existing bucket: StoreError 'NoSuchBucket'); key-wide flags
 * (`admin`, `createBucket`) do not. A grant left with no flag is dropped, and so are grants
 * on buckets deleted since. Throws KeyError 'NoSuchAccessKey', 'InvalidKeyInput' (nothing to
 * change, bucket flags without a bucket, more than MAX_GRANTS_PER_KEY grants), 'LastAdmin'
 * (revoking admin from the only admin key).
 */
export async function changeKey(repo: Repository, id: string, mode: 'grant' | 'revoke', change: KeyChange): Promise<KeyRecord> {
  const bucketFlags = (['read', 'write', 'owner'] as const).filter((f) => change[f]);
  const keyFlags = (['admin', 'createBucket'] as const).filter((f) => change[f]);
  if (bucketFlags.length === 0 && keyFlags.length === 0) throw new KeyError('InvalidKeyInput', `nothing to ${mode}: name read, write, owner, admin or createBucket`);
  if (bucketFlags.length > 0 && !change.bucket) throw new KeyError('InvalidKeyInput', `${bucketFlags.join(', ')} ${mode === 'grant' ? 'need' : 'needs'} a bucket`);
  if (bucketFlags.length === 0 && change.bucket) throw new KeyError('InvalidKeyInput', `a bucket was named but no read, write or owner flag to ${mode}`);
  const on = mode === 'grant';
  return repo.run(async (tx) => {
    const current = liveKey(tx, id);
    if (!current) throw noSuchKey(id);
    const next: KeyRecord = { ...current, grants: liveGrants(tx, current.grants).map((g) => ({ ...g })) };
    for (const f of keyFlags) next[f] = on;
    if (current.admin && !next.admin) keepAnAdmin(tx, id);
    if (change.bucket) {
      const b = tx.requireBucket(change.bucket);
      let g = next.grants.find((x) => x.bucket === b.name);
      if (!g && on) next.grants.push((g = { bucket: b.name, bucketId: b.id, read: false, write: false, owner: false }));
      if (g) for (const f of bucketFlags) g[f] = on;
      next.grants = next.grants.filter((x) => x.read || x.write || x.owner);
      if (next.grants.length > MAX_GRANTS_PER_KEY) throw new KeyError('InvalidKeyInput', `a key holds at most ${MAX_GRANTS_PER_KEY} grants`);
    }
    stage(tx, next);
    return next;
  });
}

/**
 * Deletes key `id` (leaving its tombstone) and clears it as the owner of the buckets it
 * owned. Throws KeyError 'NoSuchAccessKey', 'LastAdmin' (the only admin key). Returns the
 * deleted record and the buckets it owned.
 */
export async function deleteKey(repo: Repository, id: string): Promise<{ key: KeyRecord; owned: string[] }> {
  return repo.run(async (tx) => {
    const key = liveKey(tx, id);
    if (!key) throw noSuchKey(id);
    if (key.admin) keepAnAdmin(tx, id);
    const owned = tx.bucketNames().filter((b) => ownerIn(tx, b) === id).sort();
    for (const b of owned) tx.setConfig(b, OWNER_CONFIG, null);
    stage(tx, tombstoneOf(key, tx.time));
    return { key, owned };
  });
}

/** The committed key `id`, or undefined (none, or deleted). Reads memory only. */
export function getKey(repo: Repository, id: string): KeyRecord | undefined {
  const k = repo.state.keys.get(id);
  return k?.deleted ? undefined : k;
}

/** Whether key `id` was deleted (its tombstone is committed, no key replaced it). Reads memory only. */
export function isKeyDeleted(repo: Repository, id: string): boolean {
  return repo.state.keys.get(id)?.deleted === true;
}

/** Every committed key (tombstones left out), sorted by id. Reads memory only. */
export function listKeys(repo: Repository): KeyRecord[] {
  return [...repo.state.keys.values()].filter((k) => !k.deleted).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The access key id that owns committed bucket `bucket`; undefined for a missing or unowned bucket. */
export function bucketOwner(repo: Repository, bucket: string): string | undefined {
  const raw = repo.state.buckets.get(bucket)?.configs.get(OWNER_CONFIG);
  return raw ? new TextDecoder().decode(raw) : undefined;
}

/** The owner of `bucket` as transaction `tx` sees it (staged creations included). */
export function ownerIn(tx: Tx, bucket: string): string | undefined {
  const raw = tx.config(bucket, OWNER_CONFIG);
  return raw ? new TextDecoder().decode(raw) : undefined;
}

/** Stages `owner` as the owner of `bucket` (a bucket visible to `tx`). */
export function stageOwner(tx: Tx, bucket: string, owner: string): void {
  if (!tx.bucket(bucket)) throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: bucket } });
  tx.setConfig(bucket, OWNER_CONFIG, utf8(owner));
}
