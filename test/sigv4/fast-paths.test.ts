/**
 * The request path's hashing shortcuts (src/sigv4/hash.ts, canonical.ts wireText): the
 * one-shot SHA-256 gives the digests createHash gives, for strings (as UTF-8) and bytes of
 * any length; wireText hashes exactly as wireBytes does, for ASCII, latin1 (a header value
 * sent as UTF-8 and read one character per byte) and text above U+00FF; signatureMatches
 * accepts exactly the hex text the string comparison accepted; hmacSha256 (two one-shot
 * digests over reused scratch) equals createHmac for any key and data, and its results stay
 * its own; hmacSha256Hex (the inner digest passed as latin1 text) is its hex. The per-request memos (the last signing key, the last x-amz-date, split credential
 * texts) answer as a fresh computation does, whatever order values come in.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmacSha256, hmacSha256Hex, sha256Hex, signatureMatches, signaturesEqual, toHex } from '../../src/sigv4/hash.js';
import { parseAmzDate, wireBytes, wireText } from '../../src/sigv4/canonical.js';
import { deriveSigningKey } from '../../src/sigv4/signing-key.js';
import { parseCredential } from '../../src/s3/auth/v4-core.js';
import { S3Error } from '../../src/s3/errors.js';

const ref = (d: string | Uint8Array) => createHash('sha256').update(d).digest('hex');
const refHexOf = (k: Uint8Array, d: string) => createHmac('sha256', k).update(d).digest('hex');

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

describe('hmacSha256', () => {
  const refMac = (k: string | Uint8Array, d: string | Uint8Array) => createHmac('sha256', k).update(d).digest();

  it('equals createHmac for keys and data of every length around the 64-byte block, as bytes and as UTF-8 text', () => {
    for (const kl of [0, 1, 31, 32, 44, 63, 64, 65, 100, 300]) {
      for (const dl of [0, 1, 55, 56, 63, 64, 65, 150, 5000]) {
        const k = randomBytes(kl);
        const d = randomBytes(dl);
        expect(hmacSha256(k, d).equals(refMac(k, d)), `bytes ${kl}/${dl}`).toBe(true);
        expect(hmacSha256(k.subarray(1), d.subarray(1)).equals(refMac(k.subarray(1), d.subarray(1))), `views ${kl}/${dl}`).toBe(true);
        const ks = 'AWS4' + '\u00e9'.repeat(kl); // two UTF-8 bytes per character
        const ds = 'x\u20ac\u{1f600}'.repeat(dl); // one, three and four bytes
        expect(hmacSha256(ks, ds).equals(refMac(ks, ds)), `text ${kl}/${dl}`).toBe(true);
      }
    }
  });

  it('equals createHmac past its scratch (a large POST policy) and then within it again', () => {
    const k = randomBytes(32);
    for (const n of [16 * 1024 - 64, 16 * 1024 - 63, 16 * 1024, 100_000, 10]) {
      const d = randomBytes(n);
      expect(hmacSha256(k, d).equals(refMac(k, d)), `${n} bytes`).toBe(true);
      const t = 'p'.repeat(n);
      expect(hmacSha256(k, t).equals(refMac(k, t)), `${n} chars`).toBe(true);
    }
  });

  it('hmacSha256Hex is its hex, for keys and data of every length, text and bytes, past the scratch too', () => {
    const refHex = (k: string | Uint8Array, d: string | Uint8Array) => createHmac('sha256', k).update(d).digest('hex');
    for (const kl of [0, 1, 32, 63, 64, 65, 300]) {
      for (const dl of [0, 1, 55, 64, 65, 5000, 16 * 1024, 70_000]) {
        const k = randomBytes(kl);
        const d = randomBytes(dl);
        expect(hmacSha256Hex(k, d), `bytes ${kl}/${dl}`).toBe(refHex(k, d));
        expect(hmacSha256Hex(k, d)).toBe(toHex(hmacSha256(k, d)));
        const ks = 'AWS4' + '\u00e9'.repeat(kl);
        const ds = 'x\u20ac\u{1f600}\u00ff\u0080'.repeat(dl >> 3);
        expect(hmacSha256Hex(ks, ds), `text ${kl}/${dl}`).toBe(refHex(ks, ds));
      }
    }
    // Inner digests whose bytes cover every value 0..255 (each goes through latin1 text):
    // over many random keys, every byte value occurs in some inner digest.
    for (let i = 0; i < 300; i++) {
      const k = randomBytes(32);
      const d = `chunk ${i}`;
      expect(hmacSha256Hex(k, d)).toBe(refHex(k, d));
    }
  });

  it('signatureMatches takes the raw bytes or their hex, and nothing of another length', () => {
    const k = randomBytes(32);
    const hex = refHexOf(k, 'sts');
    expect(signatureMatches(hmacSha256Hex(k, 'sts'), hex)).toBe(true);
    expect(signatureMatches(hmacSha256(k, 'sts'), hex)).toBe(true);
    expect(signatureMatches(hmacSha256Hex(k, 'sts'), hex.replace(/.$/, (c) => (c === '0' ? '1' : '0')))).toBe(false);
    expect(signatureMatches(hex.slice(2), hex.slice(2))).toBe(false); // 62 digits
    expect(signatureMatches(hmacSha256(k, 'sts').subarray(1), hex)).toBe(false);
  });

  it('returns a buffer of its own: a later call does not change an earlier result', () => {
    const k = randomBytes(32);
    const first = hmacSha256(k, 'first');
    const copy = Buffer.from(first);
    hmacSha256(randomBytes(80), 'second, with another key and longer data'.repeat(10));
    expect(first.equals(copy)).toBe(true);
    expect(first.equals(refMac(k, 'first'))).toBe(true);
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

describe('per-request memos', () => {
  /** The signing key by the definition (four HMACs), no cache. */
  const derive = (secret: string, date: string, region: string, service: string) => {
    const h = (k: string | Buffer, d: string) => createHmac('sha256', k).update(d).digest();
    return h(h(h(h(`AWS4${secret}`, date), region), service), 'aws4_request');
  };

  it('deriveSigningKey answers each (secret, day, region, service) with its own key, in any order of asks', () => {
    const asks: [string, string, string, string][] = [];
    for (const secret of ['secret-a', 'secret-b'])
      for (const date of ['20261203', '20261204'])
        for (const region of ['us-east-1', 'eu-west-1']) asks.push([secret, date, region, 's3']);
    asks.push(['secret-a', '20261203', 'us-east-1', 'sts']);
    // Each ask twice in a row (the memo), then all again interleaved (the cache).
    for (const a of [...asks.flatMap((a) => [a, a]), ...asks.reverse()]) {
      expect(deriveSigningKey(...a).equals(derive(...a)), a.join(' ')).toBe(true);
    }
  });

  it('parseAmzDate: the same text twice gives equal but separate dates; a malformed text after a good one is still refused', () => {
    const a = parseAmzDate('20261203T201500Z')!;
    const b = parseAmzDate('20261203T201500Z')!;
    expect(a.toISOString()).toBe('2026-12-03T20:15:00.000Z');
    expect(b).not.toBe(a);
    b.setTime(0); // a caller changing its date changes nobody else's
    expect(parseAmzDate('20261203T201500Z')!.toISOString()).toBe('2026-12-03T20:15:00.000Z');
    expect(parseAmzDate('20261203T2015Z')).toBeUndefined();
    expect(parseAmzDate('20261203T2015Z')).toBeUndefined();
    expect(parseAmzDate('20261203T201501Z')!.toISOString()).toBe('2026-12-03T20:15:01.000Z');
  });

  it('parseCredential checks every request against its own date and region, whatever it parsed before', () => {
    const raw = 'AKIDEXAMPLE/20261203/us-east-1/s3/aws4_request';
    expect(parseCredential(raw, 'header', '20261203T000000Z', undefined)).toEqual({ accessKeyId: 'AKIDEXAMPLE', date: '20261203', region: 'us-east-1' });
    expect(() => parseCredential(raw, 'header', '20261204T000000Z', undefined)).toThrow(S3Error);
    expect(() => parseCredential(raw, 'header', '20261203T000000Z', 'eu-west-1')).toThrow(/region 'us-east-1' is wrong/);
    expect(parseCredential(raw, 'header', '20261203T000000Z', 'us-east-1').region).toBe('us-east-1');
    expect(() => parseCredential('AKIDEXAMPLE/20261203/us-east-1/s4/aws4_request', 'header', '20261203T000000Z', undefined)).toThrow(/incorrect service/);
    const long = `${'K'.repeat(300)}/20261203/us-east-1/s3/aws4_request`; // too long to be kept
    expect(parseCredential(long, 'presigned', '20261203T000000Z', undefined).accessKeyId).toBe('K'.repeat(300));
    expect(parseCredential(long, 'presigned', '20261203T000000Z', undefined).accessKeyId).toBe('K'.repeat(300));
  });
});
