/**
 * @module Deterministic object bodies for the kill test: the bytes of a body follow from
 * (key, generation, size) alone, so the parent recomputes what a worker wrote without
 * any copy of it, and two generations of one key never share bytes.
 */
import { createHash } from 'node:crypto';
import { randomBytes } from '../support/random.js';

/** One body (or one multipart part): derived from the key it was first written to. */
export interface BodySpec {
  key: string;
  gen: string;
  size: number;
}

export function specBytes(spec: BodySpec): Uint8Array {
  const seed = createHash('sha256').update(`${spec.key}\u0000${spec.gen}\u0000${spec.size}`).digest().readUInt32LE(0);
  return randomBytes(spec.size, seed);
}

/** The body of an object made of `parts` (one part for a plain PUT). */
export function contentBytes(parts: readonly BodySpec[]): Uint8Array {
  if (parts.length === 1) return specBytes(parts[0]!);
  return Buffer.concat(parts.map(specBytes));
}

export function contentSize(parts: readonly BodySpec[]): number {
  return parts.reduce((n, p) => n + p.size, 0);
}

/** A stable name for a content, for equality and messages. */
export function contentId(parts: readonly BodySpec[] | null): string {
  if (!parts) return '(absent)';
  return parts.map((p) => `${p.key}@${p.gen}:${p.size}`).join('+');
}

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest();

/** The S3 ETag (no quotes) of an object written as `parts`: plain MD5, or MD5 of part MD5s "-N". */
export function expectedEtag(parts: readonly BodySpec[], multipart: boolean): string {
  if (!multipart) return md5(contentBytes(parts)).toString('hex');
  return `${md5(Buffer.concat(parts.map((p) => md5(specBytes(p))))).toString('hex')}-${parts.length}`;
}
