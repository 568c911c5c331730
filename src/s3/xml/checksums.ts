/**
 * @module The `<ChecksumCRC32>` … `<ChecksumSHA256>` elements shared by multipart, copy and
 * listing documents. Values are the base64 strings S3 uses (composite values `…-N` too).
 * Algorithm names are lower case, as in `x-amz-checksum-<name>` and src/checksum.
 */
import { leaf, type Xml } from './build.js';
import { leafText } from './read.js';
import type { XmlElement } from './parse.js';

/** The algorithms that have a `Checksum<NAME>` element, in the order S3 writes them. */
export const XML_CHECKSUM_ALGORITHMS = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256'] as const;
export type XmlChecksumAlgorithm = (typeof XML_CHECKSUM_ALGORITHMS)[number];

/** Checksum values by algorithm; absent algorithms are simply missing. */
export type ChecksumValues = Partial<Record<XmlChecksumAlgorithm, string>>;

/** `COMPOSITE` (checksum of part checksums, `…-N`) or `FULL_OBJECT`. */
export type ChecksumType = 'COMPOSITE' | 'FULL_OBJECT';

/** `crc32` → `ChecksumCRC32`. */
export function checksumElementName(alg: XmlChecksumAlgorithm): string {
  return `Checksum${alg.toUpperCase()}`;
}

/** The checksum elements for `values`, in S3's order. Pure. */
export function checksumLeaves(values: ChecksumValues | undefined): (Xml | undefined)[] {
  if (!values) return [];
  return XML_CHECKSUM_ALGORITHMS.map((alg) => leaf(checksumElementName(alg), values[alg]));
}

/** Reads the checksum children of `el` (trimmed; empty elements are ignored). */
export function readChecksums(el: XmlElement): ChecksumValues {
  const out: ChecksumValues = {};
  for (const alg of XML_CHECKSUM_ALGORITHMS) {
    const text = leafText(el, checksumElementName(alg))?.trim();
    if (text) out[alg] = text;
  }
  return out;
}
