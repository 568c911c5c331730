/**
 * Child process of uploads-kill.test.ts (bundled): runs concurrent multipart traffic on an fs
 * repository whose checkpoints and uploads-keyspace compactions are made very frequent, until
 * it is SIGKILLed. Every event is one JSON line written synchronously to fd 1 before the next
 * step, so the parent knows what was acknowledged:
 *
 *   {t:'ready'}  {t:'start', n, op, ...}  {t:'ack', n, ...}  {t:'error', n, code}
 *
 * Operations (an upload is used by one lane at a time): create; upload part (small bodies,
 * part numbers 1..4, re-uploads included); abort; complete with the lowest acknowledged part
 * (single-part completes have no size floor) followed by a retry of the same Complete.
 *
 *   node worker.mjs <dir> <seed> <iteration>
 */
import { emit } from '../support/emit-line.js';
import { acquireDirectoryLock } from '../../src/provider/fs/directory-lock.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { Store } from '../../src/store/store.js';
import { etagOf } from '../../src/store/records.js';
import { prng, randInt } from '../support/random.js';

export const KILL_BUCKET = 'killed-uploads';


const [dir, seedArg, iterArg] = process.argv.slice(2);
const next = prng(Number(seedArg));
let seq = 0;

/** Runs one operation between its start and ack lines. */
async function step<T>(start: Record<string, unknown>, run: () => Promise<T>, ack: (v: T) => Record<string, unknown> = () => ({})): Promise<T | undefined> {
  const n = seq++;
  emit({ t: 'start', n, ...start });
  try {
    const v = await run();
    emit({ t: 'ack', n, ...ack(v) });
    return v;
  } catch (err) {
    emit({ t: 'error', n, code: (err as { code?: string }).code ?? 'Error', message: String((err as Error).message) });
    return undefined;
  }
}

interface Open {
  key: string;
  id: string;
  parts: Map<number, string>;
}

async function main(): Promise<void> {
  setTimeout(() => process.exit(3), 5 * 60_000).unref();
  const lock = await acquireDirectoryLock(dir!);
  const provider = await createFsProvider({ dir: dir! });
  const store = await Store.open(provider, {
    overlayBytes: 16 * 1024,
    checkpointEvery: 25,
    maxRuns: 2,
    log: (event, fields) => emit({ t: 'event', event, ...(event === 'uploads.reap_failed' ? fields : {}) }),
  });
  if (!store.listBuckets().some((b) => b.name === KILL_BUCKET)) await store.createBucket(KILL_BUCKET);
  emit({ t: 'ready' });
  const open: Open[] = [];
  const busy = new Set<string>();
  const take = (ok: (u: Open) => boolean) => {
    const free = open.filter((u) => !busy.has(u.id) && ok(u));
    const u = free[next() % Math.max(1, free.length)];
    if (u) busy.add(u.id);
    return u;
  };
  const idle = () => new Promise((resolve) => setImmediate(resolve));
  const lane = async () => {
    for (;;) {
      const r = next() % 100;
      if (r < 35 || open.length < 3) {
        const key = `i${iterArg}/k${randInt(next, 0, 40)}`;
        const id = await step({ op: 'create', key }, () => store.createMultipartUpload(KILL_BUCKET, key), (id) => ({ id }));
        if (id) open.push({ key, id, parts: new Map() });
        continue;
      }
      if (r < 70) {
        const u = take(() => true);
        if (!u) {
          await idle();
          continue;
        }
        const part = randInt(next, 1, 4);
        const body = new Uint8Array(randInt(next, 1, 3000)).fill(seq % 251);
        const res = await step({ op: 'part', id: u.id, part }, () =>
          store.uploadPart(KILL_BUCKET, u.key, u.id, part, (async function* () {
            yield body;
          })(), { size: body.length }), (p) => ({ etag: p.etag }));
        if (res) u.parts.set(part, res.etag);
        busy.delete(u.id);
        continue;
      }
      const u = take((x) => r < 85 || x.parts.size > 0);
      if (!u) {
        await idle();
        continue;
      }
      open.splice(open.indexOf(u), 1);
      if (r < 85) {
        await step({ op: 'abort', id: u.id }, () => store.abortMultipartUpload(KILL_BUCKET, u.key, u.id));
      } else {
        const first = Math.min(...u.parts.keys());
        const parts = [{ partNumber: first, etag: u.parts.get(first)! }];
        const done = await step({ op: 'complete', id: u.id, parts }, () => store.completeMultipartUpload(KILL_BUCKET, u.key, u.id, parts), (v) => ({ etag: etagOf(v) }));
        if (done) await step({ op: 'retry', id: u.id, parts }, () => store.completeMultipartUpload(KILL_BUCKET, u.key, u.id, parts), (v) => ({ etag: etagOf(v) }));
      }
    }
  };
  await Promise.all(Array.from({ length: 6 }, lane));
}

main().catch((err) => {
  emit({ t: 'fatal', message: String((err as Error)?.stack ?? err) });
  process.exit(1);
});
