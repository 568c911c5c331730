/**
 * Child process of gc-kill.test.ts (bundled): opens the fs repository at <dir> and runs one GC
 * pass (grace 0, pack cleaning below 0.9), writing one JSON line per progress event
 * (synchronously, before going on) until it is SIGKILLed — or, if it gets that far, a `done`
 * line with the report.
 *
 *   node worker.mjs <dir>
 */
import { emit } from '../support/emit-line.js';
import { openStore } from '../../src/store/open.js';
import { runGc } from '../../src/store/gc.js';


const [dir] = process.argv.slice(2);
try {
  const store = await openStore(dir!, { create: false });
  emit({ t: 'ready' });
  const r = await runGc(store.repo, { graceMs: 0, cleanBelow: 0.9, onProgress: (p) => emit({ t: 'progress', ...p }) });
  emit({ t: 'done', ...r });
  await store.close();
} catch (err) {
  emit({ t: 'fatal', message: String(err) });
  process.exitCode = 1;
}
