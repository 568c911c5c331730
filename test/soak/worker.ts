/**
 * @module Kill-test worker: a plain node process (bundled by esbuild) that opens a store
 * on a directory and runs mixed concurrent load until it is SIGKILLed.
 *
 *   node worker.mjs <config.json>
 *
 * Load: `lanes` loops, each picking an operation and the keys it touches; a key is never
 * touched by two operations at once, so after a crash each key holds either its last
 * acknowledged state or the in-flight operation's. Operations: PUT of 0 B, small bodies,
 * bodies around the 512 KiB pack threshold and multi-MiB carriers; DELETE; a batch DELETE
 * of several keys; COPY; multipart uploads (parts of 5 MiB except the last); GET, checked
 * against the state this worker knows. Every event is one JSON line (protocol.ts) written
 * synchronously to fd 1 before the next step.
 */
import { emit } from '../support/emit-line.js';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { acquireDirectoryLock } from '../../src/provider/fs/directory-lock.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { Store } from '../../src/store/store.js';
import { prng, randInt } from '../support/random.js';
import { contentBytes, contentId, specBytes, type BodySpec } from './bodies.js';
import { BUCKET, type Content, type Line, type OpSpec, type StartLine, type WorkerConfig } from './protocol.js';

const KIB = 1024;
const MIB = 1024 * KIB;
/** S3's smallest non-final part. */
const PART_BYTES = 5 * MIB;
/** A worker that was never killed (its parent died) stops by itself after this long. */
const MAX_LIFETIME_MS = 10 * 60_000;

const config = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as WorkerConfig;
const state = new Map<string, Content>(config.keys.map((k) => [k, config.state[k] ?? null]));
const busy = new Set<string>();
let nextId = 0;
let nextGen = 0;
const gen = () => `${config.iteration}.${nextGen++}`;
const delays = prng(config.seed * 31 + 17);
/** Half the acknowledgements are delayed by up to 20 ms. */
const ackDelay = () => (delays() % 2 === 0 ? delays() % 20 : 0);

/** The body in pieces of random sizes (1 B .. 160 KiB), as a network would deliver it. */
async function* pieces(bytes: Uint8Array, next: () => number): AsyncGenerator<Uint8Array> {
  for (let off = 0; off < bytes.length; ) {
    const n = Math.min(bytes.length - off, next() % 8 === 0 ? randInt(next, 1, 100) : randInt(next, 1, 160 * KIB));
    yield bytes.subarray(off, off + n);
    off += n;
  }
}

/** Reserves `count` free keys (satisfying `ok`), or undefined when there are not enough. */
function lock(next: () => number, count: number, ok: (k: string) => boolean = () => true): string[] | undefined {
  const free = config.keys.filter((k) => !busy.has(k) && ok(k));
  if (free.length < count) return undefined;
  const out: string[] = [];
  while (out.length < count) {
    const k = free.splice(next() % free.length, 1)[0]!;
    out.push(k);
    busy.add(k);
  }
  return out;
}

/** Runs one operation between its start and ack lines; an error is reported, not thrown. */
async function step<T>(
  start: OpSpec,
  run: () => Promise<T>,
  extra: (v: T) => { uploadId?: string } = () => ({})
): Promise<T | undefined> {
  const id = nextId++;
  emit({ t: 'start', id, ...start } as StartLine);
  let v: T;
  try {
    v = await run();
  } catch (err) {
    const e = err as { code?: string; message?: string };
    emit({ t: 'error', id, code: e.code ?? 'Error', message: e.message ?? String(err) });
    return undefined;
  }
  // A slow acknowledgement widens the window in which a durable operation is still in
  // flight for the parent, so kills also land there.
  const wait = ackDelay();
  if (wait > 0) await sleep(wait);
  emit({ t: 'ack', id, ...extra(v) });
  return v;
}

function putSize(next: () => number): number {
  const r = next() % 100;
  if (r < 8) return 0;
  if (r < 50) return randInt(next, 1, 64 * KIB);
  if (r < 75) return 512 * KIB + randInt(next, 0, 2) - 1; // around the pack threshold
  if (r < 97) return randInt(next, 600 * KIB, 3 * MIB);
  return 8 * MIB + randInt(next, 1, 3); // two carrier chunks
}

async function put(store: Store, next: () => number): Promise<boolean> {
  const [key] = lock(next, 1) ?? [];
  if (!key) return false;
  try {
    const content = [{ key, gen: gen(), size: putSize(next) }];
    const bytes = specBytes(content[0]!);
    const ok = await step({ op: 'put', key, content }, () => store.putObject(BUCKET, key, pieces(bytes, next), { size: bytes.length }));
    if (ok) state.set(key, content);
  } finally {
    busy.delete(key);
  }
  return true;
}

async function del(store: Store, next: () => number, count: number): Promise<boolean> {
  const keys = lock(next, count);
  if (!keys) return false;
  try {
    if (count === 1) {
      const ok = await step({ op: 'delete', key: keys[0]! }, () => store.deleteObject(BUCKET, keys[0]!));
      if (ok) state.set(keys[0]!, null);
    } else {
      const ok = await step({ op: 'deleteMany', keys }, async () => {
        const results = await store.deleteObjects(BUCKET, keys);
        const failed = results.find((r) => r.error);
        if (failed) throw failed.error;
        return results;
      });
      if (ok) for (const k of keys) state.set(k, null);
    }
  } finally {
    for (const k of keys) busy.delete(k);
  }
  return true;
}

async function copy(store: Store, next: () => number): Promise<boolean> {
  const [src] = lock(next, 1, (k) => state.get(k) !== null) ?? [];
  if (!src) return false;
  const [dst] = lock(next, 1) ?? [];
  try {
    if (!dst) return false;
    const ok = await step({ op: 'copy', src, key: dst }, () => store.copyObject({ bucket: BUCKET, key: src }, { bucket: BUCKET, key: dst }));
    if (ok) state.set(dst, state.get(src)!);
  } finally {
    busy.delete(src);
    if (dst) busy.delete(dst);
  }
  return true;
}

async function multipart(store: Store, next: () => number): Promise<boolean> {
  const [key] = lock(next, 1) ?? [];
  if (!key) return false;
  try {
    const uploadId = await step({ op: 'mpu-create', key }, () => store.createMultipartUpload(BUCKET, key), (uploadId) => ({ uploadId }));
    if (!uploadId) return true;
    const g = gen();
    const count = next() % 4 === 0 ? 3 : 2;
    const parts: BodySpec[] = Array.from({ length: count }, (_, i) => ({
      key,
      gen: `${g}.p${i + 1}`,
      size: i < count - 1 ? PART_BYTES : randInt(next, 1, 300 * KIB),
    }));
    const etags = await Promise.all(
      parts.map((spec, i) =>
        step({ op: 'mpu-part', key, uploadId, part: i + 1, spec }, () => {
          const bytes = specBytes(spec);
          return store.uploadPart(BUCKET, key, uploadId, i + 1, pieces(bytes, next), { size: bytes.length });
        })
      )
    );
    if (etags.some((e) => !e)) return true; // a part failed: leave the upload open
    const ok = await step({ op: 'mpu-complete', key, uploadId, content: parts }, () =>
      store.completeMultipartUpload(BUCKET, key, uploadId, etags.map((e, i) => ({ partNumber: i + 1, etag: e!.etag })))
    );
    if (ok) state.set(key, parts);
  } finally {
    busy.delete(key);
  }
  return true;
}

async function get(store: Store, next: () => number): Promise<boolean> {
  const [key] = lock(next, 1) ?? [];
  if (!key) return false;
  try {
    const want = state.get(key)!;
    const id = nextId++;
    emit({ t: 'start', id, op: 'get', key });
    try {
      const res = await store.getObject(BUCKET, key);
      const chunks: Uint8Array[] = [];
      for await (const c of res.body) chunks.push(c);
      const got = Buffer.concat(chunks);
      if (!want) emit({ t: 'fail', id, message: `GET ${key} returned ${got.length} bytes; the key was deleted` });
      else if (!got.equals(contentBytes(want))) emit({ t: 'fail', id, message: `GET ${key} returned ${got.length} bytes that are not ${contentId(want)}` });
      else emit({ t: 'ack', id });
    } catch (err) {
      const e = err as { code?: string; message?: string };
      if (e.code === 'NoSuchKey' && !want) emit({ t: 'ack', id });
      else emit({ t: 'error', id, code: e.code ?? 'Error', message: e.message ?? String(err) });
    }
  } finally {
    busy.delete(key);
  }
  return true;
}

async function lane(store: Store, n: number): Promise<never> {
  const next = prng(config.seed * 7919 + n * 104729 + 1);
  for (;;) {
    const r = next() % 100;
    const done =
      r < 40 ? await put(store, next)
      : r < 50 ? await del(store, next, 1)
      : r < 55 ? await del(store, next, randInt(next, 2, 3))
      : r < 65 ? await copy(store, next)
      : r < 69 ? await multipart(store, next)
      : await get(store, next);
    if (!done) await sleep(1);
  }
}

async function main(): Promise<void> {
  setTimeout(() => process.exit(3), MAX_LIFETIME_MS).unref();
  const dirLock = await acquireDirectoryLock(config.dir);
  const provider = await createFsProvider({ dir: config.dir });
  const { rootDelayMs, ...storeOptions } = config.store;
  if (rootDelayMs) {
    // Slow root writes: the kill then usually lands while a checkpoint is in flight.
    const put = provider.put.bind(provider);
    provider.put = async (key, body, o) => {
      if (key.startsWith('roots/')) await sleep(rootDelayMs);
      return put(key, body, o);
    };
  }
  const store = await Store.open(provider, { ...storeOptions, log: (event) => emit({ t: 'event', event }) }, async () => {
    await provider.close();
    await dirLock.release();
  });
  emit({ t: 'ready', seq: store.repo.seq, rootSeq: store.repo.rootSeq });
  if (config.lanes === 0) {
    setInterval(() => undefined, 1 << 30);
    return;
  }
  await Promise.all(Array.from({ length: config.lanes }, (_, i) => lane(store, i)));
}

main().catch((err: unknown) => {
  emit({ t: 'fatal', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  process.exit(2);
});
