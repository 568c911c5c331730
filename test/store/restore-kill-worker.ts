/**
 * Child process of restore-kill.test.ts (bundled): opens the fs repository at <dir> with
 * checkpoints every few commits and restores bucket <bucket> to <time> in commits of
 * <batchKeys> keys, writing one JSON line per commit (synchronously, before the next) until
 * it is SIGKILLed — or, if it gets that far, a `done` line.
 *
 *   node worker.mjs <dir> <bucket> <time ms> <batchKeys>
 */
import { emit } from '../support/emit-line.js';
import { openStore } from '../../src/store/open.js';


const [dir, bucket, timeArg, batchArg] = process.argv.slice(2);
try {
  const store = await openStore(dir!, { create: false, checkpointEvery: 4, maxRuns: 2 });
  emit({ t: 'ready' });
  const r = await store.restore(bucket!, { to: Number(timeArg), batchKeys: Number(batchArg), onProgress: (p) => emit({ t: 'progress', ...p }) });
  emit({ t: 'done', restored: r.restored, deleted: r.deleted });
  await store.close();
} catch (err) {
  emit({ t: 'fatal', message: String(err) });
  process.exitCode = 1;
}
