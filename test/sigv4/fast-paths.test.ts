/**
 * The request path's hashing shortcuts (src/sigv4/hash.ts, canonical.ts wireText): the
 * one-shot SHA-256 gives the digests createHash gives, for strings (as UTF-8) and bytes of
 * any length; wireText hashes exactly as wireBytes does, for ASCII, latin1 (a header value
 * sent as UTF-8 and read one character per byte) and text above U+00FF; signatureMatches
 * accepts exactly the hex text the string comparison accepted.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmacSha256, sha256Hex, signatureMatches, signaturesEqual, toHex } from '../../src/sigv4/hash.js';
import { wireBytes, wireText } from '../../src/sigv4/canonical.js';

const ref = (d: string | Uint8Array) => createHash('sha256').update(d).digest('hex');

describe('sha256Hex', () => {
  it('matches createHash for strings and bytes', () => {
    for (const s of ['', 'abc', 'ünï', '\u{1f600}', 'x'.repeat(100_000)]) expect(sha256Hex(s)).toBe(ref(s));
    for (const n of [0, 1, 63, 64, 65, 4096, 1 << 20]) {
      const b = randomBytes(n);
      expect(sha256Hex(b)).toBe(ref(b));
      expect(sha256Hex(b.subarray(1))).toBe(ref(b.subarray(1)));
      expect(sha256Hex([b, b])).toBe(ref(Buffer.concat([b, b])));
    }
    expect(sha256Hex(new Uint8Array(0))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('wireText', () => {
  const texts = [
    'GET\n/b/k\n\nhost:h\n\nhost\nUNSIGNED-PAYLOAD',
    'PUT\n/b/k\n\nx-amz-meta-a:caf\u00c3\u00a9\n\nhost\nUNSIGNED-PAYLOAD', // UTF-8 bytes read as latin1
    'PUT\n/b/k\n\nx-amz-meta-a:\u00ff\u0080\u007f\n',
    'text above latin1: \u20ac \u{1f600}',
    '',
  ];
  for (const t of texts) {
    it(`hashes as wireBytes does: ${JSON.stringify(t.slice(-20))}`, () => {
      expect(sha256Hex(wireText(t))).toBe(ref(wireBytes(t)));
    });
  }
  it('passes ASCII through uncopied', () => {
    expect(wireText('plain ascii')).toBe('plain ascii');
    expect(wireText('caf\u00e9')).toBeInstanceOf(Uint8Array);
  });
});

describe('signatureMatches', () => {
  const mac = hmacSha256(randomBytes(32), 'string to sign');
  const hex = toHex(mac);
  it('accepts the lower-case hex of the MAC and nothing else', () => {
    expect(signatureMatches(mac, hex)).toBe(true);
    const cases = [
      hex.toUpperCase(),
      hex.slice(0, 63),
      `${hex}0`,
      `${hex.slice(0, 63)}${hex[63] === '0' ? '1' : '0'}`,
      `${hex.slice(0, 62)}zz`,
      ` ${hex.slice(1)}`,
      '',
      'g'.repeat(64),
      `${hex.slice(0, 32)}\u0000${hex.slice(33)}`,
    ];
    for (const c of cases) {
      expect(signatureMatches(mac, c), c).toBe(false);
      expect(signaturesEqual(hex, c), c).toBe(false);
    }
    expect(signatureMatches(mac.subarray(1), hex.slice(2))).toBe(false);
  });
});
