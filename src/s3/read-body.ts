/**
 * @module Small request bodies (XML documents) read whole, bounded, and verified against
 * every integrity claim the request makes: hex payload hash, Content-MD5, x-amz-checksum-*.
 */
import type { RequestContext } from './context.js';
import { requestBody } from './body.js';
import { finishDigest, startDigest } from '../store/digest.js';
import { S3Error } from './errors.js';

/**
 * The request body (at most `max` bytes, else MaxMessageLengthExceeded) after checking its
 * claims (BadDigest / XAmzContentSHA256Mismatch / InvalidDigest via the store's rules).
 *
 * `objectChecksumHeaders`: the request's x-amz-checksum-* headers describe the object being
 * written, not this body (CompleteMultipartUpload: the whole-object or composite checksum),
 * so they are left to the caller and not checked against the XML.
 */
export async function readBody(r: RequestContext, max: number, opts: { objectChecksumHeaders?: boolean } = {}): Promise<Uint8Array> {
  const b = requestBody(r);
  if (opts.objectChecksumHeaders && b.claims) b.claims = { ...b.claims, checksums: {} };
  if (b.size > max) throw new S3Error('MaxMessageLengthExceeded', `Your request was too big (over ${max} bytes).`);
  const incomplete = () => new S3Error('IncompleteBody', 'You did not provide the number of bytes specified by the Content-Length HTTP header.');
  // Copied as it arrives, into one buffer of the announced size (≤ max). aws-chunked bodies
  // yield views of the socket's buffers: kept as they are, a body sent in 1-byte chunks would
  // pin every 64 KiB buffer it arrived in, plus one view object per byte — about 90 times the
  // body's size, for 1 MiB to 8 MiB bodies.
  const out = Buffer.allocUnsafe(b.size);
  let n = 0;
  for await (const c of b.body) {
    if (n + c.length > max) throw new S3Error('MaxMessageLengthExceeded', `Your request was too big (over ${max} bytes).`);
    if (n + c.length > out.length) throw incomplete();
    out.set(c, n);
    n += c.length;
  }
  if (n !== b.size && !(r.headers['content-length'] === undefined && b.size === 0)) throw incomplete();
  const bytes = out.subarray(0, n);
  const digest = startDigest(b);
  digest.update(bytes);
  finishDigest(digest, b);
  return bytes;
}
