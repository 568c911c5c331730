/**
 * @module Access keys as the repository stores them: identity, capabilities, per-bucket
 * grants and the SEALED secret (see keys-seal.ts), in a small versioned binary record.
 *
 * The permission model follows Garage's: a key holds, per bucket, any of three independent
 * flags — `read` (list and read objects), `write` (create, overwrite and delete objects),
 * `owner` (manage the bucket itself: configuration, deletion) — plus two key-wide
 * capabilities: `admin` (everything, including key management) and `createBucket`.
 *
 * A grant names the bucket AND its internal id: a bucket deleted and re-created under the
 * same name (perhaps by another key) is a different bucket, and the old grant no longer
 * applies to it ({@link grantFor} checks both).
 */
import { ByteReader, ByteWriter } from './binary.js';
import { StoreError } from './errors.js';

/** Permission flags a grant can carry on one bucket. */
export type BucketPermission = 'read' | 'write' | 'owner';

export interface Grant {
  bucket: string;
  /** The bucket's internal id when the grant was given (BucketState.id). */
  bucketId: string;
  read: boolean;
  write: boolean;
  owner: boolean;
}

export interface KeyRecord {
  /** The access key id (what clients send in their credential scope). */
  id: string;
  /** Human-readable name, reported as the owner's DisplayName. */
  name: string;
  /** Creation time, ms since the epoch. */
  created: number;
  /** May do everything, including managing keys and every bucket. */
  admin: boolean;
  /** May create buckets (and then owns them). */
  createBucket: boolean;
  /** Fingerprint (MasterKey.id) of the master key that sealed the secret, for clear errors. */
  sealedBy: string;
  /** The sealed secret (keys-seal.ts); never the secret itself. */
  sealed: Uint8Array;
  /** Per-bucket grants, at most one per bucket name. */
  grants: Grant[];
  /**
   * A deleted key's tombstone (no secret, no capability, no grant): it authenticates nothing
   * and is never listed, but it remembers that the id was deleted, so the start-up bootstrap
   * does not bring the key back from a configuration that still names it (store/keys.ts).
   */
  deleted?: true;
}

/** Errors of key management, each with a stable code (the admin API maps them to HTTP). */
export type KeyErrorCode = 'NoSuchAccessKey' | 'AccessKeyExists' | 'InvalidKeyInput' | 'SealMismatch' | 'LastAdmin';

export class KeyError extends Error {
  readonly code: KeyErrorCode;
  constructor(code: KeyErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'KeyError';
    this.code = code;
  }
}

/** Longest key name, in UTF-8 bytes: a display name, not a document. */
export const MAX_KEY_NAME_BYTES = 128;
/** Most grants one key may hold; bounds the record (and every auth lookup) to ~100 KiB. */
export const MAX_GRANTS_PER_KEY = 1000;

/** Access key ids: letters, digits, `.`, `_`, `~`, `+`, `-`, 3..128 chars (the config file's rule;
 * AWS ids are 16..128 alphanumerics). None of them can break a SigV4 credential scope. */
const KEY_ID_RE = /^[A-Za-z0-9._~+-]{3,128}$/;
/** Secret keys: 1..256 printable ASCII characters, no space at either end (the config file's rule;
 * AWS secrets are 40 characters, generated ones here too). */
const SECRET_RE = /^[\x21-\x7e](?:[\x20-\x7e]{0,254}[\x21-\x7e])?$/;

/** Throws KeyError 'InvalidKeyInput' unless `id` is an acceptable access key id. */
export function checkKeyId(id: string): void {
  if (typeof id !== 'string' || !KEY_ID_RE.test(id)) {
    throw new KeyError('InvalidKeyInput', `access key id must be 3-128 characters of A-Z a-z 0-9 . _ ~ + - (got ${JSON.stringify(String(id).slice(0, 140))})`);
  }
}

/** Throws KeyError 'InvalidKeyInput' unless `secret` is an acceptable secret key. */
export function checkSecret(secret: string): void {
  if (typeof secret !== 'string' || !SECRET_RE.test(secret)) {
    throw new KeyError('InvalidKeyInput', 'secret key must be 1-256 printable ASCII characters, without spaces at either end');
  }
}

/** Throws KeyError 'InvalidKeyInput' unless `name` is an acceptable key name. */
export function checkKeyName(name: string): void {
  if (typeof name !== 'string' || name.length === 0 || Buffer.byteLength(name, 'utf8') > MAX_KEY_NAME_BYTES || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new KeyError('InvalidKeyInput', `key name must be 1-${MAX_KEY_NAME_BYTES} bytes without control characters`);
  }
}

/** The grant of `key` on the bucket `name` whose current id is `id`, if any (stale grants never match). */
export function grantFor(key: KeyRecord, name: string, id: string): Grant | undefined {
  return key.grants.find((g) => g.bucket === name && g.bucketId === id);
}

const MAGIC = 0x314b5453; // "STK1"
const FLAG_ADMIN = 1;
const FLAG_CREATE_BUCKET = 2;
const FLAG_DELETED = 4;
const GRANT_READ = 1;
const GRANT_WRITE = 2;
const GRANT_OWNER = 4;

/** Encodes a key record (canonical: grants sorted by bucket name). Pure. */
export function encodeKeyRecord(k: KeyRecord): Uint8Array {
  const w = new ByteWriter(128 + k.grants.length * 48);
  w.u32(MAGIC).string(k.id).string(k.name).varint(k.created);
  w.u8((k.admin ? FLAG_ADMIN : 0) | (k.createBucket ? FLAG_CREATE_BUCKET : 0) | (k.deleted ? FLAG_DELETED : 0));
  w.string(k.sealedBy).bytes(k.sealed);
  const grants = [...k.grants].sort((a, b) => (a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0));
  w.varint(grants.length);
  for (const g of grants) {
    w.string(g.bucket).string(g.bucketId).u8((g.read ? GRANT_READ : 0) | (g.write ? GRANT_WRITE : 0) | (g.owner ? GRANT_OWNER : 0));
  }
  return w.finish();
}

/** Decodes a key record; throws StoreError 'Corrupt' on malformed, truncated or trailing bytes. */
export function decodeKeyRecord(bytes: Uint8Array, what = 'key record'): KeyRecord {
  const r = new ByteReader(bytes, what);
  if (r.u32() !== MAGIC) throw new StoreError('Corrupt', `${what}: not a key record`);
  const id = r.string();
  const name = r.string();
  const created = r.varint();
  const flags = r.u8();
  if (flags & ~(FLAG_ADMIN | FLAG_CREATE_BUCKET | FLAG_DELETED)) throw new StoreError('Corrupt', `${what}: unknown flags ${flags}`);
  const sealedBy = r.string();
  const sealed = new Uint8Array(r.bytes()); // a copy, and a plain Uint8Array whatever the source buffer
  const n = r.varint();
  if (n > MAX_GRANTS_PER_KEY || n > r.remaining) throw new StoreError('Corrupt', `${what}: ${n} grants cannot fit`);
  const grants: Grant[] = [];
  for (let i = 0; i < n; i++) {
    const bucket = r.string();
    const bucketId = r.string();
    const p = r.u8();
    if (p & ~(GRANT_READ | GRANT_WRITE | GRANT_OWNER)) throw new StoreError('Corrupt', `${what}: unknown grant flags ${p}`);
    grants.push({ bucket, bucketId, read: !!(p & GRANT_READ), write: !!(p & GRANT_WRITE), owner: !!(p & GRANT_OWNER) });
  }
  r.end();
  if (!KEY_ID_RE.test(id)) throw new StoreError('Corrupt', `${what}: malformed access key id`);
  const record: KeyRecord = { id, name, created, admin: !!(flags & FLAG_ADMIN), createBucket: !!(flags & FLAG_CREATE_BUCKET), sealedBy, sealed, grants };
  if (flags & FLAG_DELETED) {
    // A tombstone holds nothing that could authenticate or authorize.
    if (flags !== FLAG_DELETED || sealed.length > 0 || grants.length > 0) throw new StoreError('Corrupt', `${what}: a deleted key's tombstone holds capabilities`);
    record.deleted = true;
  }
  return record;
}

/** The tombstone of key `k`, deleted at `time` (ms): its id and name, nothing else. Pure. */
export function tombstoneOf(k: Pick<KeyRecord, 'id' | 'name'>, time: number): KeyRecord {
  return { id: k.id, name: k.name, created: time, admin: false, createBucket: false, sealedBy: '', sealed: new Uint8Array(0), grants: [], deleted: true };
}
