/**
 * Helper process for fs.test.ts, bundled with esbuild before the tests run.
 *   race <dir> <name> <rounds>: prints 'ready', waits for an IPC message, then races
 *                               ifNoneMatch puts of race/<i>, printing "<i> <outcome>"
 *   lock <dir>:                 takes the directory lock, prints 'locked', waits to be killed
 */
import { acquireDirectoryLock, createFsProvider } from '../../src/provider/fs/index.js';
import { ProviderError } from '../../src/provider/provider.js';

const [dir, mode, name, rounds] = process.argv.slice(2);

if (mode === 'lock') {
  await acquireDirectoryLock(dir);
  process.stdout.write('locked\n');
  setInterval(() => {}, 1 << 30);
} else if (mode === 'race') {
  const p = await createFsProvider({ dir });
  process.stdout.write('ready\n');
  process.once('message', async () => {
    for (let i = 0; i < Number(rounds); i++) {
      let outcome = 'won';
      try {
        await p.put(`race/${i}`, Buffer.from(`${name} ${i}`), { ifNoneMatch: '*' });
      } catch (err) {
        outcome = err instanceof ProviderError ? err.code : String(err);
      }
      process.stdout.write(`${i} ${outcome}\n`);
    }
    process.disconnect();
  });
}
