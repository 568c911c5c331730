/**
 * @module Sending one fuzz case and classifying what came back.
 *
 * A case is either an HTTP request (sent with undici over a shared keep-alive pool, so
 * connection reuse after odd requests is exercised too; requests undici refuses to send —
 * invalid header values, hop-by-hop headers — go over a raw socket instead) or raw bytes
 * written to a fresh socket.
 */
import { Agent, request } from 'undici';
import { rawExchange, requestHead, errorCode, type RawResponse } from '../../integration/wire.js';

export interface HttpCase {
  kind: 'http';
  method: string;
  target: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  /** Send over a raw socket even if undici could send it. */
  raw?: boolean;
}

export interface RawCase {
  kind: 'raw';
  pieces: (string | Uint8Array)[];
  close: 'end' | 'destroy' | 'keep';
  timeoutMs: number;
  head?: boolean;
  gapMs?: number;
  lingerMs?: number;
}

export type FuzzCase = (HttpCase | RawCase) & {
  /** Generator that produced the case (for the report). */
  family: string;
  /** Hard rule for this case: the request must not succeed (it is unauthenticated/tampered). */
  mustFail?: boolean;
};

export interface Outcome {
  /** HTTP status, or 'none' (connection closed without a response) / 'timeout'. */
  status: number | 'none' | 'timeout';
  code?: string;
  requestId?: string;
  /** The response claimed to be an S3 error but its body is not an `<Error>` document. */
  badErrorBody?: boolean;
  via: 'undici' | 'raw';
  error?: string;
}

/** Requests slower than this are abandoned (the server's own idle cut is minutes away). */
const REQUEST_TIMEOUT_MS = 15_000;

export function createPool(): Agent {
  return new Agent({
    connections: 32,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: 4_000,
  });
}

const HOP_BY_HOP = new Set(['connection', 'transfer-encoding', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer']);
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function undiciCanSend(c: HttpCase): boolean {
  if (c.raw || !TOKEN.test(c.method) || c.method === 'CONNECT') return false;
  if (!c.target.startsWith('/') || /[\s\x00-\x1f\x7f-\uffff]/.test(c.target)) return false;
  for (const [k, v] of Object.entries(c.headers)) {
    if (HOP_BY_HOP.has(k) || !TOKEN.test(k) || !HEADER_VALUE.test(v)) return false;
    if (k === 'content-length' && v !== String(c.body?.length ?? 0)) return false;
  }
  return !(c.body && (c.method === 'GET' || c.method === 'HEAD'));
}

function classify(status: number, headers: Record<string, string | string[] | undefined>, body: Buffer, method: string): Omit<Outcome, 'via'> {
  const out: Omit<Outcome, 'via'> = { status };
  const id = headers['x-amz-request-id'];
  if (typeof id === 'string') out.requestId = id;
  if (status >= 400 && method !== 'HEAD' && body.length > 0) {
    const code = errorCode(body);
    if (code !== undefined) out.code = code;
    // Our app's errors (they carry a request id) are always S3 XML documents.
    if (out.requestId && (code === undefined || !body.toString('utf8').startsWith('<?xml'))) out.badErrorBody = true;
  } else if (status >= 400 && method !== 'HEAD' && out.requestId) {
    out.badErrorBody = true;
  }
  return out;
}

function rawOutcome(r: RawResponse | undefined, method: string, timedOut: boolean): Outcome {
  if (!r) return { status: timedOut ? 'timeout' : 'none', via: 'raw' };
  return { ...classify(r.status, r.headers, r.body, method), via: 'raw' };
}

async function sendRawHttp(port: number, c: HttpCase): Promise<Outcome> {
  const headers = { ...c.headers };
  if (c.body && headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) {
    headers['content-length'] = String(c.body.length);
  }
  const pieces: (string | Uint8Array)[] = [requestHead({ method: c.method, target: c.target, headers })];
  if (c.body) pieces.push(c.body);
  const started = Date.now();
  const r = await rawExchange(port, pieces, { close: 'keep', timeoutMs: 5_000, head: c.method === 'HEAD' });
  return rawOutcome(r, c.method, !r && Date.now() - started >= 4_900);
}

/** Sends `c` to the server at `url`; never throws. */
export async function sendCase(url: string, port: number, pool: Agent, c: FuzzCase): Promise<Outcome> {
  if (c.kind === 'raw') {
    const started = Date.now();
    const r = await rawExchange(port, c.pieces, {
      close: c.close,
      timeoutMs: c.timeoutMs,
      ...(c.head ? { head: true } : {}),
      ...(c.gapMs ? { gapMs: c.gapMs } : {}),
      ...(c.lingerMs !== undefined ? { lingerMs: c.lingerMs } : {}),
    });
    const method = typeof c.pieces[0] === 'string' ? c.pieces[0].split(' ')[0]! : '';
    return rawOutcome(r, method, c.close === 'keep' && !r && Date.now() - started >= c.timeoutMs - 50);
  }
  if (!undiciCanSend(c)) return sendRawHttp(port, c);
  try {
    const res = await request(`${url}${c.target}`, {
      method: c.method,
      headers: c.headers,
      dispatcher: pool,
      ...(c.body ? { body: c.body } : {}),
    });
    const body = Buffer.from(await res.body.arrayBuffer());
    return { ...classify(res.statusCode, res.headers, body, c.method), via: 'undici' };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === 'UND_ERR_INVALID_ARG' || e.code === 'UND_ERR_NOT_SUPPORTED') return sendRawHttp(port, c);
    if (e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT') return { status: 'timeout', via: 'undici', error: e.code };
    return { status: 'none', via: 'undici', error: `${e.code ?? ''} ${e.message ?? String(err)}`.trim() };
  }
}

/** A printable description of a case (for failure reports). */
export function describeCase(c: FuzzCase): string {
  const show = (b: Uint8Array | string, max: number) => {
    const buf = typeof b === 'string' ? Buffer.from(b, 'latin1') : Buffer.from(b);
    const s = JSON.stringify(buf.subarray(0, max).toString('latin1'));
    return buf.length > max ? `${s}… (${buf.length} bytes)` : s;
  };
  if (c.kind === 'raw') return `raw [${c.family}] close=${c.close}: ${show(Buffer.concat(c.pieces.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : p))), 600)}`;
  const headers = Object.entries(c.headers)
    .map(([k, v]) => `${k}: ${show(v, 120)}`)
    .join('\n    ');
  return `${c.method} ${show(c.target, 300)} [${c.family}]\n    ${headers}${c.body ? `\n    body: ${show(c.body, 200)}` : ''}`;
}
