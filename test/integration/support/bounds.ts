/**
 * @module What the bounds tests share: the attacks of the adversarial review (held
 * connections that send almost all of a body, in 1-byte HTTP chunks or ordinary packets,
 * then stall), and the measurements that judge them (RSS of the server process from
 * /proc, the pending budget and the guard's counters from /metrics).
 */
import { connect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { sha256Hex } from '../../../src/sigv4/index.js';
import { chunkSignature } from '../../../src/s3/chunked/signature.js';
import { ACCESS_KEY, METRICS_AUTH, REGION, SECRET_KEY } from '../harness.js';
import { parseResponse, requestHead, signV4, type RawResponse, type SignOptions } from '../wire.js';

export const CREDS = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY };
export const MiB = 1024 * 1024;

/** Resident and peak resident set of process `pid`, bytes (from /proc/<pid>/status). */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/** All samples of the /metrics page (test servers' bearer token), by name (labels dropped, values summed). */
export async function metrics(url: string): Promise<Record<string, number>> {
  const res = await request(`${url}/metrics`, { headers: METRICS_AUTH });
  const text = await res.body.text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (m) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  }
  return out;
}

/** Polls `check` every 50 ms until it returns true or `ms` pass; returns its last verdict. */
export async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A connection that has sent part of a request and holds it open. */
export interface HeldRequest {
  socket: Socket;
  /** The first response, once it arrives (undefined if the connection closed without one). */
  response: Promise<RawResponse | undefined>;
  /** Resolves when the connection has closed (either side). */
  closed: Promise<void>;
  /** Sends more bytes. */
  write(bytes: string | Uint8Array): Promise<void>;
  /** Resets the connection. */
  destroy(): void;
}

/**
 * Connects to 127.0.0.1:`port`, writes `pieces` in order (waiting for each write to be
 * flushed) and keeps the connection open. Resolves once everything was written.
 */
export async function hold(port: number, pieces: readonly (string | Uint8Array)[]): Promise<HeldRequest> {
  const socket = connect({ host: '127.0.0.1', port });
  const got: Buffer[] = [];
  let settle!: (r: RawResponse | undefined) => void;
  const response = new Promise<RawResponse | undefined>((r) => (settle = r));
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  socket.on('data', (d: Buffer) => {
    got.push(d);
    const r = parseResponse(Buffer.concat(got));
    const len = Number(r?.headers['content-length'] ?? NaN);
    if (r && (!Number.isFinite(len) || r.body.length >= len)) settle(r);
  });
  socket.on('error', () => undefined);
  socket.once('close', () => settle(parseResponse(Buffer.concat(got))));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const write = (bytes: string | Uint8Array) =>
    new Promise<void>((resolve) => {
      if (socket.destroyed) return resolve();
      socket.write(bytes, () => resolve());
    });
  for (const p of pieces) await write(p);
  return { socket, response, closed, write, destroy: () => socket.destroy() };
}

/** Options of a signed aws-chunked PUT of one chunk holding `data`. */
export interface ChunkedPut {
  port: number;
  bucket: string;
  key: string;
  data: Uint8Array;
  /** 'packets': Content-Length framing. 'bytes': HTTP/1.1 chunked, one payload byte per HTTP chunk. */
  framing: 'packets' | 'bytes';
}

/**
 * The wire bytes of a signed aws-chunked PUT whose body is one chunk holding `data`, then
 * the signed final chunk — as head and body, the body HTTP-chunked one byte per HTTP chunk
 * when framing is 'bytes' (the 0-size terminator included). `body.subarray(0,
 * lastDataByte)` is everything but the last payload byte.
 */
export function signedChunkedPut(o: ChunkedPut): { head: string; body: Buffer; lastDataByte: number } {
  const host = `127.0.0.1:${o.port}`;
  const decoded = o.data.length;
  const headers: Record<string, string> = {
    'content-encoding': 'aws-chunked',
    'x-amz-decoded-content-length': String(decoded),
  };
  const opts: SignOptions = {
    method: 'PUT',
    path: `/${o.bucket}/${o.key}`,
    headers,
    payloadHash: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
    host,
    credentials: CREDS,
    region: REGION,
  };
  // The aws-chunked body: one data chunk and the final chunk, each signed in the chain.
  const unsignedHead = signV4(opts); // to learn the seed signature and chain
  const sig1 = chunkSignature(unsignedHead.chain, unsignedHead.signature, sha256Hex(o.data));
  const sig0 = chunkSignature(unsignedHead.chain, sig1, sha256Hex(new Uint8Array(0)));
  const prefix = Buffer.from(`${decoded.toString(16)};chunk-signature=${sig1}\r\n`);
  const suffix = Buffer.from(`\r\n0;chunk-signature=${sig0}\r\n\r\n`);
  const aws = Buffer.concat([prefix, o.data, suffix]);
  if (o.framing === 'packets') {
    const w = signV4({ ...opts, headers: { ...headers, 'content-length': String(aws.length) } });
    return { head: requestHead(w), body: aws, lastDataByte: prefix.length + decoded - 1 };
  }
  const w = signV4({ ...opts, headers: { ...headers, 'transfer-encoding': 'chunked' } });
  return { head: requestHead(w), body: httpChunkedBytewise(aws), lastDataByte: (prefix.length + decoded - 1) * 6 };
}

/** `bytes` as an HTTP/1.1 chunked body of 1-byte chunks ("1\r\nX\r\n" each), terminated. */
export function httpChunkedBytewise(bytes: Uint8Array): Buffer {
  const out = Buffer.alloc(bytes.length * 6 + 5);
  for (let i = 0; i < bytes.length; i++) {
    const o = i * 6;
    out[o] = 0x31; // '1'
    out[o + 1] = 0x0d;
    out[o + 2] = 0x0a;
    out[o + 3] = bytes[i]!;
    out[o + 4] = 0x0d;
    out[o + 5] = 0x0a;
  }
  out.write('0\r\n\r\n', bytes.length * 6, 'latin1');
  return out;
}

/** Wire bytes of a signed request with a body whose hash is signed (Content-Length set). */
export function signedRequest(port: number, method: string, path: string, query: Record<string, string>, body: Uint8Array): { head: string; body: Uint8Array } {
  const w = signV4({ method, path, query, body, host: `127.0.0.1:${port}`, credentials: CREDS, region: REGION });
  return { head: requestHead(w), body };
}
