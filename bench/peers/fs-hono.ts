/**
 * @module The `fs` peer: the durable object server a user would write in an afternoon, a Hono
 * app on @hono/node-server that stores each object as a file. PUT /<bucket> creates the bucket
 * directory; PUT /<bucket>/<key> streams the body into a temp file while computing its MD5,
 * fsyncs the file, renames it into place, fsyncs the directory, then answers 200 with the MD5
 * as ETag; GET streams the file (@hono/node-server's serveStatic; 404 if absent). No SigV4
 * check, no listing, no metadata. One JSON request line per request on stdout, as Strata logs
 * by default. Run: node fs-hono.js <port> <data-dir>; the listening line goes to stderr.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Hono } from 'hono';
import { serve, type HttpBindings } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { requestLog } from './request-log.js';

/** S3's largest single PUT (5 GiB): a body declared larger is refused before any byte is read. */
const MAX_OBJECT_BYTES = 5 * 2 ** 30;
/** S3's key length limit, in UTF-8 bytes. */
const MAX_KEY_BYTES = 1024;
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * Whether `key` can name a file below a bucket directory: at most 1024 UTF-8 bytes, no NUL or
 * backslash, no empty, `.` or `..` segment (so it can never leave the bucket directory).
 */
export function safeKey(key: string): boolean {
  if (!key || Buffer.byteLength(key) > MAX_KEY_BYTES || /[\0\\]/.test(key)) return false;
  return key.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/** fsyncs a directory, so a rename into it survives a crash. */
async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false
  );
}

/** The Hono app storing buckets and objects under `root` (temp files in `root/.tmp`). */
export function createFsApp(root: string): Hono<{ Bindings: HttpBindings }> {
  const tmpDir = join(root, '.tmp');
  mkdirSync(tmpDir, { recursive: true });
  const app = new Hono<{ Bindings: HttpBindings }>();
  app.use('*', requestLog());
  app.use('/:bucket/*', async (c, next) => {
    const raw = c.req.path.slice(c.req.param('bucket').length + 2);
    let key = '';
    try {
      key = decodeURIComponent(raw);
    } catch {
      return c.text('bad key encoding\n', 400);
    }
    if (!BUCKET_NAME.test(c.req.param('bucket')) || (raw && !safeKey(key))) return c.text('bad name\n', 400);
    return next();
  });

  app.put('/:bucket', async (c) => {
    const bucket = c.req.param('bucket');
    if (!BUCKET_NAME.test(bucket)) return c.text('bad bucket name\n', 400);
    await mkdir(join(root, bucket), { recursive: true });
    await syncDir(root);
    return c.body(null, 200);
  });

  app.put('/:bucket/:key{.+}', async (c) => {
    const bucket = c.req.param('bucket');
    const key = c.req.param('key');
    const declared = Number(c.req.header('content-length') ?? NaN);
    if (!Number.isSafeInteger(declared) || declared < 0) return c.text('content-length required\n', 411);
    if (declared > MAX_OBJECT_BYTES) return c.text('too large\n', 400);
    const bucketDir = join(root, bucket);
    if (!(await exists(bucketDir))) return c.text('no such bucket\n', 404);
    const path = join(bucketDir, key);
    const tmp = join(tmpDir, randomUUID());
    const md5 = createHash('md5');
    const fh = await open(tmp, 'wx');
    let received = 0;
    try {
      for await (const chunk of c.env.incoming as AsyncIterable<Buffer>) {
        md5.update(chunk);
        received += chunk.length;
        for (let off = 0; off < chunk.length; ) off += (await fh.write(chunk, off, chunk.length - off)).bytesWritten;
      }
      if (received !== declared) throw new Error(`body of ${received} bytes, ${declared} declared`);
      await fh.sync();
    } catch (err) {
      await fh.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    await fh.close();
    try {
      await mkdir(dirname(path), { recursive: true });
      await rename(tmp, path);
    } catch (err) {
      // E.g. the key names an existing directory ('a' after 'a/b'): no temp file stays behind.
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    await syncDir(dirname(path));
    return c.body(null, 200, { etag: `"${md5.digest('hex')}"` });
  });

  app.get('/:bucket/:key{.+}', serveStatic({ root }));
  app.onError((err, c) => c.text(`${String(err)}\n`, 500));
  return app;
}

if (process.argv[1]?.endsWith('fs-hono.js')) {
  const port = Number(process.argv[2] ?? 0);
  const root = process.argv[3];
  if (!root) throw new Error('usage: fs-hono.js <port> <data-dir>');
  const server = serve({ fetch: createFsApp(root).fetch, port, hostname: '127.0.0.1' }, (info) => {
    process.stderr.write(`${JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${info.port}` })}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
