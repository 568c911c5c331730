/**
 * @module The key registry: the running server's view of the repository's access keys —
 * secrets for authentication (opened from their seals, cached per record), records for
 * authorization, and key management that seals new secrets before they reach the store.
 *
 * It holds no state of its own besides the cache: every answer reflects the repository's
 * committed keys, so a key created, changed or deleted (here, through the admin API, or by
 * `strata keys` on a stopped repository) takes effect with the commit.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Store } from './store.js';
import { isKeyDeleted, type KeyChange } from './keys.js';
import { checkKeyId, checkKeyName, checkSecret, KeyError, type KeyRecord } from './keys-record.js';
import type { KeySealer } from './keys-seal.js';

/** Characters of generated access key ids (upper-case alphanumerics, as AWS ids). */
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/** Random characters after the `STRATA` prefix: 36^16 ≈ 2^82 ids. */
const ID_RANDOM_CHARS = 16;
/** Random bytes of a generated secret: 240 bits, 40 base64url characters (AWS secrets are 40). */
const SECRET_BYTES = 30;

/** A fresh random access key id: `STRATA` and 16 upper-case alphanumerics. */
export function generateKeyId(): string {
  // Bytes >= 252 are dropped (252 = 7 * 36), so every character is equally likely.
  let id = 'STRATA';
  while (id.length < 6 + ID_RANDOM_CHARS) {
    for (const b of randomBytes(ID_RANDOM_CHARS)) if (b < 252 && id.length < 6 + ID_RANDOM_CHARS) id += ID_ALPHABET[b % 36];
  }
  return id;
}

/** A fresh random secret key. */
export function generateSecret(): string {
  return randomBytes(SECRET_BYTES).toString('base64url');
}

/** What `create` accepts; everything is optional (id and secret are generated). */
export interface CreateKeyInput {
  id?: string;
  secret?: string;
  name?: string;
  /** Default false. */
  admin?: boolean;
  /** Default true: see the README (access control) for why. */
  createBucket?: boolean;
}

/** Secret-free description of a key, as the admin API and `strata keys list` show it. */
export interface KeyView {
  id: string;
  name: string;
  created: string;
  admin: boolean;
  createBucket: boolean;
  grants: { bucket: string; read: boolean; write: boolean; owner: boolean }[];
}

export class KeyRegistry {
  readonly store: Store;
  readonly #sealer: KeySealer | undefined;
  /** Opened secrets, valid while the record they came from is the committed one. */
  readonly #secrets = new Map<string, { record: KeyRecord; secret: string }>();

  constructor(store: Store, sealer: KeySealer | undefined) {
    this.store = store;
    this.#sealer = sealer;
  }

  /** The committed record of `id`, or undefined. */
  key(id: string): KeyRecord | undefined {
    return this.store.getKey(id);
  }

  /**
   * The secret of `id` for request authentication, or undefined for an unknown key (or one
   * whose seal does not open: never a wrong secret). Caches the opened secret per record.
   */
  get(id: string): string | undefined {
    const record = this.store.getKey(id);
    if (!record) return undefined;
    const hit = this.#secrets.get(id);
    if (hit && hit.record === record) return hit.secret;
    if (!this.#sealer) return undefined;
    let secret: string;
    try {
      secret = this.#sealer.open(id, record.sealed);
    } catch {
      return undefined;
    }
    this.#secrets.set(id, { record, secret });
    return secret;
  }

  /**
   * Checks that every key's secret opens with this server's master key. Throws Error naming
   * the master keys involved (a wrong master key must stop the start, not serve garbage).
   */
  verifyAll(): void {
    const keys = this.store.listKeys();
    if (keys.length === 0) return;
    if (!this.#sealer) {
      throw new Error(
        `the repository holds ${keys.length} access key(s) sealed with master key ${keys[0]!.sealedBy}, but no master key is configured ` +
          '(set STRATA_MASTER_KEY or --master-key-file)'
      );
    }
    for (const k of keys) {
      try {
        this.#sealer.open(k.id, k.sealed);
      } catch {
        throw new Error(
          `wrong master key: this server's master key ${this.#sealer.masterId} does not open access key ${k.id}, sealed with master key ${k.sealedBy}; ` +
            'start with the master key this repository was created with'
        );
      }
    }
  }

  /**
   * Creates a key (generating the id and secret unless given) and returns its record and
   * secret — the only time the secret leaves the registry. Throws KeyError
   * 'InvalidKeyInput', 'AccessKeyExists', and Error without a master key.
   */
  async create(input: CreateKeyInput): Promise<{ record: KeyRecord; secret: string }> {
    const sealer = this.#requireSealer();
    const id = input.id ?? generateKeyId();
    const secret = input.secret ?? generateSecret();
    checkKeyId(id);
    checkSecret(secret);
    const name = input.name ?? id;
    checkKeyName(name);
    const record = await this.store.createKey({
      id,
      name,
      admin: input.admin ?? false,
      createBucket: input.createBucket ?? true,
      sealedBy: sealer.masterId,
      sealed: sealer.seal(id, secret),
    });
    return { record, secret };
  }

  /** Grants or revokes (see store/keys.ts changeKey for the rules and errors). */
  change(id: string, mode: 'grant' | 'revoke', change: KeyChange): Promise<KeyRecord> {
    return this.store.changeKey(id, mode, change);
  }

  /** Deletes key `id` (KeyError 'NoSuchAccessKey'); returns the buckets it owned. */
  delete(id: string): Promise<{ key: KeyRecord; owned: string[] }> {
    return this.store.deleteKey(id);
  }

  /** Every key, sorted by id, without secrets. */
  list(): KeyView[] {
    return this.store.listKeys().map((k) => this.view(k));
  }

  /** The secret-free description of `k`, its stale grants (deleted buckets) left out. */
  view(k: KeyRecord): KeyView {
    const live = k.grants.filter((g) => this.store.repo.state.buckets.get(g.bucket)?.id === g.bucketId);
    return {
      id: k.id,
      name: k.name,
      created: new Date(k.created).toISOString(),
      admin: k.admin,
      createBucket: k.createBucket,
      grants: live.map((g) => ({ bucket: g.bucket, read: g.read, write: g.write, owner: g.owner })),
    };
  }

  /**
   * Makes sure key `id` exists with `secret` (bootstrap from env/config): creates it with
   * `options` when absent; when present, checks the secret in constant time and leaves the
   * stored capabilities alone (the repository is the authority once a key exists). A key
   * that was deleted (strata keys delete, the admin API) is NOT re-created: the configuration
   * naming it is stale, and re-creating it would undo the deletion of, say, a leaked admin
   * key at the next restart; `deleted` is then true. Returns whether it was created, and
   * which of `options`' capabilities differ from the stored key's. Throws Error when the
   * secrets differ, KeyError for a malformed id/secret/name.
   */
  async ensure(id: string, secret: string, options: Omit<CreateKeyInput, 'id' | 'secret'>): Promise<{ created: boolean; differs: string[]; deleted?: true }> {
    if (isKeyDeleted(this.store.repo, id)) return { created: false, differs: [], deleted: true };
    const existing = this.store.getKey(id);
    if (!existing) {
      await this.create({ ...options, id, secret });
      return { created: true, differs: [] };
    }
    const stored = Buffer.from(this.get(id) ?? '', 'utf8');
    const given = Buffer.from(secret, 'utf8');
    if (stored.length !== given.length || !timingSafeEqual(stored, given)) {
      throw new Error(
        `the secret configured for access key ${id} differs from the one in the repository; ` +
          `delete the key (strata keys delete ${id}) to replace it, or configure the stored secret`
      );
    }
    const differs: string[] = [];
    if (options.admin !== undefined && options.admin !== existing.admin) differs.push('admin');
    if (options.createBucket !== undefined && options.createBucket !== existing.createBucket) differs.push('createBucket');
    return { created: false, differs };
  }

  #requireSealer(): KeySealer {
    if (!this.#sealer) throw new KeyError('InvalidKeyInput', 'no master key is configured: secrets cannot be sealed (set STRATA_MASTER_KEY or --master-key-file)');
    return this.#sealer;
  }
}
