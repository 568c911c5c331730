/**
 * Child process of kill.test.ts (bundled): writes objects into a repository kept in Ceph RGW
 * (through the s3 provider) until it is SIGKILLed. Several lanes put at once — small bodies
 * (packed into commit blobs), carriers of a few MiB (chunk blobs), and overwrites of a few hot
 * keys — with frequent checkpoints, so kills land inside group commits, chunk uploads, run
 * flushes and anchor moves. Every step is one JSON line written synchronously to fd 1 before
 * the next, so the parent knows exactly what was acknowledged:
 *
 *   {t:'ready'}  {t:'start', n, key, size, seed}  {t:'ack', n}  {t:'error', n, message}
 *
 * The body of a put is a pure function of (size, seed): bodyOf() in kill-body.ts, which the
 * parent recomputes to compare bytes.
 *
 *   S3_ENDPOINT=… AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=… node worker.mjs <bucket> <prefix> <seed>
 */
import { emit } from '../support/emit-line.js';
import { createS3Provider } from '../../src/provider/s3/index.js';
import { Store } from '../../src/store/store.js';
import { prng, randInt } from '../support/random.js';
import { bodyOf, BUCKET } from './kill-body.js';


async function* once(b: Uint8Array): AsyncGenerator<Uint8Array> {
  yield b;
}

async function main(): Promise<void> {
  const [bucket, prefix, seedArg] = process.argv.slice(2);
  const next = prng(Number(seedArg));
  const provider = await createS3Provider({
    endpoint: process.env.S3_ENDPOINT!,
    bucket,
    prefix,
    accessKeyId: process.env.AWS_ACCESS_KEY_ID!,
    secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY!,
    conditionalWrites: 'probe',
  });
  // Checkpoints every few commits: kills land on run flushes and anchor moves too.
  const store = await Store.open(provider, { checkpointEvery: 4 });
  if (!store.listBuckets().some((b) => b.name === BUCKET)) await store.createBucket(BUCKET);
  emit({ t: 'ready' });
  let n = 0;
  async function lane(id: number): Promise<void> {
    for (;;) {
      const kind = id === 0 ? 'carrier' : id === 1 ? 'hot' : 'small';
      const size =
        kind === 'carrier' ? randInt(next, 1, 3 * 1024 * 1024) : randInt(next, 0, 3000);
      const key = kind === 'hot' ? `hot/${randInt(next, 0, 3)}` : `${kind}/${seedArg}-${n}`;
      const seed = randInt(next, 1, 2 ** 31);
      const me = ++n;
      emit({ t: 'start', n: me, key, size, seed });
      try {
        await store.putObject(BUCKET, key, once(bodyOf(size, seed)), { size });
        emit({ t: 'ack', n: me });
      } catch (err) {
        emit({ t: 'error', n: me, message: String(err) });
      }
    }
  }
  await Promise.all(Array.from({ length: 6 }, (_, i) => lane(i)));
}

main().catch((err) => {
  emit({ t: 'fatal', message: String(err) });
  process.exit(1);
});
