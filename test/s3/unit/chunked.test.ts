/**
 * aws-chunked decoding: the published signed-streaming and signed-trailer examples, the
 * unsigned-trailer bodies SDK v3 and botocore send, every split point of small bodies, each
 * malformed input with its error (and no wrong bytes before it), backpressure, and bounded
 * memory however the input is fragmented (staging, line and trailer caps, the reservation).
 */
import { describe, expect, it } from 'vitest';
import { verifyRequest } from '../../../src/s3/auth/index.js';
import type { PayloadMode } from '../../../src/s3/auth/types.js';
import {
  AwsChunkedDecoder,
  awsChunkedOptionsFromHeaders,
  chunkSignature,
  trailerSignature,
  type AwsChunkedOptions,
  DECODER_WORKING_BYTES,
  DIRECT_MIN_BYTES,
  MAX_CHUNK_LINE_BYTES,
  MAX_TRAILER_BYTES,
  STAGING_BYTES,
} from '../../../src/s3/chunked/index.js';
import { S3Error, type S3ErrorCode } from '../../../src/s3/errors.js';
import { sha256Hex } from '../../../src/sigv4/hash.js';
import { deriveSigningKey } from '../../../src/sigv4/signing-key.js';
import { prng, randomBytes } from '../../support/random.js';
import { AWS_EXAMPLE, expectS3Error, lookup } from './helpers.js';

const SCOPE = '20130524/us-east-1/s3/aws4_request';
const AMZ_DATE = '20130524T000000Z';
const KEY = deriveSigningKey(AWS_EXAMPLE.secretAccessKey, '20130524', 'us-east-1', 's3');

function signedMode(
  seed: string,
  trailer = false
): Extract<PayloadMode, { mode: 'streaming-signed' }> {
  return {
    mode: 'streaming-signed',
    trailer,
    seedSignature: seed,
    signingKey: KEY,
    scope: SCOPE,
    amzDate: AMZ_DATE,
  };
}
const UNSIGNED_TRAILER = { mode: 'streaming-unsigned-trailer' } as const;

async function* feed(pieces: readonly Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const p of pieces) yield p;
}

interface Outcome {
  data: Buffer;
  trailers?: ReadonlyMap<string, string>;
  error?: S3Error;
}

async function run(options: AwsChunkedOptions, pieces: readonly Uint8Array[]): Promise<Outcome> {
  const decoder = new AwsChunkedDecoder(options);
  const out: Uint8Array[] = [];
  try {
    for await (const piece of decoder.decode(feed(pieces))) out.push(Buffer.from(piece));
  } catch (e) {
    if (!(e instanceof S3Error)) throw e;
    return { data: Buffer.concat(out), error: e };
  }
  return { data: Buffer.concat(out), trailers: decoder.trailers };
}

function expectError(o: Outcome, code: S3ErrorCode, valid: Uint8Array): void {
  expect(o.error?.code, o.error?.message ?? 'no error').toBe(code);
  // Whatever came out before the error is a prefix of the true payload: never wrong bytes.
  expect(Buffer.from(valid.subarray(0, o.data.length)).equals(o.data)).toBe(true);
}

const A = Buffer.alloc(66560, 'a');
const CHUNK1 = 'ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648';
const CHUNK2 = '0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497';
const FINAL = 'b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9';
const SEED = '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9';

/** The body of the AWS "sigv4-streaming" example: 64 KiB + 1 KiB of 'a' and the final chunk. */
const PUBLISHED = Buffer.concat([
  Buffer.from(`10000;chunk-signature=${CHUNK1}\r\n`),
  A.subarray(0, 65536),
  Buffer.from(`\r\n400;chunk-signature=${CHUNK2}\r\n`),
  A.subarray(65536),
  Buffer.from(`\r\n0;chunk-signature=${FINAL}\r\n\r\n`),
]);

function slices(body: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < body.length; i += size) out.push(body.subarray(i, i + size));
  return out;
}

/** Frames `chunks` as a signed aws-chunked body, chaining from `seed`. */
function frameSigned(
  chunks: readonly Uint8Array[],
  seed: string,
  trailers?: Map<string, string>
): Buffer {
  const ctx = { signingKey: KEY, scope: SCOPE, amzDate: AMZ_DATE };
  let prev = seed;
  const parts: Buffer[] = [];
  for (const c of [...chunks, new Uint8Array(0)]) {
    prev = chunkSignature(ctx, prev, sha256Hex(c));
    parts.push(Buffer.from(`${c.length.toString(16)};chunk-signature=${prev}\r\n`));
    if (c.length > 0) parts.push(Buffer.from(c), Buffer.from('\r\n'));
  }
  if (trailers) {
    for (const [k, v] of trailers) parts.push(Buffer.from(`${k}:${v}\r\n`));
    parts.push(Buffer.from(`x-amz-trailer-signature:${trailerSignature(ctx, prev, trailers)}\r\n`));
  }
  parts.push(Buffer.from('\r\n'));
  return Buffer.concat(parts);
}

function frameUnsigned(chunks: readonly Uint8Array[], trailers: string): Buffer {
  const parts: Buffer[] = [];
  for (const c of chunks)
    parts.push(Buffer.from(`${c.length.toString(16)}\r\n`), Buffer.from(c), Buffer.from('\r\n'));
  parts.push(Buffer.from(`0\r\n${trailers}\r\n`));
  return Buffer.concat(parts);
}

describe('the published signed examples', () => {
  it('the sigv4-streaming example decodes and verifies, however the input is sliced', async () => {
    expect(PUBLISHED.length).toBe(66824); // the example's Content-Length
    for (const size of [1, 7, 8192, 65536, 65600, PUBLISHED.length]) {
      const o = await run(
        { decodedLength: 66560, payload: signedMode(SEED) },
        slices(PUBLISHED, size)
      );
      expect(o.error, `slice ${size}`).toBeUndefined();
      expect(o.data.equals(A)).toBe(true);
      expect(o.trailers?.size).toBe(0);
    }
  });

  it('works from verifyRequest and the request headers', async () => {
    const headers = {
      host: 's3.amazonaws.com',
      'x-amz-date': AMZ_DATE,
      'x-amz-storage-class': 'REDUCED_REDUNDANCY',
      'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
      'content-encoding': 'aws-chunked',
      'x-amz-decoded-content-length': '66560',
      'content-length': '66824',
      authorization:
        `AWS4-HMAC-SHA256 Credential=${AWS_EXAMPLE.accessKeyId}/${SCOPE},SignedHeaders=content-encoding;` +
        `content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;` +
        `x-amz-storage-class,Signature=${SEED}`,
    };
    const auth = verifyRequest(
      {
        method: 'PUT',
        rawTarget: '/examplebucket/chunkObject.txt',
        headers,
        now: new Date(Date.UTC(2013, 4, 24)),
      },
      lookup
    );
    if (auth.payload.mode !== 'streaming-signed') throw new Error('expected streaming-signed');
    const o = await run(awsChunkedOptionsFromHeaders(headers, auth.payload), [PUBLISHED]);
    expect(o.data.equals(A)).toBe(true);
  });

  it('one changed data byte fails the chain at the end of its chunk', async () => {
    // Data streams on before its chunk verifies (memory stays bounded); the forged chunk
    // fails the body before anything after it is yielded, and the body never completes.
    for (const at of [100, 65536 + 200]) {
      const chunkEnd = at < 65536 ? 65536 : 66560;
      const chunkStart = at < 65536 ? 0 : 65536;
      const body = Buffer.from(PUBLISHED);
      const offset = at < 65536 ? at + 88 : at + 88 + 2 + 86;
      body[offset] = 'b'.charCodeAt(0);
      for (const size of [1, 4096, body.length]) {
        const o = await run({ decodedLength: 66560, payload: signedMode(SEED) }, slices(body, size));
        expect(o.error?.code).toBe('SignatureDoesNotMatch');
        expect(o.trailers).toBeUndefined();
        expect(o.data.length).toBeLessThanOrEqual(chunkEnd);
        const before = Math.min(o.data.length, chunkStart);
        expect(o.data.subarray(0, before).equals(A.subarray(0, before))).toBe(true);
      }
    }
  });

  it('a wrong seed or a missing chunk signature fails', async () => {
    const o = await run({ decodedLength: 66560, payload: signedMode(CHUNK1) }, [PUBLISHED]);
    expectError(o, 'SignatureDoesNotMatch', A);
    const unsignedFraming = frameUnsigned([A], '');
    expectError(
      await run({ decodedLength: 66560, payload: signedMode(SEED) }, [unsignedFraming]),
      'SignatureDoesNotMatch',
      A
    );
  });

  it('the sigv4-streaming-trailers example decodes, verifies and exposes the trailer', async () => {
    const seed = '106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e';
    const tail =
      'x-amz-checksum-crc32c:sOO8/Q==\r\n' +
      'x-amz-trailer-signature:d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435\r\n\r\n';
    const body = (between: string, trailer = tail) =>
      Buffer.concat([
        Buffer.from(
          '10000;chunk-signature=b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2\r\n'
        ),
        A.subarray(0, 65536),
        Buffer.from(
          '\r\n400;chunk-signature=1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7\r\n'
        ),
        A.subarray(65536),
        Buffer.from(
          '\r\n0;chunk-signature=2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992\r\n'
        ),
        Buffer.from(between + trailer),
      ]);
    const options = {
      decodedLength: 66560,
      payload: signedMode(seed, true),
      declaredTrailers: ['x-amz-checksum-crc32c'],
    };
    // Some encoders put an empty line between the final chunk and the trailers: tolerated.
    for (const between of ['', '\r\n']) {
      const o = await run(options, slices(body(between), 777));
      expect(o.error).toBeUndefined();
      expect(o.data.equals(A)).toBe(true);
      expect([...o.trailers!]).toEqual([['x-amz-checksum-crc32c', 'sOO8/Q==']]);
    }
    const forged = body('', tail.replace('sOO8/Q==', 'sOO8/A=='));
    expectError(await run(options, [forged]), 'SignatureDoesNotMatch', A);
    const unsignedTrailer = body('', 'x-amz-checksum-crc32c:sOO8/Q==\r\n\r\n');
    expectError(await run(options, [unsignedTrailer]), 'SignatureDoesNotMatch', A);
  });
});

describe('unsigned bodies with trailers (SDK v3, botocore)', () => {
  it('decodes the observed SDK v3 framing of 100 000 bytes', async () => {
    const data = Buffer.alloc(100000, 'b');
    const body = Buffer.concat([
      Buffer.from('186a0\r\n'),
      data,
      Buffer.from('\r\n0\r\nx-amz-checksum-crc32:90+82A==\r\n\r\n'),
    ]);
    const o = await run(
      {
        decodedLength: 100000,
        payload: UNSIGNED_TRAILER,
        declaredTrailers: ['x-amz-checksum-crc32'],
      },
      slices(body, 16384)
    );
    expect(o.error).toBeUndefined();
    expect(o.data.equals(data)).toBe(true);
    expect(o.trailers?.get('x-amz-checksum-crc32')).toBe('90+82A==');
  });

  it('decodes aws-cli style 1 MiB chunks and options read from headers', async () => {
    const data = Buffer.from(randomBytes(2.5 * 1024 * 1024, 11));
    const body = frameUnsigned(
      [data.subarray(0, 1 << 20), data.subarray(1 << 20, 2 << 20), data.subarray(2 << 20)],
      'x-amz-checksum-crc32:ak84Xw==\r\n'
    );
    const headers = {
      'x-amz-decoded-content-length': String(data.length),
      'x-amz-trailer': 'X-Amz-Checksum-CRC32',
    };
    const o = await run(
      awsChunkedOptionsFromHeaders(headers, UNSIGNED_TRAILER),
      slices(body, 65536)
    );
    expect(o.error).toBeUndefined();
    expect(o.data.equals(data)).toBe(true);
    expect(o.trailers?.get('x-amz-checksum-crc32')).toBe('ak84Xw==');
  });

  it('accepts an empty body and a trailer line ending in a bare LF', async () => {
    const o = await run({ decodedLength: 0, payload: UNSIGNED_TRAILER }, [
      Buffer.from('0\r\n\r\n'),
    ]);
    expect(o.error).toBeUndefined();
    expect(o.data.length).toBe(0);
    const lf = await run(
      { decodedLength: 5, payload: UNSIGNED_TRAILER, declaredTrailers: ['x-amz-checksum-crc32'] },
      [Buffer.from('5\r\nhello\r\n0\r\nx-amz-checksum-crc32:NhCmhg==\n\r\n')]
    );
    expect(lf.error).toBeUndefined();
    expect(lf.trailers?.get('x-amz-checksum-crc32')).toBe('NhCmhg==');
  });

  it('header helper errors', () => {
    expectS3Error(() => awsChunkedOptionsFromHeaders({}, UNSIGNED_TRAILER), 'MissingContentLength');
    expectS3Error(
      () =>
        awsChunkedOptionsFromHeaders({ 'x-amz-decoded-content-length': '-1' }, UNSIGNED_TRAILER),
      'InvalidArgument'
    );
  });
});

describe('every split point', () => {
  const data = Buffer.from('hello, chunked world!');
  const pieces = [data.subarray(0, 9), data.subarray(9, 12), data.subarray(12)];
  const seed = 'f'.repeat(64);
  const bodies: [string, Buffer, AwsChunkedOptions][] = [
    [
      'signed',
      frameSigned(pieces, seed),
      { decodedLength: data.length, payload: signedMode(seed) },
    ],
    [
      'signed with trailer',
      frameSigned(pieces, seed, new Map([['x-amz-checksum-sha256', 'abc=']])),
      {
        decodedLength: data.length,
        payload: signedMode(seed, true),
        declaredTrailers: ['x-amz-checksum-sha256'],
      },
    ],
    [
      'unsigned with trailer',
      frameUnsigned(pieces, 'x-amz-checksum-crc32c:AAAAAA==\r\n'),
      {
        decodedLength: data.length,
        payload: UNSIGNED_TRAILER,
        declaredTrailers: ['x-amz-checksum-crc32c'],
      },
    ],
  ];

  for (const [name, body, options] of bodies) {
    it(`${name}: all two-piece splits, byte by byte, and seeded random splits`, async () => {
      for (let i = 0; i <= body.length; i++) {
        const o = await run(options, [body.subarray(0, i), body.subarray(i)]);
        expect(o.error, `split at ${i}`).toBeUndefined();
        expect(o.data.equals(data)).toBe(true);
      }
      expect((await run(options, slices(body, 1))).data.equals(data)).toBe(true);
      const next = prng(14);
      for (let round = 0; round < 200; round++) {
        const cuts = [0];
        while (cuts[cuts.length - 1]! < body.length)
          cuts.push(cuts[cuts.length - 1]! + 1 + (next() % 24));
        const parts = cuts.slice(0, -1).map((c, k) => body.subarray(c, cuts[k + 1]));
        const o = await run(options, parts);
        expect(o.data.equals(data), `round ${round}`).toBe(true);
      }
    });

    it(`${name}: every truncation is IncompleteBody with only valid bytes before it`, async () => {
      for (let len = 0; len < body.length; len++) {
        const o = await run(options, slices(body.subarray(0, len), 5));
        // Cutting the final CRLF off leaves a body that ended early too.
        expectError(o, 'IncompleteBody', data);
      }
    });
  }
});

describe('malformed bodies', () => {
  const data = Buffer.from('0123456789abcdef');
  const ok = (decodedLength = data.length): AwsChunkedOptions => ({
    decodedLength,
    payload: UNSIGNED_TRAILER,
  });
  const cases: [string, string | Buffer, S3ErrorCode, AwsChunkedOptions?][] = [
    ['a non-hex size', 'zz\r\n', 'InvalidRequest'],
    ['a negative size', '-10\r\n', 'InvalidRequest'],
    ['a size with spaces', ' 10\r\n', 'InvalidRequest'],
    [
      'a size of more than 16 hex digits',
      '00000000000000010\r\n' + data + '\r\n0\r\n\r\n',
      'InvalidRequest',
    ],
    ['a huge size', 'ffffffffffffffff\r\n', 'IncompleteBody'],
    ['a size line without CR', '10\n', 'InvalidRequest'],
    ['data not followed by CRLF', `10\r\n${data}XX0\r\n\r\n`, 'InvalidRequest'],
    ['data after the final chunk', `10\r\n${data}\r\n0\r\n\r\nmore`, 'InvalidRequest'],
    ['a second body after the end', `10\r\n${data}\r\n0\r\n\r\n0\r\n\r\n`, 'InvalidRequest'],
    ['an overlong size line', '1' + ';x'.repeat(3000) + '\r\n', 'InvalidRequest'],
    ['more data than declared', `10\r\n${data}\r\n0\r\n\r\n`, 'IncompleteBody', ok(15)],
    ['less data than declared', `10\r\n${data}\r\n0\r\n\r\n`, 'IncompleteBody', ok(17)],
    ['an undeclared trailer', `10\r\n${data}\r\n0\r\nx-amz-foo:1\r\n\r\n`, 'InvalidRequest'],
    ['a malformed trailer', `10\r\n${data}\r\n0\r\nno-colon\r\n\r\n`, 'InvalidRequest'],
    [
      'a missing declared trailer',
      `10\r\n${data}\r\n0\r\n\r\n`,
      'InvalidRequest',
      { ...ok(), declaredTrailers: ['x-amz-checksum-crc32'] },
    ],
    [
      'trailers without a -TRAILER payload',
      frameSigned([data], 'e'.repeat(64), new Map([['x-amz-checksum-crc32', 'AAAAAA==']])),
      'InvalidRequest',
      {
        decodedLength: data.length,
        payload: signedMode('e'.repeat(64)),
        declaredTrailers: ['x-amz-checksum-crc32'],
      },
    ],
    [
      'a signed chunk over the buffering limit',
      frameSigned([data], 'e'.repeat(64)),
      'InvalidRequest',
      { decodedLength: data.length, payload: signedMode('e'.repeat(64)), maxChunkBytes: 8 },
    ],
  ];
  for (const [what, body, code, options] of cases) {
    it(`${what} is ${code}`, async () => {
      const buf = typeof body === 'string' ? Buffer.from(body) : body;
      for (const size of [1, 3, buf.length || 1]) {
        const o = await run(options ?? ok(), slices(buf, size));
        expectError(o, code, data);
      }
    });
  }

  it('no byte beyond the declared length is ever yielded', async () => {
    const o = await run(ok(4), [Buffer.from(`10\r\n${data}\r\n0\r\n\r\n`)]);
    expect(o.error?.code).toBe('IncompleteBody');
    expect(o.data.length).toBe(0);
  });
});

describe('backpressure', () => {
  it('pulls input only as output is consumed', async () => {
    const chunk = Buffer.alloc(64 * 1024, 7);
    const count = 64;
    const body = frameUnsigned(
      Array.from({ length: count }, () => chunk),
      ''
    );
    let pulled = 0;
    async function* source() {
      for (const piece of slices(body, 64 * 1024)) {
        pulled++;
        yield piece;
      }
    }
    const decoder = new AwsChunkedDecoder({
      decodedLength: count * chunk.length,
      payload: UNSIGNED_TRAILER,
    });
    const it = decoder.decode(source());
    for (let i = 0; i < 3; i++) await it.next();
    // A slow consumer that took three pieces has caused at most a few input pulls.
    expect(pulled).toBeLessThanOrEqual(4);
    await new Promise((r) => setTimeout(r, 20));
    expect(pulled).toBeLessThanOrEqual(4);
    let total = 3;
    for (let r = await it.next(); !r.done; r = await it.next()) total++;
    expect(pulled).toBe(Math.ceil(body.length / (64 * 1024)));
    expect(total).toBeGreaterThan(count);
  });

  it('streams a signed chunk before its end instead of holding it', async () => {
    const seed = 'a'.repeat(64);
    const chunk = Buffer.from(randomBytes(1 << 20, 5));
    const body = frameSigned([chunk], seed);
    let pulled = 0;
    async function* source() {
      for (const piece of slices(body, 1000)) {
        pulled++;
        yield piece;
      }
    }
    const decoder = new AwsChunkedDecoder({ decodedLength: chunk.length, payload: signedMode(seed) });
    const it = decoder.decode(source());
    const first = await it.next();
    // The first output is one full staging buffer, long before the 1 MiB chunk ends.
    expect(first.value?.length).toBe(STAGING_BYTES);
    expect(pulled * 1000).toBeLessThan(STAGING_BYTES + 2000 + 100);
    const out = [Buffer.from(first.value!)];
    for (let r = await it.next(); !r.done; r = await it.next()) out.push(Buffer.from(r.value));
    expect(Buffer.concat(out).equals(chunk)).toBe(true);
  });

  it('decode can run only once', async () => {
    const decoder = new AwsChunkedDecoder({ decodedLength: 0, payload: UNSIGNED_TRAILER });
    expect(decoder.trailers).toBeUndefined();
    for await (const _ of decoder.decode(feed([Buffer.from('0\r\n\r\n')]))) void _;
    expect(decoder.trailers?.size).toBe(0);
    await expect(decoder.decode(feed([])).next()).rejects.toThrow(/once/);
  });
});

describe('bounded memory, however the body is fragmented', () => {
  const seed = 'c'.repeat(64);

  /** Runs `pieces` through a decoder and records every output buffer (not copied). */
  async function outputs(options: AwsChunkedOptions, pieces: readonly Uint8Array[]) {
    const decoder = new AwsChunkedDecoder(options);
    const out: Uint8Array[] = [];
    for await (const piece of decoder.decode(feed(pieces))) out.push(piece);
    return out;
  }

  it('1-byte pieces come out as a few staging buffers, never as views of the input', async () => {
    const data = Buffer.from(randomBytes(200_000, 21));
    for (const [name, body, options] of [
      ['signed', frameSigned([data.subarray(0, 150_000), data.subarray(150_000)], seed), { decodedLength: data.length, payload: signedMode(seed) }],
      ['unsigned', frameUnsigned([data], 'x-amz-checksum-crc32:AAAAAA==\r\n'), { decodedLength: data.length, payload: UNSIGNED_TRAILER, declaredTrailers: ['x-amz-checksum-crc32'] }],
    ] as const) {
      const pieces = slices(body, 1);
      const inputs = new Set(pieces.map((p) => p.buffer));
      const out = await outputs(options, pieces);
      expect(Buffer.concat(out).equals(data), name).toBe(true);
      expect(out.length, name).toBe(Math.ceil(data.length / STAGING_BYTES));
      for (const o of out.slice(0, -1)) expect(o.length).toBe(STAGING_BYTES);
      for (const o of out) expect(inputs.has(o.buffer as ArrayBuffer)).toBe(false);
    }
  });

  it('large pieces pass through as views (no copy) when nothing is staged', async () => {
    const data = Buffer.from(randomBytes(300_000, 22));
    const body = frameSigned([data], seed);
    const out = await outputs({ decodedLength: data.length, payload: signedMode(seed) }, slices(body, 65536));
    expect(Buffer.concat(out).equals(data)).toBe(true);
    // Views of the one input buffer: every output but the staged tails is ≥ DIRECT_MIN_BYTES.
    expect(out.filter((o) => o.buffer === body.buffer).length).toBeGreaterThan(0);
    for (const o of out) if (o.buffer === body.buffer) expect(o.length).toBeGreaterThanOrEqual(DIRECT_MIN_BYTES);
  });

  it('every mix of piece sizes decodes to the same bytes (seeded)', async () => {
    const data = Buffer.from(randomBytes(180_000, 23));
    const chunks = [data.subarray(0, 70_000), data.subarray(70_000, 70_001), data.subarray(70_001)];
    const body = frameSigned(chunks, seed);
    const next = prng(24);
    for (let round = 0; round < 40; round++) {
      const parts: Uint8Array[] = [];
      for (let i = 0; i < body.length; ) {
        const r = next() % 4;
        const n = r === 0 ? 1 : r === 1 ? 1 + (next() % 100) : r === 2 ? 1 + (next() % 20_000) : 1 + (next() % 70_000);
        parts.push(body.subarray(i, i + n));
        i += n;
      }
      const out = await outputs({ decodedLength: data.length, payload: signedMode(seed) }, parts);
      expect(Buffer.concat(out).equals(data), `round ${round}`).toBe(true);
    }
  });

  it('reserves its working memory before reading, and releases it however decoding ends', async () => {
    const data = Buffer.from('some data here');
    const good = frameSigned([data], seed);
    const events: string[] = [];
    let pulled = 0;
    const reserve = (n: number) => {
      events.push(`reserve ${n} after ${pulled} pulls`);
      return () => events.push('release');
    };
    async function* counting(pieces: readonly Uint8Array[]) {
      for (const p of pieces) {
        pulled++;
        yield p;
      }
    }
    const decode = (body: Uint8Array) =>
      new AwsChunkedDecoder({ decodedLength: data.length, payload: signedMode(seed), reserve }).decode(counting(slices(body, 3)));

    // Completed.
    for await (const _ of decode(good)) void _;
    expect(events).toEqual([`reserve ${DECODER_WORKING_BYTES} after 0 pulls`, 'release']);
    // Failed (forged signature).
    events.length = 0;
    pulled = 0;
    const forged = Buffer.from(good);
    forged[forged.indexOf('some')] = 'S'.charCodeAt(0);
    await expect((async () => { for await (const _ of decode(forged)) void _; })()).rejects.toThrow(/signature/);
    expect(events).toEqual([`reserve ${DECODER_WORKING_BYTES} after 0 pulls`, 'release']);
    // Returned early by its consumer.
    events.length = 0;
    pulled = 0;
    const big = Buffer.from(randomBytes(3 * STAGING_BYTES, 25));
    const it = new AwsChunkedDecoder({ decodedLength: big.length, payload: signedMode(seed), reserve }).decode(feed(slices(frameSigned([big], seed), 100)));
    await it.next();
    expect(events.length).toBe(1);
    await it.return(undefined);
    expect(events).toEqual([`reserve ${DECODER_WORKING_BYTES} after 0 pulls`, 'release']);
  });

  it('a refused reservation fails decoding before any input is read', async () => {
    let pulled = 0;
    async function* source() {
      pulled++;
      yield Buffer.from('0\r\n\r\n');
    }
    const refuse = () => {
      throw new S3Error('SlowDown');
    };
    const d = new AwsChunkedDecoder({ decodedLength: 0, payload: UNSIGNED_TRAILER, reserve: refuse });
    await expect(d.decode(source()).next()).rejects.toMatchObject({ code: 'SlowDown' });
    expect(pulled).toBe(0);
  });

  it('caps chunk-header lines at MAX_CHUNK_LINE_BYTES, fed whole or byte by byte', async () => {
    const data = Buffer.from('0123456789abcdef');
    const at = (lineBytes: number) =>
      Buffer.from(`10;${'x'.repeat(lineBytes - 4)}\r\n${data}\r\n0\r\n\r\n`);
    expect(at(MAX_CHUNK_LINE_BYTES).indexOf('\n')).toBe(MAX_CHUNK_LINE_BYTES);
    for (const size of [1, 7, 100_000]) {
      const ok = await run({ decodedLength: 16, payload: UNSIGNED_TRAILER }, slices(at(MAX_CHUNK_LINE_BYTES), size));
      expect(ok.error).toBeUndefined();
      expect(ok.data.equals(data)).toBe(true);
      const over = await run({ decodedLength: 16, payload: UNSIGNED_TRAILER }, slices(at(MAX_CHUNK_LINE_BYTES + 1), size));
      expect(over.error?.message).toMatch(/line too long/);
      // A line with no LF at all fails as soon as it is too long, not at the end of input.
      const endless = await run({ decodedLength: 16, payload: UNSIGNED_TRAILER }, slices(Buffer.alloc(1 << 20, 'f'), size));
      expect(endless.error?.message).toMatch(/line too long/);
    }
  });

  it('caps the trailer section and refuses an undeclared trailer as soon as it is read', async () => {
    const data = Buffer.from('0123456789abcdef');
    const opts = { decodedLength: 16, payload: UNSIGNED_TRAILER, declaredTrailers: ['x-amz-checksum-crc32'] };
    // Many repeated-looking but distinct trailer names would each be refused at once...
    const undeclared = Buffer.from(`10\r\n${data}\r\n0\r\nx-amz-meta-a:1\r\n`); // no end: truncated
    expect((await run(opts, slices(undeclared, 1))).error?.message).toMatch(/not declared/);
    // ...and a section past MAX_TRAILER_BYTES fails even if every line is short and declared.
    const value = 'A'.repeat(MAX_CHUNK_LINE_BYTES - 30);
    const lines = Array.from({ length: Math.ceil(MAX_TRAILER_BYTES / value.length) + 1 }, () => `x-amz-checksum-crc32:${value}\r\n`).join('');
    const huge = Buffer.from(`10\r\n${data}\r\n0\r\n${lines}\r\n`);
    const o = await run(opts, slices(huge, 5));
    expect(o.error?.code).toBe('InvalidRequest');
    expect(o.error?.message).toMatch(/trailers too large|repeated/);
    const oneLong = Buffer.from(`10\r\n${data}\r\n0\r\nx-amz-checksum-crc32:${'A'.repeat(MAX_TRAILER_BYTES)}\r\n\r\n`);
    expect((await run(opts, slices(oneLong, 64))).error?.message).toMatch(/too long|too large/);
  });

  it('a body of 100 000 one-byte chunks decodes into a handful of buffers', async () => {
    const data = Buffer.from(randomBytes(100_000, 26));
    const body = frameUnsigned(Array.from(data, (_, i) => data.subarray(i, i + 1)), '');
    const out = await outputs({ decodedLength: data.length, payload: UNSIGNED_TRAILER }, slices(body, 4096));
    expect(Buffer.concat(out).equals(data)).toBe(true);
    expect(out.length).toBe(Math.ceil(data.length / STAGING_BYTES));
  });
});
