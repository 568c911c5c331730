/**
 * Child process of expiry-kill.test.ts (bundled): opens the fs repository at <dir> with the
 * server-wide window <retentionMs> and checkpoints every few commits, and runs history expiry
 * over every bucket, writing one JSON line per committed batch (synchronously, before the
 * next) until it is SIGKILLed — or, if it gets that far, a `done` line with the report.
 *
 *   node worker.mjs <dir> <retentionMs>
 */
import { emit } from '../support/emit-line.js';
import { openStore } from '../../src/store/open.js';


const [dir, retentionArg] = process.argv.slice(2);
try {
  const store = await openStore(dir!, { create: false, checkpointEvery: 4, maxRuns: 2, retentionMs: Number(retentionArg) });
  emit({ t: 'ready' });
  const r = await store.expireHistory({ onProgress: (p) => emit({ t: 'progress', ...p }) });
  emit({ t: 'done', ...r });
  await store.close();
} catch (err) {
  emit({ t: 'fatal', message: String(err) });
  process.exitCode = 1;
}
