/**
 * @module Small request bodies (XML documents) read whole, bounded, and verified against
 * every integrity claim the request makes: hex payload hash, Content-MD5, x-amz-checksum-*.
 */
import type { RequestContext } from './context.js';
import { requestBody } from './body.js';
import { finishDigest, startDigest } from '../store/digest.js';
import { S3Error } from './errors.js';
import { BudgetedBuffer } from './budgeted-buffer.js';

/**
 * The request body (at most `max` bytes, else MaxMessageLengthExceeded) after checking its
 * claims (BadDigest / XAmzContentSHA256Mismatch / InvalidDigest via the store's rules).
 *
 * Memory: the body is copied as it arrives into a {@link BudgetedBuffer}, which charges the
 * pending budget before every growth (StoreError SlowDown when it is spent) and never
 * allocates by the announced length: a stalled client holds what it sent, not what it
 * promised. The reservation lasts until the response is finished (the parsed document
 * lives that long), released on the response's 'close' or at once if reading fails.
 *
 * `objectChecksumHeaders`: the request's x-amz-checksum-* headers describe the object being
 * written, not this body (CompleteMultipartUpload: the whole-object or composite checksum),
 * so they are left to the caller and not checked against the XML.
 */
export async function readBody(r: RequestContext, max: number, opts: { objectChecksumHeaders?: boolean } = {}): Promise<Uint8Array> {
  const b = requestBody(r);
  if (opts.objectChecksumHeaders && b.claims) b.claims = { ...b.claims, checksums: {} };
  const tooBig = () => new S3Error('MaxMessageLengthExceeded', `Your request was too big (over ${max} bytes).`);
  if (b.size > max) throw tooBig();
  const incomplete = () => new S3Error('IncompleteBody', 'You did not provide the number of bytes specified by the Content-Length HTTP header.');
  const budget = r.budget;
  // Never more than the announced size either: a longer body is IncompleteBody.
  const known = r.headers['content-length'] !== undefined || b.size > 0;
  const buf = new BudgetedBuffer((n) => budget.reserve(n), known ? b.size : max, () => (known ? incomplete() : tooBig()));
  try {
    for await (const c of b.body) buf.append(c);
    if (known && buf.length !== b.size) throw incomplete();
    const bytes = buf.bytes();
    const digest = startDigest(b);
    digest.update(bytes);
    finishDigest(digest, b);
    if (r.res.closed) buf.release();
    else r.res.once('close', () => buf.release());
    return bytes;
  } catch (err) {
    buf.release();
    throw err;
  }
}
