/**
 * @module The checksums of a completed multipart object.
 *
 *   ETag       MD5(md5(part 1) || ... || md5(part N)) "-N"
 *   COMPOSITE  ALG(alg(part 1) || ... || alg(part N)) "-N"   (CRC32, CRC32C, SHA-1, SHA-256)
 *   FULL_OBJECT  the CRC of the whole body, combined from the parts' CRCs without reading
 *              a byte (CRC32, CRC32C, CRC64NVME)
 *
 * CRC64NVME full-object is always kept as well (every part has it).
 */
import { createHash } from 'node:crypto';
import { combine } from '../checksum/combine.js';
import { createFastHasher } from '../checksum/native.js';
import type { PartRecord, UploadRecord } from './uploads.js';
import type { ChecksumName, ChecksumType, ObjectVersion } from './records.js';
import { StoreError } from './errors.js';

const CRC_BYTES = { crc32: 4, crc32c: 4, crc64nvme: 8 } as const;
type Crc = keyof typeof CRC_BYTES;
const isCrc = (n: ChecksumName): n is Crc => n in CRC_BYTES;

function toBig(bytes: Uint8Array): bigint {
  return BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
}

function fromBig(v: bigint, bytes: number): Uint8Array {
  return Buffer.from(v.toString(16).padStart(bytes * 2, '0'), 'hex');
}

/** The whole-body CRC from the parts' CRCs and sizes. */
export function combineParts(alg: Crc, parts: readonly PartRecord[]): Uint8Array {
  if (alg === 'crc64nvme') {
    let acc = 0n;
    parts.forEach((p, i) => {
      const v = toBig(p.values.crc64nvme!);
      acc = i === 0 ? v : combine('crc64nvme', acc, v, p.size);
    });
    return fromBig(acc, 8);
  }
  let acc = 0;
  parts.forEach((p, i) => {
    const v = Number(toBig(p.values[alg]!));
    acc = i === 0 ? v : combine(alg, acc, v, p.size);
  });
  return fromBig(BigInt(acc >>> 0), 4);
}

/**
 * The completed object's ETag digest and checksums from its parts (upload `rec`), checked
 * against the whole-object `claims` of the Complete request. Pure. Throws StoreError
 * InvalidRequest (a checksum type other than the upload's, a claim in an algorithm the
 * upload did not compute), BadDigest (a claim that does not match).
 */
export function composeChecksums(
  rec: UploadRecord,
  parts: readonly PartRecord[],
  requestedType: ChecksumType | undefined,
  claims: Partial<Record<ChecksumName, string>> | undefined
): { md5: Uint8Array; checksums: NonNullable<ObjectVersion['checksums']> } {
  const md5 = createHash('md5');
  for (const p of parts) md5.update(p.md5);
  if (requestedType && requestedType !== rec.checksumType) {
    throw new StoreError('InvalidRequest', `The upload was created using the ${rec.checksumType} checksum mode. The complete request must use the same checksum mode.`);
  }
  const primary = rec.checksumAlgorithm ?? 'crc64nvme';
  const values: Partial<Record<ChecksumName, Uint8Array>> = { crc64nvme: combineParts('crc64nvme', parts) };
  let out: NonNullable<ObjectVersion['checksums']>;
  if (rec.checksumType === 'COMPOSITE') {
    const h = createFastHasher(primary);
    for (const p of parts) h.update(p.values[primary]!);
    values[primary] = h.digest();
    out = { type: 'COMPOSITE', primary, values, parts: parts.length };
  } else {
    if (!isCrc(primary)) throw new StoreError('InvalidRequest', `The FULL_OBJECT checksum type cannot be used with ${primary}`);
    values[primary] = combineParts(primary, parts);
    out = { type: 'FULL_OBJECT', primary, values };
  }
  checkObjectClaims(out, claims);
  return { md5: md5.digest(), checksums: out };
}

/**
 * Checks the whole-object `claims` of a Complete request against the object's `checksums`
 * (a COMPOSITE value may be claimed with or without its "-N"). Pure. Throws StoreError
 * InvalidRequest for a claim in an algorithm that was not computed (it cannot be checked),
 * BadDigest for one that does not match.
 */
export function checkObjectClaims(checksums: NonNullable<ObjectVersion['checksums']>, claims: Partial<Record<ChecksumName, string>> | undefined): void {
  const { values, primary } = checksums;
  for (const [name, b64] of Object.entries(claims ?? {}) as [ChecksumName, string][]) {
    const mine = values[name];
    // A claim in an algorithm the upload did not compute cannot be checked: refused, not
    // passed as if it had been.
    if (!mine) {
      throw new StoreError(
        'InvalidRequest',
        `The ${name.toUpperCase()} of the object cannot be verified: the upload computes ${primary.toUpperCase()} (name that algorithm at CreateMultipartUpload).`
      );
    }
    const text = Buffer.from(mine).toString('base64') + (checksums.type === 'COMPOSITE' && name === primary ? `-${checksums.parts ?? 0}` : '');
    if (b64.trim() !== text && b64.trim() !== text.replace(/-\d+$/, '')) {
      throw new StoreError('BadDigest', `The ${name.toUpperCase()} you specified did not match the calculated checksum.`);
    }
  }
}
