/**
 * @module Writing responses straight to Node's ServerResponse (no web-stream hop): small
 * XML bodies in one write, object bodies streamed with backpressure, errors as S3 XML.
 *
 * If a body stream fails after the status line went out (e.g. a corrupted blob detected
 * mid-object), the connection is destroyed: the client sees a short body and fails, it
 * never receives bytes that did not verify.
 */
import { deleteMarkerOf } from '../store/objects-read.js';
import type { RequestContext } from './context.js';
import { renderError, S3Error } from './errors.js';
import type { XmlChunks } from './xml/build.js';
import { s3ErrorOf, retryAfterOf } from './store-errors.js';
import { writtenCallback } from '../store/chunk-scatter-read.js';

const XML_TYPE = 'application/xml';

/**
 * Writes the status line and the headers: the request's base headers, then `headers` (which
 * win over a base header of the same name, as a merge would), handed to Node as the flat
 * [name, value, ...] list writeHead takes instead of a merged object built per response.
 */
export function writeHead(r: RequestContext, status: number, headers: Readonly<Record<string, string | number>>): void {
  const base = r.baseHeaders;
  const list: (string | number)[] = [];
  for (const k in base) if (headers[k] === undefined) list.push(k, base[k]!);
  for (const k in headers) list.push(k, headers[k]!);
  r.res.writeHead(status, list);
}

export function sendEmpty(r: RequestContext, status: number, headers: Record<string, string | number> = {}): void {
  writeHead(r, status, headers);
  r.res.end();
}

/**
 * Sends an XML document: a string in one write, or a document in pieces (a listing page)
 * as one Buffer per piece, written together under cork: no single large string or Buffer is
 * made (see s3DocumentChunks).
 */
export function sendXml(r: RequestContext, status: number, xml: string | XmlChunks, headers: Record<string, string | number> = {}): void {
  if (typeof xml === 'string' || xml.length === 1) {
    const body = Buffer.from(typeof xml === 'string' ? xml : xml[0]!, 'utf8');
    writeHead(r, status, { 'content-type': XML_TYPE, 'content-length': body.length, ...headers });
    r.res.end(body);
    r.bytesOut += body.length;
    return;
  }
  const pieces = xml.map((piece) => Buffer.from(piece, 'utf8'));
  let length = 0;
  for (const piece of pieces) length += piece.length;
  const res = r.res;
  writeHead(r, status, { 'content-type': XML_TYPE, 'content-length': length, ...headers });
  res.cork();
  for (let i = 0; i < pieces.length - 1; i++) res.write(pieces[i]);
  res.end(pieces[pieces.length - 1]);
  res.uncork();
  r.bytesOut += length;
}

/**
 * Streams `body` as the response; `headers` must carry content-length. Writes with
 * backpressure (waits for 'drain' when write() says so); a body whose first chunk is all
 * of it (a packed object) goes out in a single end() call with no further pull.
 */
export async function sendStream(
  r: RequestContext,
  status: number,
  headers: Record<string, string | number>,
  body: AsyncIterable<Uint8Array>
): Promise<void> {
  const res = r.res;
  if (r.method === 'HEAD') {
    writeHead(r, status, headers);
    res.end();
    return;
  }
  const it = body[Symbol.asyncIterator]();
  try {
    // Pull the first chunk before the status line: an early failure (a missing or
    // corrupted blob) can still become a proper error response.
    let next = await it.next();
    writeHead(r, status, headers);
    if (!next.done && next.value.length === Number(headers['content-length'])) {
      // The whole body in its first chunk (a packed object, a one-span carrier): one end()
      // call, and the stream is closed without another pull (its cleanup still runs).
      const chunk = next.value;
      r.bytesOut += chunk.length;
      const written = writtenCallback(chunk);
      if (written) res.end(chunk, written);
      else res.end(chunk);
      void it.return?.(undefined).catch(() => undefined);
      return;
    }
    while (!next.done) {
      const chunk = next.value;
      const following = it.next(); // read ahead while the socket drains
      following.catch(() => undefined); // its failure is handled when awaited below
      r.bytesOut += chunk.length;
      // A pooled span buffer goes back once the socket has taken it (chunk-scatter-read.ts).
      const written = writtenCallback(chunk);
      if (!(written ? res.write(chunk, written) : res.write(chunk))) await waitDrain(r);
      next = await following;
    }
    res.end();
  } catch (err) {
    await it.return?.().catch(() => undefined);
    if (!res.headersSent) throw err;
    r.errorCode = r.errorCode ?? s3ErrorOf(err).code;
    r.deps.log.warn('response body failed', { id: r.id, op: r.op, bucket: r.bucket, key: r.key, error: String(err) });
    res.destroy();
  }
}

/**
 * Resolves on 'drain'; rejects once the connection is gone. A pipelined response queued
 * behind another has no socket yet and never emits 'close' when the connection dies (Node
 * only destroys its request), so the request's 'close' with a destroyed socket counts too —
 * else the handler would wait forever, holding its buffers and its in-flight slot.
 */
function waitDrain(r: RequestContext): Promise<void> {
  const res = r.res;
  const req = r.incoming;
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      res.off('drain', done);
      res.off('close', closed);
      req.off('close', reqClosed);
    };
    const done = () => {
      cleanup();
      resolve();
    };
    const closed = () => {
      cleanup();
      reject(new Error('client closed the connection'));
    };
    const reqClosed = () => {
      if (req.socket?.destroyed ?? true) closed();
    };
    if (req.socket?.destroyed) return closed();
    res.on('drain', done);
    res.on('close', closed);
    req.on('close', reqClosed);
  });
}

/** Sends `err` as an S3 error response (status only for HEAD), unless headers already went out. */
export function sendError(r: RequestContext, err: unknown): void {
  const e = s3ErrorOf(err);
  r.errorCode = e.code;
  if (e.code === 'InternalError' && !(err instanceof S3Error)) {
    r.deps.log.error('internal error', { id: r.id, op: r.op, bucket: r.bucket, key: r.key, error: String(err), stack: (err as Error)?.stack });
  } else if (e.code === 'ServiceUnavailable' && !(err instanceof S3Error)) {
    // The storage could not serve it for now (domains out, writes queued too long, no file
    // descriptor): the client retries, and the operator needs the reason.
    r.deps.log.warn('service unavailable', { id: r.id, op: r.op, bucket: r.bucket, key: r.key, error: String(err) });
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
  // A read that met a delete marker says so (404 for the latest, 405 for one named by id).
  const marker = deleteMarkerOf(err);
  if (marker) {
    headers['x-amz-delete-marker'] = 'true';
    headers['x-amz-version-id'] = marker.versionId;
    if (e.code === 'MethodNotAllowed') headers['last-modified'] = new Date(marker.lastModified).toUTCString();
  }
  if (e.code === 'InvalidRange' && e.detail.ActualObjectSize !== undefined) {
    headers['content-range'] = `bytes */${e.detail.ActualObjectSize}`;
  }
  if (e.code === 'NotModified' || r.method === 'HEAD') {
    sendEmpty(r, e.status, headers);
    return;
  }
  sendXml(r, e.status, renderError(e, r.id, r.resource), headers);
}
