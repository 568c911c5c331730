/**
 * The streaming multipart/form-data reader of POST Object.
 *
 * Proves: a form reads back exactly (fields, file name, file bytes) however its bytes are
 * cut — at every split point of a small form, in 1-byte pieces, in seeded random pieces —
 * including file contents that hold near-miss delimiters (`\r\n--boundar`, the boundary
 * without CRLF, lone CR/LF); preambles, epilogues, transport padding, quoted and RFC 5987
 * parameters are read as RFC 2046/7578 say. Malformed input (no or bad boundary, a part
 * without Content-Disposition or name, a header line without a colon, garbage after a
 * boundary) and truncation anywhere (headers, field, file, boundary line) are
 * MalformedPOSTRequest; too many parts, an oversized field or too many pre-file bytes are
 * MaxPostPreDataLengthExceeded; an oversized header block is refused; and streaming a
 * large file in 1-byte pieces keeps the reader's memory bounded.
 */
import { describe, expect, it } from 'vitest';
import { FormDataReader, formBoundary, isFormUpload, parseContentDisposition, type FormLimits } from '../../../src/s3/post-object/form-data.js';
import { S3Error } from '../../../src/s3/errors.js';
import { prng, randomBytes } from '../../support/random.js';

const B = '----StrataBoundary7MA4YWxkTrZu0gW';
const LIMITS: FormLimits = { maxParts: 100, maxPreDataBytes: 64 * 1024, maxHeaderBytes: 8 * 1024 };

interface Part {
  name: string;
  value: string | Uint8Array;
  filename?: string;
  type?: string;
}

/** A multipart/form-data body as browsers write it. */
function formBody(parts: Part[], opts: { boundary?: string; preamble?: string; epilogue?: string } = {}): Buffer {
  const b = opts.boundary ?? B;
  const out: Buffer[] = [];
  if (opts.preamble) out.push(Buffer.from(opts.preamble + '\r\n'));
  for (const p of parts) {
    let head = `--${b}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.type) head += `Content-Type: ${p.type}\r\n`;
    out.push(Buffer.from(head + '\r\n'), Buffer.from(p.value), Buffer.from('\r\n'));
  }
  out.push(Buffer.from(`--${b}--\r\n`));
  if (opts.epilogue) out.push(Buffer.from(opts.epilogue));
  return Buffer.concat(out);
}

async function* pieces(body: Uint8Array, cuts: number[]): AsyncGenerator<Uint8Array> {
  let at = 0;
  for (const c of [...cuts, body.length]) {
    if (c > at) yield body.subarray(at, c);
    at = Math.max(at, c);
  }
}

async function* every(body: Uint8Array, n: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < body.length; i += n) yield body.subarray(i, i + n);
}

/** Reads a whole form: the fields before `file`, the file, and what follows it. */
async function readForm(src: AsyncIterable<Uint8Array>, limits = LIMITS, boundary = B) {
  const r = new FormDataReader(src, boundary, limits);
  const fields: Record<string, string> = {};
  let file: { name: string; filename?: string; type?: string; bytes: Buffer } | undefined;
  for (;;) {
    const p = await r.next();
    if (!p) break;
    if (p.name === 'file') {
      const chunks: Buffer[] = [];
      for await (const c of r.fileBody()) chunks.push(Buffer.from(c));
      file = { name: p.name, bytes: Buffer.concat(chunks), ...(p.filename !== undefined && { filename: p.filename }), ...(p.contentType && { type: p.contentType }) };
    } else {
      fields[p.name] = (await r.fieldValue(20 * 1024)).toString('utf8');
    }
  }
  return { fields, file };
}

async function expectCode(p: Promise<unknown>, code: string): Promise<S3Error> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e
  );
  expect(err, `expected ${code}`).toBeInstanceOf(S3Error);
  expect((err as S3Error).code).toBe(code);
  return err as S3Error;
}

const TRICKY = Buffer.concat([
  Buffer.from('start\r\n--'),
  Buffer.from(B.slice(0, -1)), // the boundary less one char
  Buffer.from('\r\n\r\n--' + B + 'X'.repeat(0)).subarray(0, 5), // a partial delimiter
  Buffer.from(`--${B}`), // the boundary without the leading CRLF
  Buffer.from('\r\r\n\n\r\n-'),
  randomBytes(3000, 11),
  Buffer.from('\r\n-'),
]);

const FORM: Part[] = [
  { name: 'key', value: 'uploads/${filename}' },
  { name: 'x-amz-meta-note', value: 'héllo wörld' },
  { name: 'policy', value: 'eyJleHBpcmF0aW9uIjoiMjAzMC0wMS0wMVQwMDowMDowMFoifQ==' },
  { name: 'file', value: TRICKY, filename: 'photo 1.jpg', type: 'image/jpeg' },
  { name: 'after', value: 'ignored by S3 but readable here' },
];

function expectForm(got: Awaited<ReturnType<typeof readForm>>): void {
  expect(got.fields).toEqual({ key: 'uploads/${filename}', 'x-amz-meta-note': 'héllo wörld', policy: FORM[2]!.value, after: FORM[4]!.value });
  expect(got.file?.filename).toBe('photo 1.jpg');
  expect(got.file?.type).toBe('image/jpeg');
  expect(got.file?.bytes.equals(TRICKY)).toBe(true);
}

describe('FormDataReader: reading', () => {
  it('reads a form in one piece, with a preamble and an epilogue', async () => {
    expectForm(await readForm(pieces(formBody(FORM, { preamble: 'This is a preamble.\r\nline two', epilogue: 'epilogue\r\n' }), [])));
  });

  it('reads the same form split at every byte boundary (two pieces)', async () => {
    const body = formBody(FORM);
    for (let cut = 1; cut < body.length; cut += 1) expectForm(await readForm(pieces(body, [cut])));
  });

  it('reads the same form in 1-byte pieces and seeded random pieces', async () => {
    const body = formBody(FORM);
    expectForm(await readForm(every(body, 1)));
    const next = prng(42);
    for (let run = 0; run < 50; run++) {
      const cuts: number[] = [];
      for (let at = 0; at < body.length; ) cuts.push((at += 1 + (next() % 97)));
      expectForm(await readForm(pieces(body, cuts)));
    }
  });

  it('empty values, an empty file, transport padding and a quoted boundary', async () => {
    const body = Buffer.from(`--${B}  \t\r\nContent-Disposition: form-data; name="a"\r\n\r\n\r\n--${B}\r\ncontent-disposition:form-data;name=file;filename=""\r\n\r\n\r\n--${B}--`);
    const got = await readForm(pieces(body, []));
    expect(got.fields).toEqual({ a: '' });
    expect(got.file?.bytes.length).toBe(0);
    expect(got.file?.filename).toBe('');
    expect(formBoundary(`multipart/form-data; charset=utf-8; boundary="${B}"`)).toBe(B);
    expect(formBoundary('multipart/form-data;boundary=abc')).toBe('abc');
  });

  it('Content-Disposition parameters: quoted escapes, RFC 5987 filename*, unquoted tokens', () => {
    expect(parseContentDisposition('form-data; name="a\\"b"; filename="c:\\\\x\\\\y.txt"')).toEqual({ name: 'a"b', filename: 'c:\\x\\y.txt' });
    expect(parseContentDisposition("form-data; name=file; filename=plain.txt; filename*=UTF-8''%E2%82%AC%20rates.txt")).toEqual({ name: 'file', filename: '€ rates.txt' });
    expect(parseContentDisposition('FORM-DATA; NAME="Key"')).toEqual({ name: 'Key' });
  });

  it('recognises form uploads by their type only', () => {
    expect(isFormUpload('multipart/form-data; boundary=x')).toBe(true);
    expect(isFormUpload(' Multipart/Form-Data ;boundary=x')).toBe(true);
    expect(isFormUpload('multipart/mixed; boundary=x')).toBe(false);
    expect(isFormUpload('application/x-www-form-urlencoded')).toBe(false);
    expect(isFormUpload(undefined)).toBe(false);
    expect(formBoundary('text/plain')).toBeUndefined();
  });
});

describe('FormDataReader: malformed, truncated, oversized and hostile input', () => {
  it('refuses a form type without a valid boundary', () => {
    for (const ct of ['multipart/form-data', 'multipart/form-data; boundary=', `multipart/form-data; boundary=${'x'.repeat(71)}`, 'multipart/form-data; boundary="a\u0000b"', 'multipart/form-data; boundary="ends-in-space "']) {
      expect(() => formBoundary(ct), ct).toThrow(S3Error);
    }
  });

  it('refuses malformed parts', async () => {
    const cases: [string, string][] = [
      ['no boundary at all', 'just some bytes'],
      ['no Content-Disposition', `--${B}\r\nContent-Type: text/plain\r\n\r\nv\r\n--${B}--`],
      ['no name', `--${B}\r\nContent-Disposition: form-data; filename="a"\r\n\r\nv\r\n--${B}--`],
      ['not form-data', `--${B}\r\nContent-Disposition: attachment; name="a"\r\n\r\nv\r\n--${B}--`],
      ['header without colon', `--${B}\r\nContent-Disposition form-data; name="a"\r\n\r\nv\r\n--${B}--`],
      ['no headers', `--${B}\r\n\r\nv\r\n--${B}--`],
      ['garbage after a boundary', `--${B}xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\nv\r\n--${B}--`],
      ['unterminated quote', `--${B}\r\nContent-Disposition: form-data; name="a\r\n\r\nv\r\n--${B}--`],
      ['repeated disposition', `--${B}\r\nContent-Disposition: form-data; name="a"\r\nContent-Disposition: form-data; name="b"\r\n\r\nv\r\n--${B}--`],
      ['non-UTF-8 headers', `--${B}\r\nContent-Disposition: form-data; name="\u00ff"\r\n\r\nv\r\n--${B}--`],
    ];
    for (const [what, text] of cases) {
      const body = what === 'non-UTF-8 headers' ? Buffer.from(text, 'latin1') : Buffer.from(text);
      await expectCode(readForm(pieces(body, [])), 'MalformedPOSTRequest').catch((e) => {
        throw new Error(`${what}: ${String(e)}`);
      });
    }
  });

  it('refuses a body truncated anywhere (headers, field, file, boundary line)', async () => {
    const body = formBody(FORM);
    const end = body.indexOf(Buffer.from(`--${B}--`));
    for (let cut = 1; cut < end + B.length + 2; cut += 7) {
      await expectCode(readForm(pieces(body.subarray(0, cut), [])), 'MalformedPOSTRequest');
    }
  });

  it('bounds the number of parts, field sizes, pre-file bytes and header blocks', async () => {
    const many = formBody(Array.from({ length: 101 }, (_, i) => ({ name: `f${i}`, value: 'v' })));
    await expectCode(readForm(pieces(many, [])), 'MaxPostPreDataLengthExceeded');
    const big = formBody([{ name: 'policy', value: 'x'.repeat(20 * 1024 + 1) }]);
    await expectCode(readForm(pieces(big, [])), 'MaxPostPreDataLengthExceeded');
    const total = formBody(Array.from({ length: 5 }, (_, i) => ({ name: `f${i}`, value: 'y'.repeat(15000) })));
    await expectCode(readForm(pieces(total, []), { ...LIMITS, maxPreDataBytes: 64 * 1024 }), 'MaxPostPreDataLengthExceeded');
    const preamble = formBody([{ name: 'a', value: 'b' }], { preamble: 'p'.repeat(70 * 1024) });
    await expectCode(readForm(pieces(preamble, [])), 'MaxPostPreDataLengthExceeded');
    const headers = Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="a"\r\nX-Pad: ${'z'.repeat(9000)}\r\n\r\nv\r\n--${B}--`);
    await expectCode(readForm(pieces(headers, [])), 'MalformedPOSTRequest');
    // A header block that never ends is refused once it passes the limit, not at EOF.
    let pulled = 0;
    const endless = (async function* () {
      yield Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="a"\r\n`);
      for (;;) {
        pulled += 1024;
        yield Buffer.alloc(1024, 0x61);
      }
    })();
    await expectCode(readForm(endless), 'MalformedPOSTRequest');
    expect(pulled).toBeLessThanOrEqual(LIMITS.maxHeaderBytes + 2048);
  });

  it('streams a file fed in 1-byte pieces without holding it (at most a delimiter behind)', async () => {
    const size = 512 * 1024;
    const head = Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${B}--\r\n`);
    let fed = 0;
    const src = (async function* () {
      yield head;
      for (let i = 0; i < size; i++) {
        fed++;
        yield Buffer.from([0x41 + (i % 3)]);
      }
      yield tail;
    })();
    const r = new FormDataReader(src, B, LIMITS);
    expect((await r.next())?.name).toBe('file');
    let total = 0;
    let behind = 0;
    for await (const c of r.fileBody()) {
      total += c.length;
      behind = Math.max(behind, fed - total);
    }
    expect(total).toBe(size);
    // What the reader holds back is never more than a delimiter (CRLF--boundary) could be.
    expect(behind).toBeLessThanOrEqual(B.length + 4);
    expect(await r.next()).toBeUndefined();
  });

  it('discardRest reads what follows the file only up to its limit', async () => {
    const body = formBody([{ name: 'file', value: 'abc' }, { name: 'late', value: 'q'.repeat(200_000) }]);
    const r = new FormDataReader(pieces(body, []), B, LIMITS);
    await r.next();
    for await (const c of r.fileBody()) void c;
    expect(await r.discardRest(64 * 1024)).toBe(false);
    const small = new FormDataReader(pieces(formBody([{ name: 'file', value: 'abc' }, { name: 'late', value: 'q' }]), []), B, LIMITS);
    await small.next();
    for await (const c of small.fileBody()) void c;
    expect(await small.discardRest(64 * 1024)).toBe(true);
  });
});
