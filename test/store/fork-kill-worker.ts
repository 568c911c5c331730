/**
 * Child process of fork-kill.test.ts (bundled): forks buckets over and over on an fs
 * repository whose checkpoints (which flush shared frozen layers) and compactions are made very
 * frequent, while the buckets are written, until it is SIGKILLed. Every step is one JSON line
 * written synchronously to fd 1 before the next step, so the parent knows what was acknowledged:
 *
 *   {t:'ready'}  {t:'start', n, op, bucket, ...}  {t:'ack', n}  {t:'error', n, code, message}
 *
 * Two lanes, each the only writer of its buckets, so a bucket's content at the moment of a
 * fork is what its lane's acknowledged writes made it:
 *   A  writes the source bucket (puts, overwrites, deletes) and forks it into `f<iter>-<n>`;
 *   B  writes the forks (puts, deletes), forks them into `g<iter>-<n>` (forks of forks), and
 *      now and then empties and deletes one — often one that others were forked from.
 *
 *   node worker.mjs <dir> <seed> <iteration>
 */
import { emit } from '../support/emit-line.js';
import { acquireDirectoryLock } from '../../src/provider/fs/directory-lock.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { Store } from '../../src/store/store.js';
import { prng, randInt } from '../support/random.js';

export const SOURCE = 'fork-source';
/** Forks kept at most; beyond, lane B deletes one before forking again. */
const MAX_FORKS = 10;


const [dir, seedArg, iterArg] = process.argv.slice(2);
const next = prng(Number(seedArg));
let seq = 0;

async function step<T>(start: Record<string, unknown>, run: () => Promise<T>): Promise<T> {
  const n = seq++;
  emit({ t: 'start', n, ...start });
  try {
    const v = await run();
    emit({ t: 'ack', n });
    return v;
  } catch (err) {
    emit({ t: 'error', n, code: (err as { code?: string }).code ?? 'Error', message: String((err as Error).message) });
    throw err;
  }
}

async function* once(b: Uint8Array): AsyncGenerator<Uint8Array> {
  yield b;
}

async function main(): Promise<void> {
  setTimeout(() => process.exit(3), 5 * 60_000).unref();
  const lock = await acquireDirectoryLock(dir!);
  void lock;
  const provider = await createFsProvider({ dir: dir! });
  const store = await Store.open(provider, {
    overlayBytes: 24 * 1024,
    checkpointEvery: 12,
    maxRuns: 2,
    log: (event, fields) => emit({ t: 'event', event, ...(event.includes('fail') || event.includes('fence') ? fields : {}) }),
  });
  if (!store.listBuckets().some((b) => b.name === SOURCE)) await step({ op: 'createBucket', bucket: SOURCE }, () => store.createBucket(SOURCE));
  const forks = store.listBuckets().map((b) => b.name).filter((n) => n !== SOURCE);
  emit({ t: 'ready' });
  let made = 0;
  const put = (bucket: string, key: string) => {
    const value = `${iterArg}:${seq}:${bucket}/${key}`;
    return step({ op: 'put', bucket, key, value }, () => store.putObject(bucket, key, once(Buffer.from(value)), { size: Buffer.byteLength(value) }));
  };
  const del = (bucket: string, key: string) => step({ op: 'delete', bucket, key }, () => store.deleteObject(bucket, key));
  const forkInto = async (source: string, prefix: string) => {
    const name = `${prefix}${iterArg}-${made++}`;
    await step({ op: 'fork', bucket: name, source }, () => store.forkBucket(source, name));
    forks.push(name);
  };

  const laneA = async () => {
    for (;;) {
      for (let i = randInt(next, 1, 6); i > 0; i--) {
        const key = `a/${randInt(next, 0, 40)}`;
        if (next() % 5 === 0) await del(SOURCE, key);
        else await put(SOURCE, key);
      }
      if (forks.length < MAX_FORKS) await forkInto(SOURCE, 'f');
      else await new Promise((r) => setImmediate(r));
    }
  };
  const laneB = async () => {
    for (;;) {
      if (forks.length === 0) {
        await new Promise((r) => setTimeout(r, 5));
        continue;
      }
      const f = forks[next() % forks.length]!;
      for (let i = randInt(next, 1, 5); i > 0; i--) {
        const key = `b/${randInt(next, 0, 20)}`;
        if (next() % 4 === 0) await del(f, key);
        else await put(f, key);
      }
      const r = next() % 10;
      if (r < 4) await forkInto(f, 'g');
      else if (r < 6 && forks.length >= MAX_FORKS - 2) {
        // Empty it (one DeleteObjects) and delete it; its forks must stay complete.
        const keys: string[] = [];
        let token: string | undefined;
        do {
          const page = await store.listObjects(f, { ...(token ? { continuationToken: token } : {}) });
          keys.push(...page.contents.map((e) => e.key));
          token = page.nextContinuationToken;
        } while (token);
        forks.splice(forks.indexOf(f), 1);
        await step({ op: 'deleteObjects', bucket: f, keys }, () => store.deleteObjects(f, keys));
        await step({ op: 'deleteBucket', bucket: f }, () => store.deleteBucket(f));
      }
    }
  };
  await Promise.all([laneA(), laneB()]);
}

main().catch((err) => {
  emit({ t: 'fatal', message: String((err as Error)?.stack ?? err) });
  process.exit(1);
});
