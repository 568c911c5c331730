/**
 * @module Listing continuation tokens: opaque, versioned, authenticated, and bound to the
 * listing they continue.
 *
 *   token = base64url( version u8 | flags u8 | key (UTF-8, to the end of the payload) | mac )
 *   mac   = HMAC-SHA256(secret, "list" 0 bucket 0 prefix 0 delimiter 0 payload)[0..16)
 *
 * Flag 1 means "the last thing returned was the common prefix `key`: resume after every
 * key under it". A token used with another bucket, prefix or delimiter, or altered in any
 * byte, is refused with StoreError 'InvalidToken'.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { StoreError } from './errors.js';

const VERSION = 1;
const MAC_BYTES = 16;
/** S3 keys are at most 1 KiB; a token is never much longer. */
const MAX_TOKEN_CHARS = 4096;

export interface ListPosition {
  key: string;
  /** True: resume after everything starting with `key` (a common prefix). */
  skipPrefix: boolean;
}

export interface ListBinding {
  bucket: string;
  prefix: string;
  delimiter: string;
}

function mac(secret: Uint8Array, bind: ListBinding, payload: Uint8Array): Buffer {
  const h = createHmac('sha256', secret);
  h.update(`list\u0000${bind.bucket}\u0000${bind.prefix}\u0000${bind.delimiter}\u0000`);
  h.update(payload);
  return h.digest().subarray(0, MAC_BYTES);
}

export function encodeToken(secret: Uint8Array, bind: ListBinding, pos: ListPosition): string {
  const key = Buffer.from(pos.key, 'utf8');
  const payload = Buffer.concat([Buffer.from([VERSION, pos.skipPrefix ? 1 : 0]), key]);
  return Buffer.concat([payload, mac(secret, bind, payload)]).toString('base64url');
}

export function decodeToken(secret: Uint8Array, bind: ListBinding, token: string): ListPosition {
  const bad = () => new StoreError('InvalidToken', 'The continuation token provided is incorrect');
  if (token.length === 0 || token.length > MAX_TOKEN_CHARS || !/^[A-Za-z0-9_-]+$/.test(token)) throw bad();
  const raw = Buffer.from(token, 'base64url');
  if (raw.length < 2 + MAC_BYTES || raw[0] !== VERSION || raw[1]! > 1) throw bad();
  const payload = raw.subarray(0, raw.length - MAC_BYTES);
  if (!timingSafeEqual(mac(secret, bind, payload), raw.subarray(raw.length - MAC_BYTES))) throw bad();
  const key = payload.subarray(2).toString('utf8');
  if (Buffer.from(key, 'utf8').length !== payload.length - 2) throw bad();
  return { key, skipPrefix: raw[1] === 1 };
}
