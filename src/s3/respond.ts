/**
 * @module Writing responses straight to Node's ServerResponse (no web-stream hop): small
 * XML bodies in one write, object bodies streamed with backpressure, errors as S3 XML.
 *
 * If a body stream fails after the status line went out (e.g. a corrupted blob detected
 * mid-object), the connection is destroyed: the client sees a short body and fails, it
 * never receives bytes that did not verify.
 */
import { pipeline } from 'node:stream/promises';
import { Readable, Transform } from 'node:stream';
import type { RequestContext } from './context.js';
import { renderError, S3Error } from './errors.js';
import { s3ErrorOf, retryAfterOf } from './store-errors.js';

const XML_TYPE = 'application/xml';

export function sendEmpty(r: RequestContext, status: number, headers: Record<string, string | number> = {}): void {
  r.res.writeHead(status, { ...r.baseHeaders, ...headers });
  r.res.end();
}

export function sendXml(r: RequestContext, status: number, xml: string, headers: Record<string, string | number> = {}): void {
  const body = Buffer.from(xml, 'utf8');
  r.res.writeHead(status, { ...r.baseHeaders, 'content-type': XML_TYPE, 'content-length': body.length, ...headers });
  r.res.end(body);
  r.bytesOut += body.length;
}

/** Streams `body` as the response; `headers` must carry content-length. */
export async function sendStream(
  r: RequestContext,
  status: number,
  headers: Record<string, string | number>,
  body: AsyncIterable<Uint8Array>
): Promise<void> {
  r.res.writeHead(status, { ...r.baseHeaders, ...headers });
  if (r.method === 'HEAD') {
    r.res.end();
    return;
  }
  const count = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      r.bytesOut += chunk.length;
      cb(null, chunk);
    },
  });
  try {
    await pipeline(Readable.from(body, { objectMode: false }), count, r.res);
  } catch (err) {
    r.errorCode = r.errorCode ?? (err instanceof Error ? s3ErrorOf(err).code : 'InternalError');
    r.deps.log.warn('response body failed', { id: r.id, op: r.op, bucket: r.bucket, key: r.key, error: String(err) });
    r.res.destroy();
  }
}

/** Sends `err` as an S3 error response (status only for HEAD), unless headers already went out. */
export function sendError(r: RequestContext, err: unknown): void {
  const e = s3ErrorOf(err);
  r.errorCode = e.code;
  if (e.code === 'InternalError' && !(err instanceof S3Error)) {
    r.deps.log.error('internal error', { id: r.id, op: r.op, bucket: r.bucket, key: r.key, error: String(err), stack: (err as Error)?.stack });
  }
  if (r.res.headersSent) {
    r.res.destroy();
    return;
  }
  const headers: Record<string, string | number> = {};
  // An unread request body would have to be drained before the next request on this
  // connection; close it instead (clients retry on a fresh one).
  if (!r.incoming.complete) headers.connection = 'close';
  const retry = retryAfterOf(err);
  if (retry !== undefined) headers['retry-after'] = retry;
  if (e.code === 'InvalidRange' && e.detail.ActualObjectSize !== undefined) {
    headers['content-range'] = `bytes */${e.detail.ActualObjectSize}`;
  }
  if (e.code === 'NotModified' || r.method === 'HEAD') {
    sendEmpty(r, e.status, headers);
    return;
  }
  sendXml(r, e.status, renderError(e, r.id, r.resource), headers);
}
