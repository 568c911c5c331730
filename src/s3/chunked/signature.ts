/**
 * @module The signature chain of signed aws-chunked bodies.
 *
 *   chunk:   HMAC(key, "AWS4-HMAC-SHA256-PAYLOAD" \n amzDate \n scope \n previous \n
 *                       hex(SHA256("")) \n hex(SHA256(chunk data)))
 *   trailer: HMAC(key, "AWS4-HMAC-SHA256-TRAILER" \n amzDate \n scope \n previous \n
 *                       hex(SHA256(canonical trailers)))
 *
 * The chain starts at the request's (seed) signature; the final 0-byte chunk is signed too,
 * and the trailer signature follows it. Canonical trailers are `name:value\n` per trailer,
 * names lower-case, sorted. Sources: https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-streaming.html
 * and …/sigv4-streaming-trailers.html. SHA-256 of chunk data is node:crypto's (OpenSSL,
 * SHA-NI where available: the fastest on Node).
 */
import { EMPTY_PAYLOAD_SHA256, hmacSha256Hex, sha256Hex } from '../../sigv4/hash.js';

const CHUNK_ALGORITHM = 'AWS4-HMAC-SHA256-PAYLOAD';
const TRAILER_ALGORITHM = 'AWS4-HMAC-SHA256-TRAILER';

/** What every link of the chain is computed with (from the authenticated request). */
export interface ChainContext {
  signingKey: Uint8Array;
  /** `yyyymmdd/region/s3/aws4_request`. */
  scope: string;
  /** `yyyymmddThhmmssZ` of the request. */
  amzDate: string;
}

/** Signature of a chunk whose data hashes to `dataSha256Hex`, following `previous`. Pure. */
export function chunkSignature(ctx: ChainContext, previous: string, dataSha256Hex: string): string {
  const sts = `${CHUNK_ALGORITHM}\n${ctx.amzDate}\n${ctx.scope}\n${previous}\n${EMPTY_PAYLOAD_SHA256}\n${dataSha256Hex}`;
  return hmacSha256Hex(ctx.signingKey, sts);
}

/** `name:value\n` for each trailer, sorted by (lower-case) name. Pure. */
export function canonicalTrailers(trailers: ReadonlyMap<string, string>): string {
  return [...trailers]
    .map(([name, value]) => [name.toLowerCase(), value] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}:${value}\n`)
    .join('');
}

/** Signature of the trailers (x-amz-trailer-signature excluded), following `previous`. Pure. */
export function trailerSignature(
  ctx: ChainContext,
  previous: string,
  trailers: ReadonlyMap<string, string>
): string {
  const sts = `${TRAILER_ALGORITHM}\n${ctx.amzDate}\n${ctx.scope}\n${previous}\n${sha256Hex(canonicalTrailers(trailers))}`;
  return hmacSha256Hex(ctx.signingKey, sts);
}
