/**
 * The s3 provider's multipart uploads against a small hostile S3 server started here: answers
 * without an UploadId, truncated or oversized XML, a part without an ETag, a completion that
 * says 200 but carries an <Error>, a completion without an ETag whose object then has the
 * wrong size. Every one must fail closed (never report a blob it did not store) and abort the
 * upload; a well-behaved run must send parts of the configured size with their Content-MD5,
 * in order, then complete with their ETags.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createS3Provider, type S3Provider } from '../../src/provider/s3/index.js';
import { expectCode } from './helpers.js';

type Fault =
  | 'no-upload-id'
  | 'truncated-create'
  | 'huge-create'
  | 'part-no-etag'
  | 'complete-200-error'
  | 'complete-no-etag-wrong-size'
  /** Part PUTs answer after PART_DELAY_MS (a slow backend). */
  | 'slow-part';

const PART_DELAY_MS = 150;
/** When each part PUT was answered, and the most part PUTs in flight at once. */
const partAnswers: { part: string; at: number }[] = [];
let partsInFlight = 0;
let maxPartsInFlight = 0;

interface Seen {
  method: string;
  url: string;
  bytes: number;
  md5?: string;
  md5Ok?: boolean;
  body?: string;
  /** When a DELETE was answered. */
  at?: number;
}

const MiB = 1024 * 1024;
let server: Server;
let endpoint = '';
let fault: Fault | undefined;
const seen: Seen[] = [];
const opened: S3Provider[] = [];

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

beforeAll(async () => {
  let partsTotal = 0;
  server = createServer(async (req, res) => {
    const body = await readBody(req);
    const url = new URL(req.url!, 'http://x');
    const md5 = req.headers['content-md5'] as string | undefined;
    seen.push({
      method: req.method!,
      url: req.url!,
      bytes: body.length,
      ...(md5 ? { md5, md5Ok: createHash('md5').update(body).digest('base64') === md5 } : {}),
      ...(req.method === 'POST' ? { body: body.toString() } : {}),
    });
    const xml = (status: number, text: string) => {
      res.writeHead(status, {
        'content-type': 'application/xml',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    };
    if (req.method === 'HEAD') {
      if (fault === 'complete-no-etag-wrong-size') {
        res.writeHead(200, { 'content-length': String(partsTotal + 1), etag: '"abc-2"' });
        return void res.end();
      }
      res.writeHead(404);
      return void res.end();
    }
    if (req.method === 'POST' && url.searchParams.has('uploads')) {
      partsTotal = 0;
      const result = (inner: string) =>
        xml(200, `<InitiateMultipartUploadResult>${inner}</InitiateMultipartUploadResult>`);
      if (fault === 'no-upload-id') return result('<Key>k</Key>');
      if (fault === 'truncated-create') return xml(200, '<InitiateMultipartUploadResult><Upl');
      if (fault === 'huge-create') return result(`<UploadId>${'u'.repeat(70_000)}</UploadId>`);
      return result('<UploadId>u1</UploadId>');
    }
    if (req.method === 'PUT' && url.searchParams.has('partNumber')) {
      partsTotal += body.length;
      const part = url.searchParams.get('partNumber');
      if (fault === 'slow-part') {
        partsInFlight++;
        maxPartsInFlight = Math.max(maxPartsInFlight, partsInFlight);
        await new Promise((r) => setTimeout(r, PART_DELAY_MS));
        partsInFlight--;
        partAnswers.push({ part: part!, at: performance.now() });
      }
      res.writeHead(200, fault === 'part-no-etag' ? {} : { etag: `"p${part}"` });
      return void res.end();
    }
    if (req.method === 'POST' && url.searchParams.has('uploadId')) {
      if (fault === 'complete-200-error')
        return xml(200, '<Error><Code>InternalError</Code><Message>oops</Message></Error>');
      const done = (etag: string) =>
        xml(200, `<CompleteMultipartUploadResult><ETag>${etag}</ETag></CompleteMultipartUploadResult>`);
      if (fault === 'complete-no-etag-wrong-size') return done('');
      return done('"final-2"');
    }
    if (req.method === 'PUT') {
      res.writeHead(200, { etag: `"${createHash('md5').update(body).digest('hex')}"` });
      return void res.end();
    }
    if (req.method === 'DELETE') {
      seen[seen.length - 1].at = performance.now();
      res.writeHead(204);
      return void res.end();
    }
    res.writeHead(400);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  for (const p of opened) await p.close().catch(() => {});
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  seen.length = 0;
  fault = undefined;
  partAnswers.length = 0;
  maxPartsInFlight = 0;
});

async function provider(): Promise<S3Provider> {
  const p = await createS3Provider({
    endpoint,
    bucket: 'b',
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'secret',
    partBytes: 5 * MiB,
    retry: { attempts: 1 },
  });
  opened.push(p);
  return p;
}

async function* stream(total: number, chunk = 300_001): AsyncGenerator<Uint8Array> {
  for (let sent = 0; sent < total; sent += chunk) {
    yield Buffer.alloc(Math.min(chunk, total - sent), sent & 0xff);
  }
}

const aborted = () => seen.some((s) => s.method === 'DELETE' && s.url.includes('uploadId=u1'));

describe('multipart uploads on the wire', () => {
  it('sends exact parts with Content-MD5, then completes with their ETags in order', async () => {
    const p = await provider();
    const info = await p.put('k', stream(11 * MiB + 3));
    expect(info).toMatchObject({ key: 'k', size: 11 * MiB + 3, etag: 'final-2' });
    const parts = seen.filter((s) => s.method === 'PUT');
    expect(parts.map((s) => s.bytes)).toEqual([5 * MiB, 5 * MiB, MiB + 3]);
    expect(parts.every((s) => s.md5Ok)).toBe(true);
    const numbers = parts.map((s) => new URL(s.url, 'http://x').searchParams.get('partNumber'));
    expect(numbers).toEqual(['1', '2', '3']);
    const complete = seen.find((s) => s.method === 'POST' && s.url.includes('uploadId='))!;
    expect(complete.body).toBe(
      '<CompleteMultipartUpload>' +
        [1, 2, 3]
          .map((n) => `<Part><PartNumber>${n}</PartNumber><ETag>"p${n}"</ETag></Part>`)
          .join('') +
        '</CompleteMultipartUpload>'
    );
    expect(aborted()).toBe(false);
  });

  it('a stream of exactly one part goes out as one PUT', async () => {
    const p = await provider();
    await p.put('k', stream(5 * MiB));
    expect(seen.map((s) => s.method)).toEqual(['PUT']);
    expect(seen[0].bytes).toBe(5 * MiB);
  });

  for (const [f, code] of [
    ['no-upload-id', 'Io'],
    ['truncated-create', 'Io'],
    ['huge-create', 'Io'],
  ] as const) {
    it(`fails closed when CreateMultipartUpload answers with ${f}`, async () => {
      const p = await provider();
      fault = f;
      await expectCode(p.put('k', stream(6 * MiB)), code);
      expect(seen.some((s) => s.method === 'PUT')).toBe(false);
    });
  }

  it('aborts when a part answers without an ETag', async () => {
    const p = await provider();
    fault = 'part-no-etag';
    await expectCode(p.put('k', stream(6 * MiB)), 'Io');
    expect(aborted()).toBe(true);
    expect(seen.some((s) => s.method === 'POST' && s.url.includes('uploadId='))).toBe(false);
  });

  it('treats a 200 completion carrying an <Error> as a failure, and aborts', async () => {
    const p = await provider();
    fault = 'complete-200-error';
    const err = await p.put('k', stream(6 * MiB)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'Unavailable' });
    expect((err as Error).message).toContain('InternalError');
    expect(aborted()).toBe(true);
  });

  it('checks the size by HEAD when the completion has no ETag, and refuses a mismatch', async () => {
    const p = await provider();
    fault = 'complete-no-etag-wrong-size';
    await expectCode(p.put('k', stream(6 * MiB)), 'LengthMismatch');
    expect(seen.at(-1)?.method).toBe('HEAD');
  });

  it('refuses a multipart replace (ifMatch) before creating any upload', async () => {
    const p = await provider();
    const replace = p.put('k', stream(6 * MiB), { ifMatch: 'e'.repeat(32) });
    await expectCode(replace, 'LengthMismatch');
    expect(seen).toEqual([]);
  });
  it('reads the next part while the previous one uploads, one part request at a time', async () => {
    const p = await provider();
    fault = 'slow-part';
    // When the source handed over the first byte of each part.
    const partStarts: number[] = [];
    async function* timed(): AsyncGenerator<Uint8Array> {
      let sent = 0;
      for await (const c of stream(16 * MiB + 7)) {
        if (Math.floor(sent / (5 * MiB)) === partStarts.length) partStarts.push(performance.now());
        sent += c.length;
        yield c;
      }
    }
    const info = await p.put('k', timed());
    expect(info.size).toBe(16 * MiB + 7);
    expect(seen.filter((s) => s.method === 'PUT').map((s) => s.bytes)).toEqual([5 * MiB, 5 * MiB, 5 * MiB, MiB + 7]);
    expect(maxPartsInFlight).toBe(1);
    expect(partAnswers.map((a) => a.part)).toEqual(['1', '2', '3', '4']);
    // Part 2 was being read before part 1 was answered, part 3 before part 2...
    for (let k = 1; k < 4; k++) expect(partStarts[k]).toBeLessThan(partAnswers[k - 1].at);
    // ...but never two parts ahead: part k+2 is read only once part k is answered.
    for (let k = 2; k < 4; k++) expect(partStarts[k]).toBeGreaterThan(partAnswers[k - 2].at);
  });

  it('a source failing while a part uploads aborts only once that part is answered', async () => {
    const p = await provider();
    fault = 'slow-part';
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield* stream(5 * MiB + 10);
      throw new Error('source broke');
    }
    await expect(p.put('k', failing())).rejects.toThrow();
    expect(aborted()).toBe(true);
    const del = seen.find((s) => s.method === 'DELETE')!;
    expect(partAnswers.length).toBe(1);
    expect(del.at!).toBeGreaterThanOrEqual(partAnswers[0].at);
  });
});
