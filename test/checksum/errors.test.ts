import { describe, expect, it } from 'vitest';
import {
  ChecksumError,
  checksum,
  combine,
  crc32,
  crc32c,
  crc64nvme,
  createHasher,
  type ChecksumAlgorithm,
} from '../../src/checksum/index.js';
import { createFastHasher } from '../../src/checksum/native.js';
import { availableFlavors } from '../../src/wasm/loader.js';

const FLAVORS = availableFlavors('checksum') as ('simd' | 'scalar')[];
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** Asserts that fn throws a ChecksumError with `code`. */
function expectCode(fn: () => unknown, code: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected ${code}`).toBeInstanceOf(ChecksumError);
  expect((caught as ChecksumError).code).toBe(code);
  expect((caught as Error).name).not.toBe('Error');
}

describe.each(FLAVORS)('bad input is refused with typed errors (%s kernels)', (flavor) => {
  const opts = { flavor };
  const bad = [
    'sha512',
    'SHA256',
    'crc16',
    '',
    undefined,
    null,
    42,
  ] as unknown as ChecksumAlgorithm[];

  it('unknown algorithm names: ERR_CHECKSUM_UNKNOWN_ALGORITHM', () => {
    for (const alg of bad) {
      expectCode(() => createHasher(alg, opts), 'ERR_CHECKSUM_UNKNOWN_ALGORITHM');
      expectCode(() => checksum(alg, new Uint8Array(1), opts), 'ERR_CHECKSUM_UNKNOWN_ALGORITHM');
      expectCode(() => combine(alg as 'crc32', 0, 0, 0, opts), 'ERR_CHECKSUM_UNKNOWN_ALGORITHM');
      expectCode(() => createFastHasher(alg), 'ERR_CHECKSUM_UNKNOWN_ALGORITHM');
    }
  });

  it('combine of a hash: ERR_CHECKSUM_UNSUPPORTED_ALGORITHM', () => {
    expectCode(
      () => combine('sha256' as 'crc32', 0, 0, 0, opts),
      'ERR_CHECKSUM_UNSUPPORTED_ALGORITHM'
    );
  });

  it('data that is not a Uint8Array: ERR_CHECKSUM_INVALID_DATA, and the hasher is unharmed', () => {
    const notBytes = [
      'abc',
      [1, 2, 3],
      new ArrayBuffer(4),
      new Uint16Array(2),
      new DataView(new ArrayBuffer(2)),
      null,
      undefined,
      7,
    ];
    const h = createHasher('sha256', opts).update(Uint8Array.of(1));
    for (const d of notBytes as unknown as Uint8Array[]) {
      expectCode(() => h.update(d), 'ERR_CHECKSUM_INVALID_DATA');
      expectCode(() => checksum('md5', d, opts), 'ERR_CHECKSUM_INVALID_DATA');
      expectCode(() => crc32(d, 0, opts), 'ERR_CHECKSUM_INVALID_DATA');
      expectCode(() => crc32c(d, 0, opts), 'ERR_CHECKSUM_INVALID_DATA');
      expectCode(() => crc64nvme(d, 0n, opts), 'ERR_CHECKSUM_INVALID_DATA');
      expectCode(() => createFastHasher('sha256').update(d), 'ERR_CHECKSUM_INVALID_DATA');
    }
    expect(hex(h.update(Uint8Array.of(2)).digest())).toBe(
      hex(checksum('sha256', Uint8Array.of(1, 2), opts))
    );
  });

  it('update or digest after digest: ERR_CHECKSUM_FINISHED until reset()', () => {
    for (const make of [(a: ChecksumAlgorithm) => createHasher(a, opts), createFastHasher]) {
      for (const alg of ['sha256', 'md5', 'sha1', 'crc32', 'crc32c', 'crc64nvme'] as const) {
        const h = make(alg).update(Uint8Array.of(1, 2, 3));
        const first = hex(h.digest());
        expectCode(() => h.update(Uint8Array.of(4)), 'ERR_CHECKSUM_FINISHED');
        expectCode(() => h.digest(), 'ERR_CHECKSUM_FINISHED');
        expect(
          hex(
            h
              .reset()
              .update(Uint8Array.of(1, 2, 3))
              .digest()
          )
        ).toBe(first);
      }
    }
  });

  it('negative, fractional, unsafe or non-numeric lengths: ERR_CHECKSUM_INVALID_LENGTH', () => {
    for (const len of [-1, -1n, 1.5, NaN, Infinity, 2 ** 53, 2n ** 64n, '5', null]) {
      expectCode(() => combine('crc32', 0, 0, len as number, opts), 'ERR_CHECKSUM_INVALID_LENGTH');
      expectCode(
        () => combine('crc64nvme', 0n, 0n, len as number, opts),
        'ERR_CHECKSUM_INVALID_LENGTH'
      );
    }
  });

  it('CRC values and seeds outside their width or of the wrong type: ERR_CHECKSUM_INVALID_CRC', () => {
    for (const v of [-1, 2 ** 32, 0.5, NaN, 1n, '1']) {
      expectCode(() => combine('crc32c', v as number, 0, 1, opts), 'ERR_CHECKSUM_INVALID_CRC');
      expectCode(() => combine('crc32', 0, v as number, 1, opts), 'ERR_CHECKSUM_INVALID_CRC');
      expectCode(() => crc32(new Uint8Array(1), v as number, opts), 'ERR_CHECKSUM_INVALID_CRC');
      expectCode(() => crc32c(new Uint8Array(1), v as number, opts), 'ERR_CHECKSUM_INVALID_CRC');
    }
    for (const v of [-1n, 2n ** 64n, 1, '1']) {
      expectCode(() => combine('crc64nvme', v as bigint, 0n, 1, opts), 'ERR_CHECKSUM_INVALID_CRC');
      expectCode(() => crc64nvme(new Uint8Array(1), v as bigint, opts), 'ERR_CHECKSUM_INVALID_CRC');
    }
  });
});

it('an unknown or unbuilt flavor: ERR_CHECKSUM_FLAVOR_UNAVAILABLE', () => {
  for (const flavor of ['relaxed', 'avx512', '']) {
    const opts = { flavor } as unknown as { flavor: 'simd' };
    expectCode(() => createHasher('sha256', opts), 'ERR_CHECKSUM_FLAVOR_UNAVAILABLE');
    expectCode(
      () => checksum('sha256', new Uint8Array(0), opts),
      'ERR_CHECKSUM_FLAVOR_UNAVAILABLE'
    );
    expectCode(() => crc32c(new Uint8Array(0), 0, opts), 'ERR_CHECKSUM_FLAVOR_UNAVAILABLE');
  }
});
