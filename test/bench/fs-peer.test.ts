/**
 * The `fs` benchmark peer (bench/peers/fs-hono.ts) stores what it acknowledges and nothing
 * else: a PUT answers the body's MD5 only after the file is in place, a GET returns exactly
 * the bytes stored, and hostile names or bodies (traversal, bad encoding, truncated, oversized,
 * undeclared length) are refused without leaving a file behind. Also the peers' request log
 * (one JSON line per request) and the checked request of the load generator.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { serve, type HttpBindings } from '@hono/node-server';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFsApp, safeKey } from '../../bench/peers/fs-hono.js';
import { bucketAndKey, requestLog } from '../../bench/peers/request-log.js';
import { sendChecked, WrongResponseError, closedLoop } from '../../bench/http-load.js';
import type { Target } from '../../bench/http-targets.js';

type Server = ReturnType<typeof serve>;

function listen(app: Hono<{ Bindings: HttpBindings }>): Promise<{ server: Server; url: string }> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve({ server, url: `http://127.0.0.1:${info.port}` }));
  });
}

/** Sends raw bytes on a fresh connection; resolves with what came back before close (or timeout). */
function raw(url: string, bytes: string, endAfter = false): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => s.destroy(), 2000);
    s.on('data', (d) => (got += d.toString()));
    s.on('error', reject);
    s.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
    s.write(bytes);
    if (endAfter) s.end();
  });
}

describe('fs peer', () => {
  let dir: string;
  let url: string;
  let server: Server;
  const lines: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fs-peer-test-'));
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    ({ server, url } = await listen(createFsApp(dir)));
    expect((await fetch(`${url}/bkt`, { method: 'PUT' })).status).toBe(200);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const tmpLeft = () => readdirSync(join(dir, '.tmp'));

  it('answers a PUT with the MD5 of the body and stores exactly those bytes, then serves them', async () => {
    const body = Buffer.from('hello, durable world '.repeat(5000));
    const res = await fetch(`${url}/bkt/dir/obj-1`, { method: 'PUT', body });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe(`"${createHash('md5').update(body).digest('hex')}"`);
    expect(readFileSync(join(dir, 'bkt/dir/obj-1')).equals(body)).toBe(true);
    const get = await fetch(`${url}/bkt/dir/obj-1`);
    expect(get.status).toBe(200);
    expect(Buffer.from(await get.arrayBuffer()).equals(body)).toBe(true);
    // Overwrite replaces the whole file.
    await fetch(`${url}/bkt/dir/obj-1`, { method: 'PUT', body: 'short' });
    expect(await (await fetch(`${url}/bkt/dir/obj-1`)).text()).toBe('short');
    expect(tmpLeft()).toEqual([]);
  });

  it('answers 404 for a missing object and for a PUT into a missing bucket', async () => {
    expect((await fetch(`${url}/bkt/nothing-here`)).status).toBe(404);
    expect((await fetch(`${url}/nobucket/k`, { method: 'PUT', body: 'x' })).status).toBe(404);
    expect(existsSync(join(dir, 'nobucket'))).toBe(false);
  });

  it('refuses names that could leave the bucket directory or are not names', async () => {
    // Raw requests (fetch would resolve dot segments before sending). The server's URL parser
    // resolves `..` and `%2E%2E` segments itself, so these stay inside the data directory.
    for (const path of ['/bkt/a/../../../escape/k', '/bkt/a/%2E%2E/%2E%2E/%2E%2E/escape/k']) {
      const res = await raw(url, `PUT ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx`);
      expect(res, path).toMatch(/^HTTP\/1.1 404/);
    }
    expect(existsSync(join(dir, '..', 'escape'))).toBe(false);
    for (const path of ['/bkt/a//b', '/bkt/%E0%A4%A', '/bkt/a%00b', '/bkt/a%5Cb', '/BadBucket/k', '/.tmp/k']) {
      for (const method of ['PUT', 'GET']) {
        const res = await raw(url, `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx`);
        expect(res, `${method} ${path}`).toMatch(/^HTTP\/1.1 (400|404)/);
        if (method === 'PUT') expect(res, path).toMatch(/^HTTP\/1.1 400/);
      }
    }
    expect(existsSync(join(dir, 'escape'))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(['.tmp', 'bkt']);
    expect(safeKey('a/b')).toBe(true);
    expect(safeKey('a/../b')).toBe(false);
    expect(safeKey('x'.repeat(1025))).toBe(false);
    expect(safeKey('')).toBe(false);
  });

  it('stores nothing for a truncated body, an oversized declaration or an undeclared length', async () => {
    // Declares 100 bytes, sends 10, closes its side: the server must not keep the object.
    await raw(url, 'PUT /bkt/trunc HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789', true);
    const oversized = await raw(url, `PUT /bkt/big HTTP/1.1\r\nHost: x\r\nContent-Length: ${6 * 2 ** 30}\r\nConnection: close\r\n\r\n`);
    expect(oversized).toMatch(/^HTTP\/1.1 400/);
    const chunked = await raw(url, 'PUT /bkt/chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
    expect(chunked).toMatch(/^HTTP\/1.1 411/);
    await new Promise((r) => setTimeout(r, 100));
    for (const k of ['trunc', 'big', 'chunked']) expect(existsSync(join(dir, 'bkt', k)), k).toBe(false);
    // A key naming an existing directory fails without a temp file left behind.
    expect((await fetch(`${url}/bkt/d/leaf`, { method: 'PUT', body: 'x' })).status).toBe(200);
    expect((await fetch(`${url}/bkt/d`, { method: 'PUT', body: 'y' })).status).toBe(500);
    expect(tmpLeft()).toEqual([]);
  });

  it('logs one JSON request line per request with the fields Strata logs', async () => {
    lines.length = 0;
    await fetch(`${url}/bkt/logged`, { method: 'PUT', body: 'abc' });
    await (await fetch(`${url}/bkt/logged`)).text();
    await new Promise((r) => setTimeout(r, 50));
    const reqs = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request');
    expect(reqs).toHaveLength(2);
    expect(reqs[0]).toMatchObject({ level: 'info', method: 'PUT', bucket: 'bkt', key: 'logged', status: 200, in: 3 });
    expect(reqs[1]).toMatchObject({ method: 'GET', bucket: 'bkt', key: 'logged', status: 200, out: 3 });
    expect(reqs[0]!.id).toMatch(/^[0-9A-F]{16}$/);
    expect(reqs[0]!.id).not.toBe(reqs[1]!.id);
  });

  it('lets the load generator check ETags and bytes, and count bytes across concurrent workers', async () => {
    const t: Target = { name: 'fs', url, pid: process.pid, accessKeyId: 'x', secretAccessKey: 'x', logPath: '/dev/null', stop: async () => undefined };
    const p = new Pool(url, { connections: 4 });
    try {
      const body = Buffer.alloc(4096, 3);
      const md5 = `"${createHash('md5').update(body).digest('hex')}"`;
      await sendChecked(p, t, 'PUT', '/bkt/checked', body, { etag: md5 });
      expect(await sendChecked(p, t, 'GET', '/bkt/checked', undefined, { body })).toBe(4096);
      await expect(sendChecked(p, t, 'PUT', '/bkt/checked', body, { etag: '"0"' })).rejects.toBeInstanceOf(WrongResponseError);
      const other = Buffer.from(body);
      other[4000] = 9;
      await expect(sendChecked(p, t, 'GET', '/bkt/checked', undefined, { body: other })).rejects.toBeInstanceOf(WrongResponseError);
      await expect(sendChecked(p, t, 'GET', '/bkt/checked', undefined, { length: 4095 })).rejects.toBeInstanceOf(WrongResponseError);
      await expect(sendChecked(p, t, 'GET', '/bkt/absent', undefined, {})).rejects.toThrow(/HTTP 404/);
      const r = await closedLoop(t, 4, 200, () => sendChecked(p, t, 'GET', '/bkt/checked', undefined, { body }));
      expect(r.errors).toBe(0);
      expect(r.wrong).toBe(0);
      expect(r.n).toBeGreaterThan(0);
      expect(r.bytes).toBe(r.n * 4096);
    } finally {
      await p.close();
    }
  });
});

describe('peer request log', () => {
  it('splits path-style bucket and key', () => {
    expect(bucketAndKey('/')).toEqual({});
    expect(bucketAndKey('/b')).toEqual({ bucket: 'b' });
    expect(bucketAndKey('/b/')).toEqual({ bucket: 'b', key: undefined });
    expect(bucketAndKey('/b/k/x')).toEqual({ bucket: 'b', key: 'k/x' });
  });

  it('writes one line per request, error responses included, without touching the body', async () => {
    const out: string[] = [];
    const app = new Hono<{ Bindings: HttpBindings }>();
    app.use('*', requestLog((l) => out.push(l)));
    app.put('/b/k', async (c) => c.text(String((await c.req.arrayBuffer()).byteLength)));
    app.get('/b/boom', () => {
      throw new Error('boom');
    });
    const { server, url } = await listen(app);
    try {
      expect(await (await fetch(`${url}/b/k`, { method: 'PUT', body: 'x'.repeat(1000) })).text()).toBe('1000');
      expect((await fetch(`${url}/b/boom`)).status).toBe(500);
      await new Promise((r) => setTimeout(r, 50));
      expect(out).toHaveLength(2);
      expect(out.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
      expect(JSON.parse(out[1]!)).toMatchObject({ method: 'GET', key: 'boom', status: 500 });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
