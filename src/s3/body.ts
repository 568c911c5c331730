/**
 * @module The request-body pipeline for PutObject and UploadPart.
 *
 *   HTTP body (Node has undone Transfer-Encoding: chunked)
 *     -> aws-chunked decoding when x-amz-content-sha256 is STREAMING-* (chunk signatures
 *        checked, trailers collected), sized by x-amz-decoded-content-length
 *     -> the store, which hashes once and checks every claim: Content-MD5, the hex payload
 *        hash, x-amz-checksum-* from headers, query string or trailers.
 *
 * Read from the Node request object directly (through web streams the PUT path costs
 * several times more CPU here).
 */
import type { RequestContext } from './context.js';
import { AwsChunkedDecoder, awsChunkedOptionsFromHeaders } from './chunked/index.js';
import { CHECKSUM_NAMES, type ChecksumName } from '../store/records.js';
import type { BodyClaims, ClaimOptions } from '../store/digest.js';
import { S3Error } from './errors.js';
import { bodyCut } from './body-deadline.js';
import { readBodySource } from './body-source.js';

export interface RequestBody extends ClaimOptions {
  body: AsyncIterable<Uint8Array>;
  size: number;
}

/** A body whose size may be unknown (`Transfer-Encoding: chunked` without Content-Length). */
export interface MaybeSizedBody extends ClaimOptions {
  body: AsyncIterable<Uint8Array>;
  /** Undefined: read to the end of the stream. */
  size?: number;
}

const ALG_HEADER = (n: ChecksumName) => `x-amz-checksum-${n}`;

/** The checksum algorithm named by a header value such as 'CRC32' / 'crc64nvme'. */
export function checksumName(value: string | undefined, header: string): ChecksumName | undefined {
  if (value === undefined || value === '') return undefined;
  const n = value.trim().toLowerCase() as ChecksumName;
  if (!CHECKSUM_NAMES.includes(n)) {
    throw new S3Error('InvalidRequest', `Value for ${header} header is invalid.`);
  }
  return n;
}

/**
 * The x-amz-checksum-<alg> claims of a header record (or the query, for presigned URLs)
 * and the algorithm announced by x-amz-sdk-checksum-algorithm / x-amz-checksum-algorithm.
 * Throws S3Error InvalidRequest for an unknown algorithm or more than one claim. Pure.
 */
export function checksumHeaders(
  h: Readonly<Record<string, string | undefined>>,
  query: ReadonlyMap<string, string> = new Map()
): { checksums: Partial<Record<ChecksumName, string>>; checksumAlgorithm?: ChecksumName } {
  const checksums: Partial<Record<ChecksumName, string>> = {};
  for (const n of CHECKSUM_NAMES) {
    const v = h[ALG_HEADER(n)] ?? query.get(ALG_HEADER(n));
    if (v !== undefined) checksums[n] = v;
  }
  if (Object.keys(checksums).length > 1) {
    throw new S3Error('InvalidRequest', 'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.');
  }
  const checksumAlgorithm =
    checksumName(h['x-amz-sdk-checksum-algorithm'] ?? query.get('x-amz-sdk-checksum-algorithm'), 'x-amz-sdk-checksum-algorithm') ??
    checksumName(h['x-amz-checksum-algorithm'], 'x-amz-checksum-algorithm');
  return checksumAlgorithm ? { checksums, checksumAlgorithm } : { checksums };
}

/**
 * The request's body bytes, read with bounded memory (body-source.ts; its working memory
 * charged to the pending budget) and counted for metrics. The stream fails only when the
 * client's connection does (it closed or reset mid-body, or sat idle past the socket
 * timeout): that is the client's `IncompleteBody`, not an InternalError. When the
 * connection guard cuts the body for stalling (s3/body-deadline.ts), the wait for the
 * next piece ends at once with `RequestTimeout`, so the request releases what it holds
 * without waiting for the socket to close.
 */
export async function* counted(r: RequestContext): AsyncGenerator<Uint8Array> {
  const len = r.headers['content-length'];
  const expected = len !== undefined && /^\d{1,15}$/.test(len.trim()) ? Number(len) : undefined;
  const source = readBodySource(r.incoming, {
    // r.budget when the reader grows: a POST form moves to its signer's share once read.
    reserve: (n) => r.budget.reserve(n),
    signal: bodyCut(r.incoming),
    cutError: () => new S3Error('RequestTimeout', `The request body arrived too slowly (${r.bytesIn} bytes received); the connection is closed.`),
    closedError: (cause) => new S3Error('IncompleteBody', `The connection closed after ${r.bytesIn} bytes of the request body (${String(cause)}).`),
    // Last: a literal that starts with a spread and goes on is slow (ops/objects.ts put).
    ...(expected !== undefined ? { expectedBytes: expected } : {}),
  });
  for await (const piece of source) {
    r.bytesIn += piece.length;
    yield piece;
  }
}

/**
 * The body pipeline of a request with a known length: Content-Length, or
 * x-amz-decoded-content-length for aws-chunked. Throws S3Error MissingContentLength for a
 * plain chunked body, InvalidArgument for a bad Content-Length, InvalidRequest for bad
 * checksum headers.
 */
export function requestBody(r: RequestContext): RequestBody {
  const b = bodyOf(r, false);
  if (b.size === undefined) throw new S3Error('MissingContentLength');
  return Object.assign({}, b, { size: b.size });
}

/**
 * As requestBody, but a plain `Transfer-Encoding: chunked` body without Content-Length is
 * accepted with `size` undefined (PutObject stores it through the unsized path).
 */
export function requestBodyMaybeSized(r: RequestContext): MaybeSizedBody {
  return bodyOf(r, true);
}

function bodyOf(r: RequestContext, allowUnsized: boolean): MaybeSizedBody {
  const h = r.headers;
  const payload = r.auth!.payload;
  const { checksums: headerClaims, checksumAlgorithm: announced } = checksumHeaders(h, r.query);
  let checksumAlgorithm = announced;
  const trailerNames = (h['x-amz-trailer'] ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  for (const t of trailerNames) {
    const n = t.startsWith('x-amz-checksum-') ? (t.slice('x-amz-checksum-'.length) as ChecksumName) : undefined;
    if (!n || !CHECKSUM_NAMES.includes(n)) throw new S3Error('InvalidRequest', `Unsupported trailer ${t}`);
    checksumAlgorithm ??= n;
  }
  const claimedAlg = Object.keys(headerClaims)[0] as ChecksumName | undefined;
  checksumAlgorithm ??= claimedAlg;
  const base: BodyClaims = { checksums: headerClaims };
  if (h['content-md5'] !== undefined) base.contentMd5 = h['content-md5'];

  if (payload.mode === 'streaming-signed' || payload.mode === 'streaming-unsigned-trailer') {
    const opts = awsChunkedOptionsFromHeaders(h, payload);
    // The decoder's working memory is charged to the pending budget like the store's.
    const budget = r.budget;
    const decoder = new AwsChunkedDecoder(Object.assign({}, opts, { reserve: (n: number) => budget.reserve(n) }));
    const out: MaybeSizedBody = {
      body: decoder.decode(counted(r)),
      size: opts.decodedLength,
      claims: base,
      trailingClaims: () => {
        const c: Partial<Record<ChecksumName, string>> = {};
        for (const [name, value] of decoder.trailers ?? []) {
          const n = name.slice('x-amz-checksum-'.length) as ChecksumName;
          if (CHECKSUM_NAMES.includes(n)) c[n] = value;
        }
        return c;
      },
    };
    if (checksumAlgorithm) out.checksumAlgorithm = checksumAlgorithm;
    return out;
  }
  const len = h['content-length'];
  let unsized = false;
  if (len === undefined) {
    if (h['transfer-encoding'] !== undefined) {
      // Node has already undone the chunked framing; only a plain chunked body is meant
      // here (aws-chunked was handled above).
      if (!allowUnsized || !/(^|,)\s*chunked\s*$/i.test(h['transfer-encoding'])) throw new S3Error('MissingContentLength');
      unsized = true;
    }
    // No body at all (e.g. a PUT without Content-Length or Transfer-Encoding) is empty.
  } else if (!/^\d{1,15}$/.test(len.trim())) {
    throw new S3Error('InvalidArgument', 'Content-Length is not a valid number', { ArgumentName: 'Content-Length', ArgumentValue: len });
  }
  const claims: BodyClaims = { ...base };
  if (payload.mode === 'sha256') claims.payloadSha256 = payload.hex;
  const out: MaybeSizedBody = { body: counted(r), claims };
  if (!unsized) out.size = len === undefined ? 0 : Number(len);
  if (checksumAlgorithm) out.checksumAlgorithm = checksumAlgorithm;
  return out;
}
