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
 * natural: it pulls the next input buffer only when its consumer asks for more output.
 *
 * Memory is bounded and independent of how the client fragments the body: data passes
 * through as it arrives, it is never held until its chunk verifies. Pieces of at least
 * {@link DIRECT_MIN_BYTES} go on as views of the input; smaller ones (down to the 1-byte
 * HTTP chunks a hostile client may send) are copied into a staging buffer of
 * {@link STAGING_BYTES} that is handed on when full, so no view of a network buffer and no
 * per-piece object is kept. Partial lines are copied into one fixed line buffer. What the
 * decoder holds — the staging buffer being filled, the one last handed on, a line, the
 * trailers — is at most {@link DECODER_WORKING_BYTES}, which it charges through
 * `options.reserve` before decoding.
 *
 * Guarantees: in signed mode every chunk's signature is checked at the chunk's end, before
 * anything of the next chunk is read, so a forged chunk fails the body; bytes of the chunk
 * being checked may already have been yielded. No byte beyond x-amz-decoded-content-length
 * is ever yielded. The generator completes only if the framing, every signature, the
 * trailers and the decoded length are all correct: consumers must treat the bytes as
 * unverified until then and make nothing visible before it (the store commits only after
 * reading to the end). Yielded buffers are handed over: the decoder never writes to them
 * again.
 *
 * Errors (S3Error): `SignatureDoesNotMatch` (chunk or trailer signature), `IncompleteBody`
 * (body ends early, decoded length differs from the header), `InvalidRequest` (malformed
 * framing: bad size, missing CRLF, overlong line, oversized chunk, data after the end,
 * unexpected/missing trailers). S3 does not document codes for malformed framing;
 * InvalidRequest is its generic 400. Whatever `options.reserve` throws (StoreError
 * `SlowDown` from the pending budget) propagates before any input is read.
 */
import { createHash, type Hash } from 'node:crypto';
import { EMPTY_PAYLOAD_SHA256, signaturesEqual } from '../../sigv4/hash.js';
import { S3Error } from '../errors.js';
import type { PayloadMode } from '../auth/types.js';
import { chunkSignature, trailerSignature } from './signature.js';

/**
 * Largest signed chunk, in bytes: 16 MiB (clients use 64 KiB to 1 MiB). Data streams on
 * before its chunk's signature is checked at the chunk's end; the cap bounds how many
 * unverified bytes reach the store's scratch blobs before a forgery is detected.
 */
export const MAX_SIGNED_CHUNK_BYTES = 16 * 1024 * 1024;
/**
 * Longest chunk-header or trailer line, in bytes (CR included): the longest legitimate one
 * is a signed chunk header (16 hex digits + ";chunk-signature=" + 64 = 97) or a checksum
 * or signature trailer (about 110).
 */
export const MAX_CHUNK_LINE_BYTES = 1024;
/** Largest trailer section, in bytes: the declared checksums and a signature take ~300. */
export const MAX_TRAILER_BYTES = 4 * 1024;
/** Staging buffer for small pieces, in bytes: one socket read's worth (Node reads 64 KiB). */
export const STAGING_BYTES = 64 * 1024;
/** Pieces at least this long pass through as views when nothing is staged (no copy). */
export const DIRECT_MIN_BYTES = 16 * 1024;
/**
 * What one decoder holds at most, in bytes: the staging buffer being filled, the one last
 * handed on (its consumer may not have copied it yet), a partial line and the trailers.
 */
export const DECODER_WORKING_BYTES = 2 * STAGING_BYTES + MAX_CHUNK_LINE_BYTES + MAX_TRAILER_BYTES;

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
  /**
   * Charges `bytes` (always {@link DECODER_WORKING_BYTES}) before decoding starts and
   * returns their release, which the decoder calls once when it ends (completed, failed or
   * returned early). May throw to refuse; decode() then rethrows before reading input.
   */
  reserve?: (bytes: number) => () => void;
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
    const release = this.#opts.reserve?.(DECODER_WORKING_BYTES);
    try {
      yield* this.#run(source);
    } finally {
      release?.();
    }
  }

  async *#run(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array, void, undefined> {
    const p = this.#opts.payload;
    const signed = p.mode === 'streaming-signed' ? p : undefined;
    const trailerMode = p.mode === 'streaming-unsigned-trailer' || p.trailer;
    const declared = new Set(this.#opts.declaredTrailers ?? []);
    let previous = signed?.seedSignature ?? '';
    let remaining = this.#opts.decodedLength; // bytes the declared sizes may still claim
    let state = 'header' as State; // widened: the helpers below change it
    const line = new Uint8Array(MAX_CHUNK_LINE_BYTES);
    let lineBytes = 0;
    let trailerBytes = 0;
    let leadingBlank = false;
    let chunkLeft = 0;
    let chunkSig = '';
    let hash: Hash | undefined;
    let staging: Uint8Array | undefined;
    let staged = 0;
    const trailers = new Map<string, string>();

    /** The line ending at buf[lf] (LF), with any held partial, without CR/LF. */
    const takeLine = (buf: Uint8Array, from: number, lf: number, requireCr: boolean): string => {
      let all: Uint8Array;
      if (lineBytes === 0) all = buf.subarray(from, lf);
      else {
        line.set(buf.subarray(from, lf), lineBytes);
        all = line.subarray(0, lineBytes + lf - from);
      }
      lineBytes = 0;
      const hasCr = all.length > 0 && all[all.length - 1] === CR;
      if (requireCr && !hasCr) throw framing('line not terminated by CRLF');
      return Buffer.from(all.buffer, all.byteOffset, hasCr ? all.length - 1 : all.length).toString('latin1');
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
      if (!trailerMode) throw framing('trailers are only allowed with a -TRAILER payload');
      if (name !== TRAILER_SIGNATURE && !declared.has(name))
        throw framing(`trailer ${name.slice(0, 64)} was not declared in x-amz-trailer`);
      trailers.set(name, text.slice(colon + 1).trim());
    };

    for await (const buf of source) {
      let i = 0;
      while (i < buf.length) {
        if (state === 'header' || state === 'trailers') {
          const lf = buf.indexOf(LF, i);
          const end = lf < 0 ? buf.length : lf;
          if (lineBytes + end - i > MAX_CHUNK_LINE_BYTES) throw framing('line too long');
          if (state === 'trailers' && (trailerBytes += end + (lf < 0 ? 0 : 1) - i) > MAX_TRAILER_BYTES)
            throw framing('trailers too large');
          if (lf < 0) {
            line.set(buf.subarray(i), lineBytes);
            lineBytes += buf.length - i;
            break;
          }
          const text = takeLine(buf, i, lf, state === 'header');
          i = lf + 1;
          if (state === 'header') onHeader(text);
          else onTrailerLine(text);
        } else if (state === 'data') {
          const take = Math.min(chunkLeft, buf.length - i);
          const piece = buf.subarray(i, i + take);
          i += take;
          chunkLeft -= take;
          hash?.update(piece);
          if (staged === 0 && take >= DIRECT_MIN_BYTES) yield piece;
          else {
            for (let off = 0; off < take; ) {
              staging ??= new Uint8Array(STAGING_BYTES);
              const n = Math.min(take - off, STAGING_BYTES - staged);
              staging.set(piece.subarray(off, off + n), staged);
              staged += n;
              off += n;
              if (staged === STAGING_BYTES) {
                const full = staging;
                staging = undefined; // handed on: never written again
                staged = 0;
                yield full;
                if (take - off >= DIRECT_MIN_BYTES) {
                  yield piece.subarray(off);
                  break;
                }
              }
            }
          }
          if (chunkLeft === 0) {
            if (hash) verifyChunk(hash.digest('hex'));
            hash = undefined;
            state = 'data-cr';
          }
        } else if (state === 'data-cr' || state === 'data-lf') {
          const want = state === 'data-cr' ? CR : LF;
          if (buf[i] !== want) throw framing('chunk data not followed by CRLF');
          i++;
          state = state === 'data-cr' ? 'data-lf' : 'header';
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
    if (staged > 0) yield staging!.subarray(0, staged);
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
