/**
 * @module Credentials given in configuration: the config file's `credentials` (one entry or
 * a list of `{ accessKeyId, secretAccessKey, admin?, name?, createBucket? }`) or the STRATA_ACCESS_KEY /
 * STRATA_SECRET_KEY pair. Checked strictly, because a typo here is a key that silently
 * does not work (or a key the operator thinks is restricted and is not).
 */
import { OptionError, type RawValue } from './option-types.js';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** False: an ordinary key (granted per bucket); absent or true: an admin key. */
  admin?: boolean;
  /** Display name of a key created at start-up (default: the access key id). */
  name?: string;
  /** Whether a key created at start-up may create buckets (default true). */
  createBucket?: boolean;
}

/** Most credential entries one config may list: more is a mistake, not a key set. */
export const MAX_CONFIG_CREDENTIALS = 1000;

/** An access key id appears in the SigV4 credential scope `<id>/<date>/<region>/s3/aws4_request`
 * and in SigV2 `AWS <id>:<sig>`, so it cannot hold `/`, `:`, `,`, `=`, spaces or controls. */
const ACCESS_KEY_ID = /^[A-Za-z0-9._~+-]{3,128}$/;

/** A secret is HMAC key material: printable ASCII, no spaces at the ends to lose in copies. */
const SECRET = /^[\x21-\x7e](?:[\x20-\x7e]{0,254}[\x21-\x7e])?$/;

const ENTRY_KEYS = new Set(['accessKeyId', 'secretAccessKey', 'admin', 'name', 'createBucket']);

/** A key's display name: 1..128 UTF-8 bytes, no control characters (store/keys-record.ts). */
const NAME_MAX_BYTES = 128;

function entry(raw: RawValue, origin: string): Credentials {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new OptionError(`${origin}: expected { "accessKeyId": ..., "secretAccessKey": ... }`);
  }
  const o = raw as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !ENTRY_KEYS.has(k));
  if (unknown.length) throw new OptionError(`${origin}: unknown key(s) ${unknown.map((k) => `'${k.slice(0, 64)}'`).join(', ')}`);
  const { accessKeyId, secretAccessKey, admin, name, createBucket } = o;
  if (typeof accessKeyId !== 'string' || !ACCESS_KEY_ID.test(accessKeyId)) {
    throw new OptionError(
      `${origin}: accessKeyId must be 3 to 128 characters of A-Z a-z 0-9 . _ ~ + -`
    );
  }
  if (typeof secretAccessKey !== 'string' || !SECRET.test(secretAccessKey)) {
    throw new OptionError(`${origin}: secretAccessKey must be 1 to 256 printable ASCII characters`);
  }
  if (admin !== undefined && typeof admin !== 'boolean') throw new OptionError(`${origin}: admin must be true or false`);
  if (createBucket !== undefined && typeof createBucket !== 'boolean') throw new OptionError(`${origin}: createBucket must be true or false`);
  if (name !== undefined && (typeof name !== 'string' || name === '' || Buffer.byteLength(name) > NAME_MAX_BYTES || /[\x00-\x1f\x7f]/.test(name))) {
    throw new OptionError(`${origin}: name must be 1 to ${NAME_MAX_BYTES} bytes without control characters`);
  }
  return {
    accessKeyId,
    secretAccessKey,
    ...(admin !== undefined ? { admin } : {}),
    ...(name !== undefined ? { name: name as string } : {}),
    ...(createBucket !== undefined ? { createBucket } : {}),
  };
}

/**
 * Parses the config file's `credentials` value (an entry or a non-empty list of entries).
 * Pure. Throws OptionError naming `origin` for a malformed entry, an unknown entry key,
 * too many entries, or an access key id listed twice.
 */
export function parseCredentialList(raw: RawValue, origin: string): Credentials[] {
  const list = Array.isArray(raw) ? (raw as RawValue[]) : [raw];
  if (list.length === 0) throw new OptionError(`${origin}: the list is empty`);
  if (list.length > MAX_CONFIG_CREDENTIALS)
    throw new OptionError(`${origin}: more than ${MAX_CONFIG_CREDENTIALS} entries`);
  const out = list.map((e, i) => entry(e, Array.isArray(raw) ? `${origin}[${i}]` : origin));
  const seen = new Set<string>();
  for (const c of out) {
    if (seen.has(c.accessKeyId))
      throw new OptionError(`${origin}: access key ${c.accessKeyId} is listed twice`);
    seen.add(c.accessKeyId);
  }
  return out;
}

/**
 * The STRATA_ACCESS_KEY / STRATA_SECRET_KEY pair from `env`, if set (an admin key). Throws
 * OptionError when only one of the two is set or a value is malformed.
 */
export function credentialsFromEnv(env: NodeJS.ProcessEnv): Credentials[] | undefined {
  const id = env.STRATA_ACCESS_KEY || undefined;
  const secret = env.STRATA_SECRET_KEY || undefined;
  if (id === undefined && secret === undefined) return undefined;
  if (id === undefined || secret === undefined)
    throw new OptionError('set both STRATA_ACCESS_KEY and STRATA_SECRET_KEY');
  return [
    entry({ accessKeyId: id, secretAccessKey: secret }, 'STRATA_ACCESS_KEY/STRATA_SECRET_KEY'),
  ];
}
