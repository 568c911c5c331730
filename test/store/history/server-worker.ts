/**
 * @module The server process of the model-history kill test: a real Strata server (bundled
 * by esbuild, run by plain node) on a data directory, with tiny checkpoint and compaction
 * thresholds so the version log flushes and compacts while the test drives it. It prints
 * one JSON line `{ "url": ... }` when it listens, and runs until it is SIGKILLed.
 *
 *   node server-worker.mjs <data dir>
 */
import { startServer } from '../../../src/server/server.js';
import { ACCESS_KEY, SECRET_KEY } from '../../integration/harness.js';
import { TINY_STORE } from './tiny.js';

/** A worker whose parent died stops by itself after this long. */
const MAX_LIFETIME_MS = 5 * 60_000;

const dir = process.argv[2];
if (!dir) throw new Error('usage: server-worker.mjs <data dir>');
const server = await startServer(
  { host: '127.0.0.1', port: 0, data: dir, log: 'off', credentials: [{ accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }] },
  { store: TINY_STORE }
);
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
setTimeout(() => process.exit(3), MAX_LIFETIME_MS).unref();
setInterval(() => undefined, 60_000);
