/**
 * @module The HTTP-layer ceiling: a Hono app on @hono/node-server with no storage, no
 * auth. PUT drains the body from the Node request and answers 200; GET answers with N
 * bytes, N taken from the key (`.../<anything>-<N>`). It logs one JSON request line per
 * request on stdout, as Strata does by default, so the comparison is of equal logging work.
 * Run: node trivial-hono.js <port>; the listening line goes to stderr.
 */
import { Hono } from 'hono';
import { serve, type HttpBindings } from '@hono/node-server';
import { requestLog } from './request-log.js';

const bodies = new Map<number, Buffer>();
const app = new Hono<{ Bindings: HttpBindings }>();
app.use('*', requestLog());
app.put('*', async (c) => {
  for await (const _ of c.env.incoming) {
    // drain
  }
  return c.body(null, 200, { etag: '"0"' });
});
app.get('*', (c) => {
  const n = Number(/-(\d+)$/.exec(c.req.path)?.[1] ?? 0);
  let b = bodies.get(n);
  if (!b) bodies.set(n, (b = Buffer.alloc(n, 7)));
  return c.body(new Uint8Array(b.buffer, b.byteOffset, b.length) as Uint8Array<ArrayBuffer>, 200, { 'content-type': 'application/octet-stream', 'content-length': String(n) });
});

const port = Number(process.argv[2] ?? 0);
const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, (info) => {
  process.stderr.write(`${JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${info.port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
