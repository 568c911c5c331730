/**
 * headIsDeleted: LIST's two-byte liveness check for keys rolled into a common prefix must
 * agree with a full decode on every well-formed version list, and fail closed (StoreError
 * 'Corrupt') on what a full decode would refuse in the bytes it reads.
 */
import { describe, expect, it } from 'vitest';
import { decodeVersions, encodeVersions, headIsDeleted, TOMBSTONE, type ObjectVersion } from '../../src/store/records.js';
import { StoreError } from '../../src/store/errors.js';

function version(over: Partial<ObjectVersion>): ObjectVersion {
  return {
    versionId: 'v1',
    deleteMarker: false,
    size: 3,
    md5: new Uint8Array(16).fill(1),
    partCount: 0,
    lastModified: 1_700_000_000_000,
    system: {},
    userMetadata: {},
    tags: {},
    location: { kind: 'empty' },
    ...over,
  };
}

const full = (bytes: Uint8Array): boolean => {
  const v = decodeVersions(bytes)[0];
  return !v || v.deleteMarker;
};

describe('headIsDeleted', () => {
  const shapes: ObjectVersion[] = [
    version({}),
    version({ deleteMarker: true }),
    version({ access: { owner: 'AK', acl: 'public-read' } }),
    version({ deleteMarker: true, logId: 'x'.repeat(20) }),
    version({ checksums: { type: 'FULL_OBJECT', primary: 'crc32', values: { crc32: new Uint8Array(4) } } }),
  ];

  it('agrees with a full decode for tombstones, live heads, delete markers and long lists', () => {
    expect(headIsDeleted(TOMBSTONE)).toBe(true);
    for (const a of shapes) {
      expect(headIsDeleted(encodeVersions([a]))).toBe(full(encodeVersions([a])));
      for (const b of shapes) expect(headIsDeleted(encodeVersions([a, b]))).toBe(a.deleteMarker);
    }
    // 130 versions: a two-byte count, decided by the full decode.
    const many = encodeVersions(Array.from({ length: 130 }, (_, i) => version({ deleteMarker: i === 0 })));
    expect(headIsDeleted(many)).toBe(true);
  });

  it('fails closed on unknown flags, empty and truncated bytes, and bytes after a tombstone', () => {
    const live = encodeVersions([version({})]);
    const bad = live.slice();
    bad[1] = 0x80;
    for (const bytes of [bad, new Uint8Array(0), Uint8Array.of(1), Uint8Array.of(0, 0), Uint8Array.of(0x81)]) {
      expect(() => headIsDeleted(bytes), `bytes ${[...bytes]}`).toThrow(StoreError);
    }
  });
});
