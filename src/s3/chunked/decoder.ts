/**
 * @module The aws-chunked body decoder.
 *
 *   body    = *chunk last-chunk trailers CRLF
 *   chunk   = hex-size [";chunk-signature=" sig] CRLF data CRLF
 *   last    = "0" [";chunk-signature=" sig] CRLF
 *   trailer = name ":" value CRLF              (incl. x-amz-trailer-signature when signed)
 *
 * Input is the request body after HTTP/1.1 de-chunking; output is the object's bytes.
 * The decoder is an async generator over an AsyncIterable<Uint8Array>, so backpressure is
 * natural: it pulls the next input buffer only when its consumer asks for more output, and
 * holds at most one input buffer plus, in signed mode, the chunk being verified
 * (≤ maxChunkBytes). Wrap it with `Readable.from()` to pipe it.
 *
 * Guarantees: signed chunks are yielded only after their signature verified (a forged
 * chunk yields nothing); no byte beyond x-amz-decoded-content-length is ever yielded; the
 * generator completes only if the framing, the signatures, the trailers and the decoded
 * length are all correct — consumers must treat the object as written only then.
 * Yielded buffers are views of the source's buffers (zero copy): the source must not reuse
 * them (Node streams do not).
 *
 * Errors (S3Error): `SignatureDoesNotMatch` (chunk or trailer signature), `IncompleteBody`
 * (body ends early, decoded length differs from the header), `InvalidRequest` (malformed
 * framing: bad size, missing CRLF, overlong line, oversized chunk, data after the end,
 * unexpected/missing trailers). S3 does not document codes for malformed framing;
 * InvalidRequest is its generic 400.
 */
import { createHash, type Hash } from 'node:crypto';
import { EMPTY_PAYLOAD_SHA256, signaturesEqual } from '../../sigv4/hash.js';
import { S3Error } from '../errors.js';
import type { PayloadMode } from '../auth/types.js';
import { chunkSignature, trailerSignature } from './signature.js';

/** Largest signed chunk buffered for verification: 16 MiB (clients use 64 KiB to 1 MiB). */
export const MAX_SIGNED_CHUNK_BYTES = 16 * 1024 * 1024;
/** Longest chunk-header or trailer line, in bytes; a signed header line is about 90. */
export const MAX_CHUNK_LINE_BYTES = 4096;
/** Largest trailer section, in bytes (a checksum and a signature take about 150). */
export const MAX_TRAILER_BYTES = 16 * 1024;

const TRAILER_SIGNATURE = 'x-amz-trailer-signature';
const CR = 0x0d;
const LF = 0x0a;

export interface AwsChunkedOptions {
  /** x-amz-decoded-content-length: the exact number of bytes the body must decode to. */
  decodedLength: number;
  /** From verifyRequest: a streaming mode. */
  payload: Extract<PayloadMode, { mode: 'streaming-signed' | 'streaming-unsigned-trailer' }>;
  /** Lower-case names listed in x-amz-trailer; the trailers must be exactly these. */
  declaredTrailers?: readonly string[];
  /** Largest signed chunk accepted; default {@link MAX_SIGNED_CHUNK_BYTES}. */
  maxChunkBytes?: number;
}

function framing(reason: string): S3Error {
  return new S3Error('InvalidRequest', `Malformed aws-chunked body: ${reason}`);
}

type State = 'header' | 'data' | 'data-cr' | 'data-lf' | 'trailers' | 'done';

/** Decodes one aws-chunked body; create one per request. */
export class AwsChunkedDecoder {
  readonly #opts: AwsChunkedOptions;
  readonly #maxChunk: number;
  #trailers: Map<string, string> | undefined;
  #used = false;

  /** Throws RangeError for a negative or non-integer decodedLength. */
  constructor(options: AwsChunkedOptions) {
    if (!Number.isSafeInteger(options.decodedLength) || options.decodedLength < 0)
      throw new RangeError('decodedLength must be a non-negative integer');
    this.#opts = options;
    this.#maxChunk = options.maxChunkBytes ?? MAX_SIGNED_CHUNK_BYTES;
  }

  /**
   * The trailers (lower-case names, values trimmed, x-amz-trailer-signature excluded), set
   * only once {@link decode} has completed successfully; undefined before.
   */
  get trailers(): ReadonlyMap<string, string> | undefined {
    return this.#trailers;
  }

  /**
   * Yields the decoded payload of `source`. May be iterated once. Throws S3Error (see the
   * module header) from the iteration; after an error nothing more is yielded.
   */
  async *decode(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array, void, undefined> {
    if (this.#used) throw new Error('AwsChunkedDecoder.decode may be called once');
    this.#used = true;
    const p = this.#opts.payload;
    const signed = p.mode === 'streaming-signed' ? p : undefined;
    const trailerMode = p.mode === 'streaming-unsigned-trailer' || p.trailer;
    let previous = signed?.seedSignature ?? '';
    let remaining = this.#opts.decodedLength; // bytes the declared sizes may still claim
    let state = 'header' as State; // widened: the helpers below change it
    let line: Buffer[] = [];
    let lineBytes = 0;
    let trailerBytes = 0;
    let leadingBlank = false;
    let chunkLeft = 0;
    let chunkSig = '';
    let hash: Hash | undefined;
    let held: Uint8Array[] = [];
    const trailers = new Map<string, string>();

    /** Takes the line ending at buf[lf] (LF), with any held partial, and returns it without CR/LF. */
    const takeLine = (buf: Uint8Array, from: number, lf: number, requireCr: boolean): string => {
      const piece = Buffer.from(buf.buffer, buf.byteOffset + from, lf - from);
      const all = line.length === 0 ? piece : Buffer.concat([...line, piece]);
      line = [];
      lineBytes = 0;
      const hasCr = all.length > 0 && all[all.length - 1] === CR;
      if (requireCr && !hasCr) throw framing('line not terminated by CRLF');
      return all.toString('latin1', 0, hasCr ? all.length - 1 : all.length);
    };
    const keepPartial = (buf: Uint8Array, from: number) => {
      lineBytes += buf.length - from;
      if (lineBytes > MAX_CHUNK_LINE_BYTES) throw framing('line too long');
      line.push(Buffer.from(buf.subarray(from)));
    };
    const verifyChunk = (dataHashHex: string) => {
      const expected = chunkSignature(signed!, previous, dataHashHex);
      if (!signaturesEqual(expected, chunkSig))
        throw new S3Error('SignatureDoesNotMatch', 'The chunk signature does not match.');
      previous = expected;
    };
    const onHeader = (text: string) => {
      const semi = text.indexOf(';');
      const sizeText = semi < 0 ? text : text.slice(0, semi);
      if (!/^[0-9A-Fa-f]{1,16}$/.test(sizeText))
        throw framing(`bad chunk size "${sizeText.slice(0, 32)}"`);
      const size = parseInt(sizeText, 16);
      if (signed) {
        const ext = semi < 0 ? '' : text.slice(semi + 1);
        const m = /^chunk-signature=([0-9a-f]{64})$/.exec(ext);
        if (!m)
          throw new S3Error('SignatureDoesNotMatch', 'A chunk signature is missing or malformed.');
        chunkSig = m[1]!;
      }
      if (size > remaining)
        throw new S3Error(
          'IncompleteBody',
          'The body holds more data than x-amz-decoded-content-length.'
        );
      if (size === 0) {
        if (remaining !== 0)
          throw new S3Error(
            'IncompleteBody',
            'The body holds less data than x-amz-decoded-content-length.'
          );
        if (signed) verifyChunk(EMPTY_PAYLOAD_SHA256);
        state = 'trailers';
        return;
      }
      if (signed && size > this.#maxChunk)
        throw framing(`a chunk of ${size} bytes exceeds the ${this.#maxChunk}-byte limit`);
      remaining -= size;
      chunkLeft = size;
      hash = signed ? createHash('sha256') : undefined;
      state = 'data';
    };
    const onTrailerLine = (text: string) => {
      if (text === '') {
        if (trailerMode && trailers.size === 0 && !leadingBlank) {
          leadingBlank = true; // tolerate "0;…\r\n\r\n" before the trailers
          return;
        }
        state = 'done';
        return;
      }
      const colon = text.indexOf(':');
      const name = text.slice(0, colon).trim().toLowerCase();
      if (colon <= 0 || !/^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(name) || trailers.has(name))
        throw framing('malformed or repeated trailer');
      trailers.set(name, text.slice(colon + 1).trim());
    };

    for await (const buf of source) {
      let i = 0;
      while (i < buf.length) {
        if (state === 'header' || state === 'trailers') {
          const lf = buf.indexOf(LF, i);
          if (lf < 0) {
            keepPartial(buf, i);
            if (state === 'trailers' && (trailerBytes += buf.length - i) > MAX_TRAILER_BYTES)
              throw framing('trailers too large');
            i = buf.length;
            break;
          }
          if (lf - i + lineBytes > MAX_CHUNK_LINE_BYTES) throw framing('line too long');
          if (state === 'trailers' && (trailerBytes += lf + 1 - i) > MAX_TRAILER_BYTES)
            throw framing('trailers too large');
          const text = takeLine(buf, i, lf, state === 'header');
          i = lf + 1;
          if (state === 'header') onHeader(text);
          else onTrailerLine(text);
        } else if (state === 'data') {
          const take = Math.min(chunkLeft, buf.length - i);
          const piece = buf.subarray(i, i + take);
          i += take;
          chunkLeft -= take;
          if (hash) {
            hash.update(piece);
            held.push(piece);
          } else yield piece;
          if (chunkLeft === 0) {
            if (hash) verifyChunk(hash.digest('hex'));
            state = 'data-cr';
          }
        } else if (state === 'data-cr' || state === 'data-lf') {
          const want = state === 'data-cr' ? CR : LF;
          if (buf[i] !== want) throw framing('chunk data not followed by CRLF');
          i++;
          if (state === 'data-cr') state = 'data-lf';
          else {
            state = 'header';
            const verified = held;
            held = [];
            for (const piece of verified) yield piece;
          }
        } else {
          throw framing('data after the final chunk');
        }
      }
    }
    if (state === 'trailers' && leadingBlank && trailers.size === 0) {
      // "0…\r\n\r\n" was the end after all; anything after it is not a trailer.
      if (lineBytes > 0) throw framing('data after the final chunk');
      state = 'done';
    }
    if (state !== 'done')
      throw new S3Error(
        'IncompleteBody',
        'The request body ended before the aws-chunked encoding did.'
      );
    this.#finishTrailers(trailers, trailerMode, previous);
  }

  #finishTrailers(trailers: Map<string, string>, trailerMode: boolean, previous: string): void {
    const p = this.#opts.payload;
    const provided = trailers.get(TRAILER_SIGNATURE);
    trailers.delete(TRAILER_SIGNATURE);
    if (!trailerMode && (trailers.size > 0 || provided !== undefined))
      throw framing('trailers are only allowed with a -TRAILER payload');
    const declared = new Set(this.#opts.declaredTrailers ?? []);
    for (const name of trailers.keys())
      if (!declared.has(name)) throw framing(`trailer ${name} was not declared in x-amz-trailer`);
    for (const name of declared)
      if (!trailers.has(name)) throw framing(`declared trailer ${name} is missing`);
    if (p.mode === 'streaming-signed' && p.trailer) {
      if (
        provided === undefined ||
        !signaturesEqual(trailerSignature(p, previous, trailers), provided)
      )
        throw new S3Error('SignatureDoesNotMatch', 'The trailer signature does not match.');
    }
    this.#trailers = trailers;
  }
}
