/**
 * @module Crafting S3 requests below the SDK: validly signed requests with chosen flaws
 * (so they pass authentication and reach the checks behind it), aws-chunked bodies with
 * correct or broken framing, and a byte-level HTTP/1.1 exchange over `node:net` for what
 * no HTTP client will send (truncated bodies, lying Content-Length, garbage request lines).
 *
 * Shared by the bad-input tests and the HTTP fuzzer; imports nothing from the server
 * besides the signer, so the fuzzer can be bundled without it.
 */
import { connect } from 'node:net';
import { createHash } from 'node:crypto';
import { signRequest, sha256Hex, deriveSigningKey, type Credentials } from '../../src/sigv4/index.js';
import { chunkSignature, trailerSignature, type ChainContext } from '../../src/s3/chunked/signature.js';

export interface WireRequest {
  method: string;
  /** The request-target as sent (encoded path and query). */
  target: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body?: Uint8Array;
}

export interface SignOptions {
  method: string;
  /** Decoded path, e.g. `/bucket/a key`. */
  path: string;
  query?: Record<string, string> | [string, string][];
  headers?: Record<string, string>;
  body?: Uint8Array;
  /** x-amz-content-sha256 to sign; default the hex SHA-256 of `body` (or of nothing). */
  payloadHash?: string;
  host: string;
  credentials: Credentials;
  region: string;
  date?: Date;
}

export interface SignedWire extends WireRequest {
  /** The Authorization signature (the seed of an aws-chunked chain). */
  signature: string;
  /** What chunk signatures chain from. */
  chain: ChainContext;
}

/** Signs `o` with the Authorization header (our signer); the result is ready to send. */
export function signV4(o: SignOptions): SignedWire {
  const date = o.date ?? new Date();
  const payloadHash = o.payloadHash ?? sha256Hex(o.body ?? new Uint8Array(0));
  const headers: Record<string, string> = { host: o.host, ...lower(o.headers ?? {}) };
  // Signed, as SDKs do; raw exchanges need it on the wire anyway.
  if (o.body && headers['content-length'] === undefined) headers['content-length'] = String(o.body.length);
  const s = signRequest(
    {
      method: o.method,
      path: o.path,
      ...(o.query ? { query: o.query } : {}),
      headers,
      payloadHash,
    },
    { credentials: o.credentials, region: o.region, service: 's3', date }
  );
  const amzDate = s.headers['x-amz-date']!;
  const out: SignedWire = {
    method: o.method,
    target: s.encodedQuery ? `${s.encodedPath}?${s.encodedQuery}` : s.encodedPath,
    headers: { ...headers, ...s.headers },
    signature: s.signature,
    chain: {
      signingKey: deriveSigningKey(o.credentials.secretAccessKey, amzDate.slice(0, 8), o.region, 's3'),
      scope: `${amzDate.slice(0, 8)}/${o.region}/s3/aws4_request`,
      amzDate,
    },
  };
  if (o.body) out.body = o.body;
  return out;
}

function lower(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}

/** One frame of an aws-chunked body; `size` may lie about `data.length`. */
export interface ChunkFrame {
  data: Uint8Array;
  /** Hex size written in the header; default `data.length` in hex. */
  sizeText?: string;
  /** Signature written in the header (signed mode); default the correct one. */
  signature?: string;
}

/** Splits `body` into frames of `chunkSize` bytes (the final 0-byte frame not included). */
export function framesOf(body: Uint8Array, chunkSize: number): ChunkFrame[] {
  const frames: ChunkFrame[] = [];
  for (let off = 0; off < body.length; off += chunkSize) frames.push({ data: body.subarray(off, off + chunkSize) });
  return frames;
}

/**
 * A signed aws-chunked body (STREAMING-AWS4-HMAC-SHA256-PAYLOAD) for `frames`, chained from
 * `seed`, ending with the signed 0-byte chunk (unless `final: false`). Signatures of frames
 * that say so are replaced (the chain continues from the correct one, as a forger would
 * have to).
 */
export function signedChunked(
  chain: ChainContext,
  seed: string,
  frames: readonly ChunkFrame[],
  opts: { final?: boolean; trailers?: [string, string][] } = {}
): Buffer {
  const parts: Buffer[] = [];
  let previous = seed;
  const all = opts.final === false ? frames : [...frames, { data: new Uint8Array(0) }];
  for (const f of all) {
    const sig = chunkSignature(chain, previous, sha256Hex(f.data));
    previous = sig;
    const size = f.sizeText ?? f.data.length.toString(16);
    parts.push(Buffer.from(`${size};chunk-signature=${f.signature ?? sig}\r\n`), Buffer.from(f.data));
    if (f.data.length > 0 || f !== all[all.length - 1]) parts.push(Buffer.from('\r\n'));
  }
  if (opts.final !== false) {
    if (opts.trailers) {
      const map = new Map(opts.trailers);
      for (const [k, v] of opts.trailers) parts.push(Buffer.from(`${k}:${v}\r\n`));
      parts.push(Buffer.from(`x-amz-trailer-signature:${trailerSignature(chain, previous, map)}\r\n`));
    }
    parts.push(Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** An unsigned aws-chunked body with trailers (STREAMING-UNSIGNED-PAYLOAD-TRAILER). */
export function unsignedChunked(frames: readonly ChunkFrame[], trailers: [string, string][], opts: { final?: boolean } = {}): Buffer {
  const parts: Buffer[] = [];
  for (const f of frames) {
    parts.push(Buffer.from(`${f.sizeText ?? f.data.length.toString(16)}\r\n`), Buffer.from(f.data), Buffer.from('\r\n'));
  }
  if (opts.final !== false) {
    parts.push(Buffer.from('0\r\n'));
    for (const [k, v] of trailers) parts.push(Buffer.from(`${k}:${v}\r\n`));
    parts.push(Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** Base64 MD5 (Content-MD5). */
export function md5Base64(data: Uint8Array): string {
  return createHash('md5').update(data).digest('base64');
}

/** The request head (request line and headers, CRLF-terminated) of `r`. */
export function requestHead(r: Pick<WireRequest, 'method' | 'target' | 'headers'>, version = 'HTTP/1.1'): string {
  let head = `${r.method} ${r.target} ${version}\r\n`;
  for (const [k, v] of Object.entries(r.headers)) head += `${k}: ${v}\r\n`;
  return `${head}\r\n`;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Everything received, unparsed. */
  raw: Buffer;
}

export interface RawExchangeOptions {
  /** After writing: 'end' half-closes, 'destroy' resets at once, 'keep' waits for the reply. */
  close?: 'end' | 'destroy' | 'keep';
  /** Give up waiting after this many ms (the exchange then resolves with what arrived). */
  timeoutMs?: number;
  /** Pause between the writes of consecutive pieces, ms. */
  gapMs?: number;
  /** The request is a HEAD: the response has no body whatever its Content-Length says. */
  head?: boolean;
  /** With close 'destroy': how long after the last write, ms (default 20). */
  lingerMs?: number;
}

/**
 * Writes `pieces` to a fresh connection to 127.0.0.1:`port` and returns the first
 * response (undefined if none arrived: the server closed, the client destroyed, or the
 * timeout ran out). Never throws for network errors (ECONNRESET is an outcome).
 */
export function rawExchange(port: number, pieces: readonly (string | Uint8Array)[], opts: RawExchangeOptions = {}): Promise<RawResponse | undefined> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    const got: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(parseResponse(Buffer.concat(got), opts.head));
    };
    const timer = setTimeout(finish, timeoutMs);
    let total = 0;
    let head: { headerBytes: number; length?: number; chunked: boolean } | undefined;
    sock.on('data', (d: Buffer) => {
      got.push(d);
      total += d.length;
      // Stop as soon as one complete response is in (the server may keep the socket open).
      // The header block is parsed once; after it, only lengths are compared.
      if (!head) {
        const all = Buffer.concat(got);
        const r = parseResponse(all, opts.head);
        if (!r) return;
        if (responseComplete(r)) return finish();
        const len = r.headers['content-length'];
        head = { headerBytes: all.length - r.body.length, chunked: /chunked/i.test(r.headers['transfer-encoding'] ?? ''), ...(len !== undefined ? { length: Number(len) } : {}) };
      }
      if (head.length !== undefined ? total - head.headerBytes >= head.length : head.chunked && Buffer.concat(got.slice(-2)).subarray(-5).toString('latin1') === '0\r\n\r\n') {
        const r = parseResponse(Buffer.concat(got), opts.head);
        if (r && responseComplete(r)) finish();
      }
    });
    sock.on('error', finish);
    sock.on('close', finish);
    sock.on('connect', async () => {
      try {
        for (let i = 0; i < pieces.length; i++) {
          if (i > 0 && opts.gapMs) await new Promise((r) => setTimeout(r, opts.gapMs));
          if (sock.destroyed) return;
          await new Promise<void>((res, rej) => sock.write(pieces[i]!, (e) => (e ? rej(e) : res())));
        }
        if (opts.close === 'end') sock.end();
        else if (opts.close === 'destroy') {
          // Let the bytes leave before the reset; a response is then not awaited.
          await new Promise((r) => setTimeout(r, opts.lingerMs ?? 20));
          got.length = 0;
          finish();
        }
      } catch {
        finish();
      }
    });
  });
}

const complete = new WeakSet<RawResponse>();
function responseComplete(r: RawResponse): boolean {
  return complete.has(r);
}

/**
 * Parses the first HTTP/1.1 response in `buf` (to a HEAD request when `head`); undefined
 * when there is no complete status line and header block.
 */
export function parseResponse(buf: Buffer, head = false): RawResponse | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!);
  if (!m) return undefined;
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const c = l.indexOf(':');
    if (c > 0) headers[l.slice(0, c).trim().toLowerCase()] = l.slice(c + 1).trim();
  }
  const status = Number(m[1]);
  const r: RawResponse = { status, headers, body: buf.subarray(end + 4), raw: buf };
  const len = headers['content-length'];
  if (head) {
    r.body = r.body.subarray(0, 0);
    complete.add(r);
  } else if (len !== undefined) {
    if (r.body.length >= Number(len)) {
      r.body = r.body.subarray(0, Number(len));
      complete.add(r);
    }
  } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const body = dechunk(r.body);
    if (body) {
      r.body = body;
      complete.add(r);
    }
  } else if (status === 204 || status === 304 || (status >= 100 && status < 200)) {
    complete.add(r);
  }
  return r;
}

/** The payload of a complete chunked body (trailers ignored), or undefined if incomplete. */
function dechunk(buf: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let i = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', i);
    if (eol < 0) return undefined;
    const size = parseInt(buf.subarray(i, eol).toString('latin1'), 16);
    if (!Number.isFinite(size)) return undefined;
    if (size === 0) return buf.indexOf('\r\n\r\n', eol) >= 0 || buf.subarray(eol, eol + 4).equals(Buffer.from('\r\n\r\n')) ? Buffer.concat(parts) : undefined;
    if (buf.length < eol + 2 + size + 2) return undefined;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
}

/** The `<Code>` of an S3 XML error body, or undefined. */
export function errorCode(body: string | Uint8Array): string | undefined {
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  return /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
}
