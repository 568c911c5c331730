/**
 * The request-body source: bytes come out in order and whole however Node fragments them;
 * small pieces are copied (no view of an input buffer survives), large ones pass through;
 * the request is paused once HIGH_WATER_BYTES wait and resumed when the consumer asks; the
 * working memory is reserved before reading and released however reading ends; a cut or a
 * closed connection fails a pending read at once. Driven by a real IncomingMessage-shaped
 * stream (a PassThrough), plus one real HTTP exchange.
 */
import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { createServer, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import {
  DIRECT_MIN_BYTES,
  HIGH_WATER_BYTES,
  SOURCE_WORKING_BYTES,
  STAGING_BYTES,
  readBodySource,
  sourceWorkingBytes,
  type BodySourceOptions,
} from '../../../src/s3/body-source.js';
import { randomBytes } from '../../support/random.js';

class Cut extends Error {}
class Closed extends Error {}
const base: BodySourceOptions = { cutError: () => new Cut('cut'), closedError: (c) => new Closed(String(c)) };

/** A stream standing in for an IncomingMessage (the source uses only stream behaviour). */
function fakeRequest(): PassThrough & IncomingMessage {
  return new PassThrough() as PassThrough & IncomingMessage;
}

const tick = () => new Promise((r) => setImmediate(r));

async function drain(it: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const c of it) out.push(c);
  return out;
}

describe('readBodySource', () => {
  it('1-byte pieces come out whole, in order, copied into a few staging buffers', async () => {
    const data = Buffer.from(randomBytes(200_000, 1));
    const req = fakeRequest();
    const inputs = new Set<ArrayBufferLike>();
    const out = drain(readBodySource(req, base));
    // Written synchronously, the way Node's parser emits one socket read's pieces.
    for (let i = 0; i < data.length; i++) {
      const piece = Buffer.from(data.subarray(i, i + 1));
      inputs.add(piece.buffer);
      req.write(piece);
      if (i % 50_000 === 0) await tick();
    }
    req.end();
    const got = await out;
    expect(Buffer.concat(got).equals(data)).toBe(true);
    expect(got.length).toBeLessThan(50); // not one output per byte
    for (const o of got) expect(inputs.has(o.buffer)).toBe(false);
  });

  it('large pieces pass through as they are when nothing is staged', async () => {
    const req = fakeRequest();
    const big = Buffer.from(randomBytes(DIRECT_MIN_BYTES * 2, 2));
    const out = drain(readBodySource(req, base));
    req.write(big);
    req.end();
    const got = await out;
    expect(got.length).toBe(1);
    expect(got[0]!.buffer).toBe(big.buffer);
  });

  it('every mix of piece sizes gives the same bytes (seeded)', async () => {
    const data = Buffer.from(randomBytes(300_000, 3));
    for (let seed = 1; seed <= 10; seed++) {
      const req = fakeRequest();
      const out = drain(readBodySource(req, base));
      let x = seed;
      for (let i = 0; i < data.length; ) {
        x = (x * 1103515245 + 12345) >>> 0;
        const n = 1 + (x % 4 === 0 ? x % 40_000 : x % 64);
        req.write(Buffer.from(data.subarray(i, i + n)));
        i += n;
        if (x % 7 === 0) await tick();
      }
      req.end();
      expect(Buffer.concat(await out).equals(data), `seed ${seed}`).toBe(true);
    }
  });

  it('pauses the request once HIGH_WATER_BYTES wait, resumes when the consumer asks', async () => {
    const req = fakeRequest();
    const it = readBodySource(req, base)[Symbol.asyncIterator]();
    const first = it.next(); // the consumer waits: the request flows
    req.write(Buffer.alloc(100, 1));
    expect((await first).value?.length).toBe(100);
    // The consumer is busy now; pieces pile up until the high-water mark, then it pauses.
    for (let i = 0; i < HIGH_WATER_BYTES / 1000 + 2; i++) req.write(Buffer.alloc(1000, 2));
    await tick();
    expect(req.isPaused()).toBe(true);
    let got = 0;
    for (;;) {
      const r = await Promise.race([it.next(), new Promise<'idle'>((res) => setTimeout(() => res('idle'), 50))]);
      if (r === 'idle') break;
      got += r.value?.length ?? 0;
    }
    // Everything waiting was handed on; asking for more resumed the request.
    expect(req.isPaused()).toBe(false);
    req.end();
    await it.return(undefined);
    expect(got).toBeGreaterThanOrEqual(HIGH_WATER_BYTES);
  });

  it('reserves before reading and releases once, whether it completes, fails or is returned early', async () => {
    const events: string[] = [];
    const reserve = (n: number) => {
      events.push(`reserve ${n}`);
      return () => events.push('release');
    };
    // Completes.
    let req = fakeRequest();
    let out = drain(readBodySource(req, { ...base, reserve }));
    req.end(Buffer.from('abc'));
    await out;
    expect(events).toEqual([`reserve ${SOURCE_WORKING_BYTES}`, 'release']);
    // A known small length reserves at most twice it.
    events.length = 0;
    req = fakeRequest();
    out = drain(readBodySource(req, { ...base, reserve, expectedBytes: 10 }));
    req.end(Buffer.from('0123456789'));
    await out;
    expect(events).toEqual(['reserve 20', 'release']);
    expect(sourceWorkingBytes(1 << 30)).toBe(SOURCE_WORKING_BYTES);
    // Fails (the connection closes mid-body).
    events.length = 0;
    req = fakeRequest();
    out = drain(readBodySource(req, { ...base, reserve }));
    req.write(Buffer.from('partial'));
    await tick();
    req.destroy();
    await expect(out).rejects.toBeInstanceOf(Closed);
    expect(events).toEqual([`reserve ${SOURCE_WORKING_BYTES}`, 'release']);
    // Returned early: listeners removed, the request left paused (not destroyed).
    events.length = 0;
    req = fakeRequest();
    const it = readBodySource(req, { ...base, reserve });
    const p = it.next();
    req.write(Buffer.from('x'));
    await p;
    await it.return(undefined);
    expect(events).toEqual([`reserve ${SOURCE_WORKING_BYTES}`, 'release']);
    expect(req.listenerCount('data')).toBe(0);
    expect(req.isPaused()).toBe(true);
    expect(req.destroyed).toBe(false);
  });

  it('a refused reservation fails before the request is read', async () => {
    const req = fakeRequest();
    req.write(Buffer.from('data'));
    const refuse = () => {
      throw new Error('budget spent');
    };
    await expect(readBodySource(req, { ...base, reserve: refuse }).next()).rejects.toThrow('budget spent');
    expect(req.readableLength).toBe(4); // nothing consumed
  });

  it('a request destroyed before the source listens fails at once instead of waiting forever', async () => {
    // Regression: a client that left while its request was being authorized left the read
    // waiting for events that never come, holding its budget reservation (found by fuzz:http).
    const events: string[] = [];
    const req = fakeRequest();
    req.write(Buffer.from('partial'));
    req.destroy();
    await new Promise((r) => setImmediate(r));
    const reserve = () => {
      events.push('reserve');
      return () => events.push('release');
    };
    await expect(drain(readBodySource(req, { ...base, reserve }))).rejects.toBeInstanceOf(Closed);
    expect(events).toEqual(['reserve', 'release']);
  });

  it('a cut fails the pending read at once, and any later one', async () => {
    const req = fakeRequest();
    const ctl = new AbortController();
    const it = readBodySource(req, { ...base, signal: ctl.signal })[Symbol.asyncIterator]();
    const pending = it.next();
    await tick();
    ctl.abort();
    await expect(pending).rejects.toBeInstanceOf(Cut);
    const already = new AbortController();
    already.abort();
    await expect(readBodySource(fakeRequest(), { ...base, signal: already.signal }).next()).rejects.toBeInstanceOf(Cut);
  });

  it('an empty body ends at once; staging is sized to a small announced length', async () => {
    const req = fakeRequest();
    const out = drain(readBodySource(req, base));
    req.end();
    expect(await out).toEqual([]);
    const small = fakeRequest();
    const got = drain(readBodySource(small, { ...base, expectedBytes: 5 }));
    for (const b of 'hello') small.write(Buffer.from(b));
    small.end();
    const chunks = await got;
    expect(Buffer.concat(chunks).toString()).toBe('hello');
    for (const c of chunks) expect(c.buffer.byteLength).toBeLessThanOrEqual(5);
  });

  it('reads a real HTTP/1.1 body sent as 1-byte chunks into few, copied pieces', async () => {
    const data = Buffer.from(randomBytes(100_000, 4));
    let pieces = 0;
    let got: Buffer | undefined;
    const server = createServer(async (req, res) => {
      const out: Uint8Array[] = [];
      for await (const c of readBodySource(req, base)) out.push(c);
      pieces = out.length;
      got = Buffer.concat(out);
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const wire = Buffer.alloc(data.length * 6);
      for (let i = 0; i < data.length; i++) {
        wire.write('1\r\n', i * 6, 'latin1');
        wire[i * 6 + 3] = data[i]!;
        wire.write('\r\n', i * 6 + 4, 'latin1');
      }
      await new Promise<void>((resolve, reject) => {
        const sock = connect({ host: '127.0.0.1', port }, () => {
          sock.write('PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
          sock.write(wire);
          sock.write('0\r\n\r\n');
        });
        sock.on('data', (d) => {
          if (d.toString('latin1').startsWith('HTTP/1.1 200')) {
            sock.destroy();
            resolve();
          }
        });
        sock.on('error', reject);
      });
      expect(got?.equals(data)).toBe(true);
      expect(pieces).toBeLessThan(data.length / 100);
      expect(STAGING_BYTES).toBe(64 * 1024);
    } finally {
      server.close();
    }
  });
});
