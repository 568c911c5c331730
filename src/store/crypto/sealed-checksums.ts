/**
 * @module The checksums of SSE-C bodies, sealed at rest.
 *
 * A CRC or SHA of a plaintext lets whoever holds the repository (or a backup of it) confirm
 * a guessed content, which is what SSE-C is meant to prevent; S3 likewise answers an SSE-C
 * object's checksums only to the key holder. So for SSE-C the digest *values* (of the object
 * and of each part) are stored only inside one AES-256-GCM blob under a key derived from the
 * object's data key; the algorithm, type and part count stay readable (listings show them).
 * A request that opened the data key (GET/HEAD with the key, Complete, a copy) sees the
 * version with its values restored.
 *
 *   sealed = nonce (12 random bytes) || AES-256-GCM(key, nonce, aad = label, digests) || tag
 *   digests: varint count of maps, then per map: varint entries, per entry u8 algorithm
 *            index, varint length, bytes          (map 0: the object, then one per part)
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { ByteReader, ByteWriter } from '../binary.js';
import { StoreError } from '../errors.js';
import { CHECKSUM_NAMES, type ChecksumName, type ObjectVersion } from '../records.js';
import { KEY_BYTES } from './envelope.js';

type Digests = Partial<Record<ChecksumName, Uint8Array>>;

const LABEL = 'strata/sse-c/checksums/v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

const metaKey = (dataKey: Uint8Array) => Buffer.from(hkdfSync('sha256', dataKey, new Uint8Array(0), LABEL, KEY_BYTES));

/** Seals digest maps (in order) under `dataKey`. Pure apart from the random nonce. */
export function sealDigests(dataKey: Uint8Array, maps: readonly Digests[]): Uint8Array {
  const w = new ByteWriter(64);
  w.varint(maps.length);
  for (const m of maps) {
    const present = CHECKSUM_NAMES.filter((n) => m[n]);
    w.varint(present.length);
    for (const n of present) w.u8(CHECKSUM_NAMES.indexOf(n)).bytes(m[n]!);
  }
  const nonce = randomBytes(NONCE_BYTES);
  const c = createCipheriv('aes-256-gcm', metaKey(dataKey), nonce);
  c.setAAD(Buffer.from(LABEL));
  return Buffer.concat([nonce, c.update(w.finish()), c.final(), c.getAuthTag()]);
}

/** Opens what sealDigests made; throws StoreError 'Corrupt' if it does not authenticate or parse. */
export function openDigests(dataKey: Uint8Array, sealed: Uint8Array): Digests[] {
  if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new StoreError('Corrupt', 'sealed checksums: too short');
  const d = createDecipheriv('aes-256-gcm', metaKey(dataKey), sealed.subarray(0, NONCE_BYTES));
  d.setAAD(Buffer.from(LABEL));
  d.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  let plain: Buffer;
  try {
    plain = Buffer.concat([d.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)), d.final()]);
  } catch {
    throw new StoreError('Corrupt', 'sealed checksums failed authentication');
  }
  const r = new ByteReader(plain, 'sealed checksums');
  const n = r.varint();
  if (n > r.remaining) throw new StoreError('Corrupt', `sealed checksums: ${n} maps cannot fit`);
  const out: Digests[] = [];
  for (let i = 0; i < n; i++) {
    const m: Digests = {};
    const k = r.varint();
    if (k > CHECKSUM_NAMES.length) throw new StoreError('Corrupt', `sealed checksums: ${k} entries`);
    for (let j = 0; j < k; j++) {
      const name = CHECKSUM_NAMES[r.u8()];
      if (!name) throw new StoreError('Corrupt', 'sealed checksums: unknown algorithm');
      m[name] = r.bytes().slice();
    }
    out.push(m);
  }
  r.end();
  return out;
}

/**
 * The form of an SSE-C version that is stored: a copy whose checksum values (object and
 * parts) are moved into `encryption.sealedChecksums`. Other versions are returned as they
 * are. `v` is not modified.
 */
export function sealVersionChecksums(v: ObjectVersion, dataKey: Uint8Array): ObjectVersion {
  if (v.encryption?.mode !== 'sse-c' || (!v.checksums && !v.parts)) return v;
  const sealed = sealDigests(dataKey, [v.checksums?.values ?? {}, ...(v.parts ?? []).map((p) => p.checksums)]);
  const out: ObjectVersion = { ...v, encryption: { ...v.encryption, sealedChecksums: sealed } };
  if (v.checksums) out.checksums = { ...v.checksums, values: {} };
  if (v.parts) out.parts = v.parts.map((p) => ({ ...p, checksums: {} }));
  return out;
}

/**
 * A stored SSE-C version with its checksum values restored (a copy; `v` is not modified),
 * or `v` itself when nothing is sealed. Throws StoreError 'Corrupt' when the sealed values
 * do not open with `dataKey` or do not match the version's shape.
 */
export function unsealVersionChecksums(v: ObjectVersion, dataKey: Uint8Array): ObjectVersion {
  const sealed = v.encryption?.sealedChecksums;
  if (!sealed) return v;
  const maps = openDigests(dataKey, sealed);
  if (maps.length !== 1 + (v.parts?.length ?? 0)) throw new StoreError('Corrupt', 'sealed checksums do not match the version');
  const out: ObjectVersion = { ...v };
  if (v.checksums) out.checksums = { ...v.checksums, values: maps[0]! };
  if (v.parts) out.parts = v.parts.map((p, i) => ({ ...p, checksums: maps[i + 1]! }));
  return out;
}
