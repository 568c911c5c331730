/**
 * The request-body source when the whole body is already parsed and waiting in the
 * request's buffer (a small PUT arrives with its headers): it is taken in one synchronous
 * read, as one piece with the request's bytes, without a 'data' listener; the request still
 * ends and its keep-alive connection serves the next request; a cut that came first still
 * fails the read, and the reservation is released however it ends. Real HTTP on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { readBodySource, type BodySourceOptions } from '../../../src/s3/body-source.js';
import { CutSignal } from '../../../src/s3/body-deadline.js';
import { randomBytes } from '../../support/random.js';

class Cut extends Error {}
class Closed extends Error {}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

let server: Server;
let pool: Pool;
let handler: Handler;
let connections = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    handler(req, res).catch((e) => {
      res.statusCode = 500;
      res.end(String(e));
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1 });
});

afterAll(async () => {
  await pool.close();
  await new Promise((r) => server.close(r));
});

/** Waits (event-loop turns, no timer) until `req` holds `n` parsed body bytes. */
async function buffered(req: IncomingMessage, n: number): Promise<void> {
  for (let i = 0; i < 10_000 && req.readableLength < n; i++) await new Promise((r) => setImmediate(r));
  expect(req.readableLength).toBe(n);
}

function reservations() {
  const r = { held: 0, reserve: (n: number) => ((r.held += n), () => void (r.held -= n)) };
  return r;
}

async function put(body: Uint8Array): Promise<{ status: number; text: string }> {
  const res = await pool.request({ path: '/o', method: 'PUT', body, headers: { 'content-length': String(body.length) } });
  return { status: res.statusCode, text: await res.body.text() };
}

describe('readBodySource, whole body buffered', () => {
  it('yields the parsed body as one piece with no data listener; the request ends and the connection is reused', async () => {
    const data = Buffer.from(randomBytes(4096, 41));
    const seen: { pieces: Uint8Array[]; dataListeners: number[]; heldAfter: number; ended: boolean }[] = [];
    handler = async (req, res) => {
      await buffered(req, data.length);
      const budget = reservations();
      const opts: BodySourceOptions = {
        expectedBytes: data.length,
        reserve: budget.reserve,
        signal: new CutSignal(),
        cutError: () => new Cut('cut'),
        closedError: (c) => new Closed(String(c)),
      };
      const pieces: Uint8Array[] = [];
      const dataListeners: number[] = [];
      for await (const p of readBodySource(req, opts)) {
        pieces.push(p);
        dataListeners.push(req.listenerCount('data'));
      }
      if (!req.readableEnded) await new Promise((r) => req.once('end', r));
      seen.push({ pieces, dataListeners, heldAfter: budget.held, ended: req.readableEnded });
      res.end('ok');
    };
    const before = connections;
    expect(await put(data)).toEqual({ status: 200, text: 'ok' });
    expect(await put(data)).toEqual({ status: 200, text: 'ok' });
    expect(connections - before).toBeLessThanOrEqual(1);
    for (const s of seen) {
      expect(s.pieces.length).toBe(1);
      expect(Buffer.from(s.pieces[0]!).equals(data)).toBe(true);
      expect(s.dataListeners).toEqual([0]);
      expect(s.heldAfter).toBe(0);
      expect(s.ended).toBe(true);
    }
  });

  it('a cut that came before the read fails it, and the reservation is released', async () => {
    const data = Buffer.from(randomBytes(4096, 42));
    let outcome: { error: unknown; held: number } | undefined;
    handler = async (req, res) => {
      await buffered(req, data.length);
      const budget = reservations();
      const signal = new CutSignal();
      signal.abort();
      let error: unknown;
      try {
        for await (const _ of readBodySource(req, { expectedBytes: data.length, reserve: budget.reserve, signal, cutError: () => new Cut('cut'), closedError: (c) => new Closed(String(c)) })) {
          // not reached
        }
      } catch (e) {
        error = e;
      }
      outcome = { error, held: budget.held };
      res.end('cut');
    };
    expect((await put(data)).text).toBe('cut');
    expect(outcome!.error).toBeInstanceOf(Cut);
    expect(outcome!.held).toBe(0);
  });

  it('a body of several parsed pieces comes out whole, in order', async () => {
    const data = Buffer.from(randomBytes(200 * 1024, 43));
    let got: Buffer | undefined;
    handler = async (req, res) => {
      // Larger than Node's 16 KiB high-water mark: the source reads it as it arrives.
      const budget = reservations();
      const pieces: Uint8Array[] = [];
      for await (const p of readBodySource(req, { expectedBytes: data.length, reserve: budget.reserve, cutError: () => new Cut('cut'), closedError: (c) => new Closed(String(c)) })) pieces.push(p);
      got = Buffer.concat(pieces);
      res.end('ok');
    };
    expect((await put(data)).status).toBe(200);
    expect(got!.equals(data)).toBe(true);
  });
});
