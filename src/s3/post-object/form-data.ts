/**
 * @module A streaming multipart/form-data reader (RFC 7578 over RFC 2046) for POST Object.
 *
 *   preamble  --boundary CRLF  headers CRLF CRLF  value  CRLF--boundary CRLF  ...  file
 *   CRLF--boundary--  epilogue
 *
 * Fields are read whole, within limits; the one file part is handed over as a stream that
 * ends at its closing delimiter, so the body is never buffered whole. Everything the reader
 * holds before the file (preamble, part headers, field values) counts against
 * `maxPreDataBytes` and the number of parts against `maxParts`: a hostile form cannot make
 * it hold more, however it fragments its bytes (see ByteQueue). Malformed or truncated
 * input is S3Error MalformedPOSTRequest, oversized pre-file data
 * MaxPostPreDataLengthExceeded; the reader never guesses.
 */
import { S3Error } from '../errors.js';
import { ByteQueue } from './byte-queue.js';

export interface FormLimits {
  /** Parts (fields) accepted before the file. */
  maxParts: number;
  /** Bytes of preamble, part headers and field values before the file's content. */
  maxPreDataBytes: number;
  /** Bytes of one part's header block. */
  maxHeaderBytes: number;
}

/** A part's headers, as far as a form needs them. */
export interface PartHead {
  /** The `name` parameter of Content-Disposition, as sent (UTF-8 decoded). */
  name: string;
  /** The `filename` parameter, when present. */
  filename?: string;
  /** The part's own Content-Type header, when present. */
  contentType?: string;
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
/** RFC 2046 boundary characters (bchars), 1..70 of them, not ending in a space. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

export function malformed(why: string): S3Error {
  return new S3Error('MalformedPOSTRequest', `The body of your POST request is not well-formed multipart/form-data (${why}).`);
}

/** Whether a Content-Type is multipart/form-data (a browser form upload). Pure. */
export function isFormUpload(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.split(';')[0]!.trim().toLowerCase() === 'multipart/form-data';
}

/**
 * The boundary of a `multipart/form-data` Content-Type, or undefined when the type is not
 * multipart/form-data. Throws MalformedPOSTRequest for a form type with a missing or
 * invalid boundary. Pure.
 */
export function formBoundary(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const [type, ...params] = contentType.split(';');
  if (type!.trim().toLowerCase() !== 'multipart/form-data') return undefined;
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq < 0 || p.slice(0, eq).trim().toLowerCase() !== 'boundary') continue;
    let v = p.slice(eq + 1).trim();
    if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
    if (!BOUNDARY.test(v)) throw malformed('invalid boundary');
    return v;
  }
  throw malformed('no boundary in Content-Type');
}

/** Reads the next quoted-string or token at `s[i]`; returns [value, next index]. */
function paramValue(s: string, i: number): [string, number] {
  if (s[i] !== '"') {
    let j = i;
    while (j < s.length && s[j] !== ';') j++;
    return [s.slice(i, j).trim(), j];
  }
  let out = '';
  let j = i + 1;
  for (; j < s.length; j++) {
    const c = s[j]!;
    if (c === '\\' && j + 1 < s.length) out += s[++j];
    else if (c === '"') return [out, j + 1];
    else out += c;
  }
  throw malformed('unterminated quoted string in Content-Disposition');
}

/** `filename*=UTF-8''percent-encoded` (RFC 5987), or undefined when not decodable. */
function extValue(v: string): string | undefined {
  const m = /^([A-Za-z0-9!#$&+^`{}~-]+)'[^']*'(.*)$/.exec(v);
  if (!m || m[1]!.toLowerCase() !== 'utf-8') return undefined;
  try {
    return decodeURIComponent(m[2]!);
  } catch {
    return undefined;
  }
}

/**
 * Parses a part's Content-Disposition: `form-data; name="n"; filename="f"`. Throws
 * MalformedPOSTRequest when it is not form-data or has no name. Pure.
 */
export function parseContentDisposition(value: string): { name: string; filename?: string } {
  const semi = value.indexOf(';');
  const type = (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase();
  if (type !== 'form-data') throw malformed('a part is not form-data');
  const params = new Map<string, string>();
  let i = semi < 0 ? value.length : semi + 1;
  while (i < value.length) {
    while (i < value.length && (value[i] === ' ' || value[i] === '\t' || value[i] === ';')) i++;
    if (i >= value.length) break;
    const eq = value.indexOf('=', i);
    if (eq < 0) throw malformed('a Content-Disposition parameter has no value');
    const key = value.slice(i, eq).trim().toLowerCase();
    const [v, next] = paramValue(value, eq + 1);
    if (params.has(key)) throw malformed(`repeated Content-Disposition parameter ${key}`);
    params.set(key, v);
    i = next;
  }
  const name = params.get('name');
  if (name === undefined) throw malformed('a part has no name');
  const ext = params.has('filename*') ? extValue(params.get('filename*')!) : undefined;
  const filename = ext ?? params.get('filename');
  return filename === undefined ? { name } : { name, filename };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The header block of a part (bytes before CRLF CRLF), parsed. */
function parseHeaders(block: Buffer): PartHead {
  let text: string;
  try {
    text = UTF8.decode(block); // browsers send raw UTF-8 names and filenames
  } catch {
    throw malformed('part headers are not UTF-8');
  }
  let disposition: string | undefined;
  let contentType: string | undefined;
  let last: string | undefined;
  for (const line of text.split('\r\n')) {
    if (line === '') continue;
    if ((line[0] === ' ' || line[0] === '\t') && last !== undefined) {
      // An obsolete folded continuation line.
      if (last === 'content-disposition') disposition += ' ' + line.trim();
      else if (last === 'content-type') contentType += ' ' + line.trim();
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw malformed('a part header line has no name');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-disposition') {
      if (disposition !== undefined) throw malformed('repeated Content-Disposition');
      disposition = value;
    } else if (name === 'content-type') {
      contentType = value;
    }
    last = name;
  }
  if (disposition === undefined) throw malformed('a part has no Content-Disposition');
  const d = parseContentDisposition(disposition);
  const head: PartHead = { name: d.name };
  if (d.filename !== undefined) head.filename = d.filename;
  if (contentType !== undefined) head.contentType = contentType;
  return head;
}

type State = 'start' | 'headers' | 'body' | 'done';

/**
 * Reads one multipart/form-data body. Call {@link next} for each part's headers; then
 * either {@link fieldValue} (fields) or {@link fileBody} (the file), before the next call.
 */
export class FormDataReader {
  readonly #it: AsyncIterator<Uint8Array>;
  readonly #q = new ByteQueue();
  readonly #limits: FormLimits;
  readonly #dashBoundary: Buffer;
  /** CRLF--boundary: what ends a part's content. */
  readonly #delimiter: Buffer;
  #state: State = 'start';
  #eof = false;
  #parts = 0;
  /** Bytes of pre-file data consumed so far. */
  #preData = 0;

  constructor(source: AsyncIterable<Uint8Array>, boundary: string, limits: FormLimits) {
    this.#it = source[Symbol.asyncIterator]();
    this.#limits = limits;
    this.#dashBoundary = Buffer.from(`--${boundary}`, 'latin1');
    this.#delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  /** Pre-file bytes consumed (preamble, part headers, field values). */
  get preDataBytes(): number {
    return this.#preData;
  }

  /** Appends the next chunk; false at the end of the input. */
  async #fill(): Promise<boolean> {
    if (this.#eof) return false;
    const r = await this.#it.next();
    if (r.done) {
      this.#eof = true;
      return false;
    }
    this.#q.append(r.value);
    return true;
  }

  #charge(n: number): void {
    this.#preData += n;
    if (this.#preData > this.#limits.maxPreDataBytes) {
      throw new S3Error('MaxPostPreDataLengthExceeded', `Your POST request fields preceding the upload file were too large (over ${this.#limits.maxPreDataBytes} bytes).`);
    }
  }

  /** Skips the preamble up to and including the first dash-boundary. */
  async #skipPreamble(): Promise<void> {
    let atStart = true;
    for (;;) {
      const v = this.#q.view();
      // The first boundary may open the body, or follow a preamble line.
      if (atStart && v.length < this.#dashBoundary.length && this.#dashBoundary.subarray(0, v.length).equals(v)) {
        if (!(await this.#fill())) throw malformed('no boundary found');
        continue;
      }
      if (atStart && v.subarray(0, this.#dashBoundary.length).equals(this.#dashBoundary)) {
        this.#charge(this.#dashBoundary.length);
        this.#q.skip(this.#dashBoundary.length);
        return;
      }
      const at = this.#q.indexOf(this.#delimiter);
      if (at >= 0) {
        this.#charge(at + this.#delimiter.length);
        this.#q.skip(at + this.#delimiter.length);
        return;
      }
      // Keep only what could still start a delimiter; the rest is preamble.
      const keep = Math.min(v.length, this.#delimiter.length - 1);
      this.#charge(v.length - keep);
      this.#q.skip(v.length - keep);
      atStart = false;
      if (!(await this.#fill())) throw malformed('no boundary found');
    }
  }

  /**
   * After a boundary: `--` closes the body (returns false); optional spaces then CRLF start
   * the next part (returns true). Anything else is malformed.
   */
  async #afterBoundary(): Promise<boolean> {
    for (;;) {
      const v = this.#q.view();
      if (v.length >= 2 && v[0] === 0x2d && v[1] === 0x2d) {
        this.#q.skip(2);
        return false;
      }
      let i = 0;
      while (i < v.length && (v[i] === 0x20 || v[i] === 0x09)) i++;
      if (i > 64) throw malformed('padding after a boundary');
      if (v.length >= i + 2) {
        if (v[i] !== 0x0d || v[i + 1] !== 0x0a) throw malformed('a boundary is not followed by CRLF');
        this.#q.skip(i + 2);
        return true;
      }
      if (!(await this.#fill())) throw malformed('the body ends inside a boundary line');
    }
  }

  /**
   * The headers of the next part, or undefined after the closing delimiter. Throws
   * MalformedPOSTRequest (bad framing, truncation), MaxPostPreDataLengthExceeded (too
   * many parts or pre-file bytes).
   */
  async next(): Promise<PartHead | undefined> {
    if (this.#state === 'start') {
      await this.#skipPreamble();
      this.#state = (await this.#afterBoundary()) ? 'headers' : 'done';
    }
    if (this.#state === 'done') return undefined;
    if (this.#state !== 'headers') throw new Error('FormDataReader.next() called before the previous part was read');
    if (++this.#parts > this.#limits.maxParts) {
      throw new S3Error('MaxPostPreDataLengthExceeded', `Your POST request has more than ${this.#limits.maxParts} fields before the file.`);
    }
    let from = 0;
    for (;;) {
      // A part without headers starts directly with CRLF.
      if (this.#q.length >= 2 && this.#q.view()[0] === 0x0d && this.#q.view()[1] === 0x0a) {
        throw malformed('a part has no headers');
      }
      const at = this.#q.indexOf(HEADER_END, from);
      if (at >= 0) {
        if (at > this.#limits.maxHeaderBytes) throw malformed('part headers too large');
        this.#charge(at + HEADER_END.length);
        const block = this.#q.take(at);
        this.#q.skip(HEADER_END.length);
        this.#state = 'body';
        return parseHeaders(block);
      }
      if (this.#q.length > this.#limits.maxHeaderBytes) throw malformed('part headers too large');
      from = Math.max(0, this.#q.length - (HEADER_END.length - 1));
      if (!(await this.#fill())) throw malformed('the body ends inside part headers');
    }
  }

  /**
   * The current part's whole value (at most `max` bytes, else MaxPostPreDataLengthExceeded),
   * consuming its closing delimiter.
   */
  async fieldValue(max: number): Promise<Buffer> {
    if (this.#state !== 'body') throw new Error('FormDataReader.fieldValue() called outside a part');
    let from = 0;
    for (;;) {
      const at = this.#q.indexOf(this.#delimiter, from);
      if (at >= 0) {
        if (at > max) throw new S3Error('MaxPostPreDataLengthExceeded', `A POST form field is larger than ${max} bytes.`);
        this.#charge(at + this.#delimiter.length);
        const value = this.#q.take(at);
        this.#q.skip(this.#delimiter.length);
        this.#state = (await this.#afterBoundary()) ? 'headers' : 'done';
        return value;
      }
      if (this.#q.length > max + this.#delimiter.length) {
        throw new S3Error('MaxPostPreDataLengthExceeded', `A POST form field is larger than ${max} bytes.`);
      }
      from = Math.max(0, this.#q.length - (this.#delimiter.length - 1));
      if (!(await this.#fill())) throw malformed('the body ends inside a field');
    }
  }

  /**
   * The current part's content as a stream that ends at its closing delimiter (the part is
   * then consumed). The stream throws MalformedPOSTRequest if the body ends first. It
   * holds at most one network chunk plus the delimiter's length.
   */
  async *fileBody(): AsyncGenerator<Uint8Array> {
    if (this.#state !== 'body') throw new Error('FormDataReader.fileBody() called outside a part');
    const d = this.#delimiter;
    for (;;) {
      const at = this.#q.indexOf(d);
      if (at >= 0) {
        if (at > 0) yield this.#q.take(at);
        this.#q.skip(d.length);
        this.#state = (await this.#afterBoundary()) ? 'headers' : 'done';
        return;
      }
      // Everything but a possible delimiter prefix at the end is content.
      const safe = this.#q.length - (d.length - 1);
      if (safe > 0) yield this.#q.take(safe);
      if (!(await this.#fill())) throw malformed('the body ends inside the file');
    }
  }

  /**
   * Reads and discards what follows (fields after the file, the epilogue), at most
   * `maxBytes`. Returns true if the input ended within that, false if it stopped early
   * (the caller should close the connection).
   */
  async discardRest(maxBytes: number): Promise<boolean> {
    let seen = this.#q.length;
    this.#q.skip(this.#q.length);
    while (seen <= maxBytes) {
      if (!(await this.#fill())) return true;
      seen += this.#q.length;
      this.#q.skip(this.#q.length);
    }
    await this.#it.return?.();
    return false;
  }

  /** Stops reading the input (error paths). */
  async cancel(): Promise<void> {
    if (!this.#eof) {
      this.#eof = true;
      await this.#it.return?.();
    }
  }
}
