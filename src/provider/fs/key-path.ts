/**
 * @module How the fs provider maps keys to paths, and back.
 *
 * A key never becomes a path directly. Its UTF-8 bytes are written as lowercase hex
 * and cut into directory levels of SEGMENT_HEX_CHARS characters; the remaining
 * 0..SEGMENT_HEX_CHARS-2 characters name the blob file, followed by LEAF_SUFFIX:
 *
 *   key "packs/0001"   → 7061636b732f30303031-b                (short: one file)
 *   key of 40 bytes    → <32 hex>/<32 hex>/<16 hex>-b
 *
 * Names are only [0-9a-f] and `-b`, so no key can traverse (`..`, `/`, NUL, `%`…),
 * and each name stays far below NAME_MAX (255). Ordering: LEAF_SUFFIX starts with
 * `-` (0x2d), below every hex digit, so within one directory a file whose hex is a
 * prefix of a sibling directory's name sorts first; hence a depth-first walk that
 * visits names in ascending ASCII order yields keys in ascending byte order.
 */

/** Hex characters per directory level (16 key bytes): short keys stay one file, long ones ≤ 64 levels. */
export const SEGMENT_HEX_CHARS = 32;

/** Marks a blob file; `-` sorts below `0`, which keeps the walk in byte order (see module doc). */
export const LEAF_SUFFIX = '-b';

const DIR_NAME = new RegExp(`^[0-9a-f]{${SEGMENT_HEX_CHARS}}$`);
const LEAF_NAME = new RegExp(`^((?:[0-9a-f]{2}){0,${SEGMENT_HEX_CHARS / 2 - 1}})${LEAF_SUFFIX}$`);

export interface KeyPath {
  /** Directory names from the blob root down to the file's directory (maybe none). */
  dirs: string[];
  /** The blob file's name. */
  leaf: string;
}

/** The relative location of a key (given as its UTF-8 bytes). Pure. */
export function keyPath(keyUtf8: Uint8Array): KeyPath {
  const hex = Buffer.from(keyUtf8.buffer, keyUtf8.byteOffset, keyUtf8.byteLength).toString('hex');
  const full = Math.floor(hex.length / SEGMENT_HEX_CHARS);
  const dirs: string[] = [];
  for (let i = 0; i < full; i++)
    dirs.push(hex.slice(i * SEGMENT_HEX_CHARS, (i + 1) * SEGMENT_HEX_CHARS));
  return { dirs, leaf: hex.slice(full * SEGMENT_HEX_CHARS) + LEAF_SUFFIX };
}

/** The hex a directory name contributes, or undefined if the name is not one of ours. */
export function dirNameHex(name: string): string | undefined {
  return DIR_NAME.test(name) ? name : undefined;
}

/** The hex a blob file name contributes, or undefined if it is not a blob file. */
export function leafNameHex(name: string): string | undefined {
  const m = LEAF_NAME.exec(name);
  return m ? m[1] : undefined;
}

/** The hex form used for ordering and prefix tests (same order as the UTF-8 bytes). */
export function toKeyHex(key: string): string {
  return Buffer.from(key, 'utf8').toString('hex');
}

/** Decodes a full key hex back to the key. */
export function fromKeyHex(hex: string): string {
  return Buffer.from(hex, 'hex').toString('utf8');
}
