/**
 * @module Test bodies and digests shared by the real-client integration tests: seeded
 * (reproducible, incompressible) bytes, and S3's ETag rules computed independently of the
 * server with node:crypto.
 */
import { createHash } from 'node:crypto';

/** `size` bytes from xorshift32 seeded with `seed`: the same bytes on every run. */
export function seeded(size: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  let x = seed >>> 0 || 1;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
  let i = 0;
  for (; i + 4 <= size; i += 4) out.writeUInt32LE(next(), i);
  for (; i < size; i++) out[i] = next() & 0xff;
  return out;
}

export const md5hex = (b: Uint8Array): string => createHash('md5').update(b).digest('hex');

/** A single-part object's ETag (quoted hex MD5). */
export const etagOf = (b: Uint8Array): string => `"${md5hex(b)}"`;

/** A multipart object's ETag: MD5 of the concatenated binary part MD5s, "-N" (quoted). */
export function multipartEtag(parts: readonly Uint8Array[]): string {
  const h = createHash('md5');
  for (const p of parts) h.update(createHash('md5').update(p).digest());
  return `"${h.digest('hex')}-${parts.length}"`;
}

/** `data` cut into `partSize` parts (the last one shorter), as multipart clients do. */
export function splitParts(data: Uint8Array, partSize: number): Uint8Array[] {
  const parts: Uint8Array[] = [];
  for (let o = 0; o < data.length; o += partSize)
    parts.push(data.subarray(o, Math.min(o + partSize, data.length)));
  return parts;
}
