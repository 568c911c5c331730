/**
 * @module Sealing access keys' secrets for the repository: AES-256-GCM under a key derived
 * from the server's master key (`deriveKey(master, 'strata/keys/seal/v1')`), with the access
 * key id as additional authenticated data, so a sealed secret moved onto another key id, or
 * altered, or opened with another master key, fails to open instead of giving garbage.
 *
 * Sealed layout (version 1):
 *
 *   +----+-----------+---------------------+---------+
 *   | 01 | nonce(12) | ciphertext(n bytes) | tag(16) |
 *   +----+-----------+---------------------+---------+
 *
 * A fresh random 96-bit nonce per seal; a key is sealed once per create (a few per
 * repository lifetime), far below GCM's random-nonce limit of 2^32 per key.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveKey, type MasterKey } from './master-key-derive.js';
import { KeyError } from './keys-record.js';

/** HKDF purpose of the sealing key; bump the version to change the scheme. */
export const SEAL_PURPOSE = 'strata/keys/seal/v1';
const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** Seals and opens secrets for one master key. */
export interface KeySealer {
  /** The master key's public fingerprint (stored beside each sealed secret). */
  readonly masterId: string;
  seal(accessKeyId: string, secret: string): Uint8Array;
  /** The secret; throws KeyError 'SealMismatch' when `sealed` does not open (wrong master key, altered, other id). */
  open(accessKeyId: string, sealed: Uint8Array): string;
}

/** A sealer for `master`. Pure (derives the sealing key once). */
export function createSealer(master: MasterKey): KeySealer {
  const key = deriveKey(master, SEAL_PURPOSE);
  return {
    masterId: master.id,
    seal(accessKeyId, secret) {
      const nonce = randomBytes(NONCE_BYTES);
      const c = createCipheriv('aes-256-gcm', key, nonce);
      c.setAAD(Buffer.from(accessKeyId, 'utf8'));
      const body = Buffer.concat([c.update(secret, 'utf8'), c.final()]);
      return Buffer.concat([Buffer.of(VERSION), nonce, body, c.getAuthTag()]);
    },
    open(accessKeyId, sealed) {
      const fail = (why: string, cause?: unknown) =>
        new KeyError('SealMismatch', `the secret of access key ${accessKeyId} does not open with master key ${master.id}: ${why}`, { cause });
      if (sealed.length < 1 + NONCE_BYTES + TAG_BYTES || sealed[0] !== VERSION) throw fail('unknown seal format');
      const nonce = sealed.subarray(1, 1 + NONCE_BYTES);
      const tag = sealed.subarray(sealed.length - TAG_BYTES);
      const d = createDecipheriv('aes-256-gcm', key, nonce);
      d.setAAD(Buffer.from(accessKeyId, 'utf8'));
      d.setAuthTag(tag);
      try {
        return Buffer.concat([d.update(sealed.subarray(1 + NONCE_BYTES, sealed.length - TAG_BYTES)), d.final()]).toString('utf8');
      } catch (err) {
        throw fail('authentication failed', err);
      }
    },
  };
}
