/**
 * The connection guard on a real Node HTTP server (no S3 behind it, tiny limits so the
 * suite stays fast): the cap answers 503 SlowDown as S3 XML and closes, without reaching
 * the application; the header deadline answers 400 RequestTimeout; a stalled body is cut
 * (its body-deadline signal aborts, the handler answers, the connection closes) while time
 * the server itself spends not reading never counts; Node's answers to malformed requests
 * are kept.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConnectionGuard, connectionCap, PRESSURE_WINDOW_MS, type ConnectionLimits } from '../../src/server/connection-guard.js';
import { bodyCut } from '../../src/s3/body-deadline.js';
import { hold } from '../integration/support/bounds.js';
import { errorCode } from '../integration/wire.js';

let server: Server | undefined;
let guard: ConnectionGuard | undefined;

afterEach(async () => {
  guard?.stop();
  if (server) {
    server.closeAllConnections();
    await new Promise((r) => server!.close(r));
  }
  server = undefined;
});

async function start(limits: Partial<ConnectionLimits>, app: RequestListener): Promise<number> {
  guard = new ConnectionGuard(limits);
  server = createServer(guard.serverOptions(), guard.wrap(app));
  // As server.ts: no automatic 100 Continue; the application sends it when it wants the body.
  server.on('checkContinue', (req, res) => server!.emit('request', req, res));
  guard.attach(server);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

const GET = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n';
const ok: RequestListener = (_req, res) => res.end('ok');

/** Reads the whole request body; resolves with its length or the error that ended it. */
function readAll(req: IncomingMessage): Promise<number | Error> {
  return new Promise((resolve) => {
    let n = 0;
    const signal = bodyCut(req);
    signal.addEventListener('abort', () => resolve(new Error('cut')));
    req.on('data', (c: Buffer) => (n += c.length));
    req.on('end', () => resolve(n));
    req.on('error', (e) => resolve(e));
  });
}

describe('ConnectionGuard', () => {
  it('past the cap, a connection gets 503 SlowDown (S3 XML, Retry-After) and is closed; the app never sees it', async () => {
    let seen = 0;
    const port = await start({ maxConnections: 2, headerTimeoutMs: 0, bodyWindowMs: 0 }, (req, res) => {
      seen++;
      res.end('ok');
    });
    const a = await hold(port, [GET]);
    const b = await hold(port, [GET]);
    expect((await a.response)?.status).toBe(200);
    expect((await b.response)?.status).toBe(200);
    const c = await hold(port, [GET]);
    const refused = await c.response;
    expect(refused?.status).toBe(503);
    expect(errorCode(refused!.body)).toBe('SlowDown');
    expect(refused?.headers['retry-after']).toBe('1');
    expect(refused?.headers.connection).toBe('close');
    await c.closed;
    expect(seen).toBe(2);
    expect(guard!.refused).toBe(1);
    expect(guard!.open).toBe(2);
    // A slot frees when an admitted connection closes.
    a.destroy();
    await a.closed;
    await new Promise((r) => setTimeout(r, 50));
    const d = await hold(port, [GET]);
    expect((await d.response)?.status).toBe(200);
    b.destroy();
    d.destroy();
  });

  it('an incomplete header block is answered 400 RequestTimeout and closed after the deadline', async () => {
    const port = await start({ headerTimeoutMs: 300, bodyWindowMs: 0 }, ok);
    const t0 = Date.now();
    const h = await hold(port, ['GET / HTTP/1.1\r\nHost: x\r\n']);
    const r = await h.response;
    await h.closed;
    expect(r?.status).toBe(400);
    expect(errorCode(r!.body)).toBe('RequestTimeout');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(guard!.headerTimeouts).toBe(1);
  });

  it('an idle keep-alive connection is not cut by the header deadline; the next request is timed from its first byte', async () => {
    const port = await start({ headerTimeoutMs: 300, bodyWindowMs: 0 }, ok);
    const h = await hold(port, [GET]);
    expect((await h.response)?.status).toBe(200);
    let seen = '';
    h.socket.on('data', (d: Buffer) => (seen += d.toString('latin1')));
    await new Promise((r) => setTimeout(r, 800)); // idle for more than the deadline
    expect(h.socket.destroyed).toBe(false);
    await h.write(GET); // the same connection
    await new Promise((r) => setTimeout(r, 200));
    expect(seen).toMatch(/^HTTP\/1\.1 200/);
    expect(guard!.headerTimeouts).toBe(0);
    h.destroy();
  });

  it('a body below the minimum rate is cut: the reader is told, the handler answers, the connection closes', async () => {
    let outcome: number | Error | undefined;
    const port = await start({ headerTimeoutMs: 0, bodyWindowMs: 400, bodyMinBytes: 1000 }, async (req, res) => {
      outcome = await readAll(req);
      res.writeHead(outcome instanceof Error ? 400 : 200);
      res.end(outcome instanceof Error ? 'timed out' : 'ok');
    });
    const h = await hold(port, ['PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n', 'x'.repeat(100)]);
    const trickle = setInterval(() => void h.write('y'.repeat(50)), 100); // 500 B/s < 1000 B / 400 ms
    const t0 = Date.now();
    const r = await h.response;
    clearInterval(trickle);
    await h.closed;
    expect(r?.status).toBe(400);
    expect(r?.headers.connection).toBe('close');
    expect(outcome).toBeInstanceOf(Error);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(guard!.bodyTimeouts).toBe(1);
  });

  it('a body at or above the minimum rate is never cut, however long it takes', async () => {
    let outcome: number | Error | undefined;
    const port = await start({ headerTimeoutMs: 0, bodyWindowMs: 200, bodyMinBytes: 1000 }, async (req, res) => {
      outcome = await readAll(req);
      res.end('ok');
    });
    const total = 30_000;
    const h = await hold(port, [`PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: ${total}\r\n\r\n`]);
    for (let sent = 0; sent < total; sent += 1500) {
      await h.write('z'.repeat(1500)); // 1500 B per 100 ms = 3000 B per window
      await new Promise((r) => setTimeout(r, 100));
    }
    const r = await h.response;
    expect(r?.status).toBe(200);
    expect(outcome).toBe(total);
    expect(guard!.bodyTimeouts).toBe(0);
    h.destroy();
  });

  it('time the server spends not reading the body never counts against the client', async () => {
    let outcome: number | Error | undefined;
    const port = await start({ headerTimeoutMs: 0, bodyWindowMs: 200, bodyMinBytes: 1000 }, async (req, res) => {
      // A slow store: nothing is read for several windows while the client has sent all.
      await new Promise((r) => setTimeout(r, 1000));
      outcome = await readAll(req);
      res.end('ok');
    });
    const h = await hold(port, ['PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 20000\r\n\r\n', 'a'.repeat(19_999)]);
    // The client idles for over four windows, but bytes it sent wait unread all along.
    await new Promise((r) => setTimeout(r, 900));
    await h.write('b');
    const r = await h.response;
    expect(r?.status).toBe(200);
    expect(outcome).toBe(20_000);
    expect(guard!.bodyTimeouts).toBe(0);
    h.destroy();
  });

  it('under pressure a silent body is cut after PRESSURE_WINDOW_MS, not the full window; without pressure it is not', async () => {
    const outcomes: (number | Error)[] = [];
    const port = await start({ headerTimeoutMs: 0, bodyWindowMs: 60_000, bodyMinBytes: 1000 }, async (req, res) => {
      const outcome = await readAll(req);
      outcomes.push(outcome);
      res.writeHead(outcome instanceof Error ? 400 : 200);
      res.end();
    });
    let pressed = false;
    guard!.pressure = () => pressed;
    // Two bodies send a first part, then fall silent.
    const held = await Promise.all([0, 1].map(() => hold(port, ['PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n', 'x'.repeat(5000)])));
    await new Promise((r) => setTimeout(r, PRESSURE_WINDOW_MS + 1500));
    // Silent longer than the pressure window, but no pressure: nothing is cut.
    expect(outcomes).toEqual([]);
    pressed = true;
    const t0 = Date.now();
    const rs = await Promise.all(held.map((h) => h.response));
    // Counted from the pressure's start, not from the last byte long before it.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(PRESSURE_WINDOW_MS - 1100);
    expect(Date.now() - t0).toBeLessThan(PRESSURE_WINDOW_MS + 2500);
    expect(rs.map((r) => r?.status)).toEqual([400, 400]);
    expect(guard!.bodyTimeouts).toBe(2);
    expect(guard!.pressureTimeouts).toBe(2);
  }, 20_000);

  it('a request asking for 100 Continue is timed from when it is sent, not from its headers', async () => {
    let done!: (o: number | Error) => void;
    const outcome = new Promise<number | Error>((r) => (done = r));
    const port = await start({ headerTimeoutMs: 0, bodyWindowMs: 400, bodyMinBytes: 100 }, async (req, res) => {
      // Authorization takes several windows before the body is wanted.
      await new Promise((r) => setTimeout(r, 1200));
      res.writeContinue();
      const o = await readAll(req);
      done(o);
      res.writeHead(o instanceof Error ? 400 : 200);
      res.end();
    });
    const h = await hold(port, ['PUT / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 300\r\n\r\n']);
    // The client sends its body once told to continue (after ~1.2 s, three windows).
    await new Promise((r) => setTimeout(r, 1300));
    await h.write('c'.repeat(300));
    expect(await outcome).toBe(300);
    expect(guard!.bodyTimeouts).toBe(0);
    h.destroy();
  });

  it('a request asking for 100 Continue that is answered without it does not keep its connection for the body', async () => {
    // The body watch starts at 100 Continue; a request refused before it (a bad signature: no
    // 100 Continue is ever sent) is not watched, which is safe only because Node closes the
    // connection with the answer.
    const port = await start({ headerTimeoutMs: 0, bodyWindowMs: 400, bodyMinBytes: 1000 }, (_req, res) => {
      res.writeHead(403);
      res.end('refused');
    });
    const h = await hold(port, ['PUT / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n']);
    expect((await h.response)?.status).toBe(403);
    // A client that sends the unwanted body anyway, slowly, cannot hold the connection.
    const t0 = Date.now();
    const trickle = setInterval(() => void h.write('t'.repeat(50)), 100); // 500 B/s < 1000 B / 400 ms
    await h.closed;
    clearInterval(trickle);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(guard!.bodyTimeouts).toBe(0);
  });

  it("Node's answers to malformed requests are kept (400, 431)", async () => {
    const port = await start({}, ok);
    const bad = await hold(port, ['NOT A REQUEST\r\n\r\n']);
    expect((await bad.response)?.status).toBe(400);
    const big = await hold(port, [`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`]);
    expect((await big.response)?.status).toBe(431);
  });

  it('keeps an idle keep-alive connection for idleTimeoutMs, announces it, then closes it', async () => {
    const port = await start({ idleTimeoutMs: 2000, headerTimeoutMs: 0, bodyWindowMs: 0 }, ok);
    const c = await hold(port, [GET]);
    const first = await c.response;
    expect(first?.status).toBe(200);
    expect(first?.headers['keep-alive']).toBe('timeout=2');
    const opened = performance.now();
    let closedAt = 0;
    void c.closed.then(() => (closedAt = performance.now()));
    // 400 ms idle is well inside the limit.
    await new Promise((r) => setTimeout(r, 400));
    expect(closedAt, 'closed while idle inside the limit').toBe(0);
    await c.write(GET); // the same socket serves a second request
    await new Promise((r) => setTimeout(r, 100));
    expect(closedAt).toBe(0);
    await c.closed;
    // Timed from the second answer (~400 ms in), not from the first.
    expect(closedAt - opened).toBeGreaterThanOrEqual(2300);
    expect(closedAt - opened).toBeLessThan(5000);
  });

  it('rejects invalid limits', () => {
    expect(() => new ConnectionGuard({ idleTimeoutMs: 0 })).toThrow(RangeError);
    expect(new ConnectionGuard().serverOptions()).toMatchObject({ keepAliveTimeout: 60_000 });
    expect(() => new ConnectionGuard({ maxConnections: -1 })).toThrow(RangeError);
    expect(() => new ConnectionGuard({ bodyWindowMs: NaN })).toThrow(RangeError);
    expect(new ConnectionGuard({ headerTimeoutMs: 0 }).serverOptions()).toMatchObject({ headersTimeout: 0, requestTimeout: 0 });
    expect(new ConnectionGuard({ headerTimeoutMs: 2000 }).serverOptions()).toMatchObject({ headersTimeout: 2000, requestTimeout: 0, connectionsCheckingInterval: 500 });
  });
});

describe('connectionCap: the cap under an open-files limit', () => {
  it('keeps a cap within half the limit', () => {
    expect(connectionCap(1024, 65_536)).toEqual({ cap: 1024 });
    expect(connectionCap(512, 1024)).toEqual({ cap: 512 });
  });
  it('lowers a cap above half the limit, and says so', () => {
    const r = connectionCap(1024, 1024);
    expect(r.cap).toBe(512);
    expect(r.warning).toMatch(/max-connections 1024 lowered to 512.*1024/);
    expect(connectionCap(1024, 3).cap).toBe(1);
  });
  it('keeps no cap (0) as asked, with a warning under a finite limit only', () => {
    expect(connectionCap(0, 1024).cap).toBe(0);
    expect(connectionCap(0, 1024).warning).toMatch(/no cap/);
    expect(connectionCap(0, Infinity)).toEqual({ cap: 0 });
  });
  it('keeps any cap under an unlimited limit', () => {
    expect(connectionCap(1_000_000, Infinity)).toEqual({ cap: 1_000_000 });
  });
});
