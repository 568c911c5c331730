/** What a directory domain holds, read through the fs provider (tests of the erasure set). */
import { join } from 'node:path';
import { createFsProvider } from '../../src/provider/fs/index.js';

/** Child keys (fragments and replicas) on domain `id` under `root`, maintenance/ left out. */
export async function childKeys(root: string, id: string): Promise<string[]> {
  const p = await createFsProvider({ dir: join(root, id) });
  const out: string[] = [];
  try {
    let startAfter: string | undefined;
    do {
      const page = await p.list(startAfter !== undefined ? { startAfter } : {});
      for (const it of page.items) if (!it.key.startsWith('maintenance/')) out.push(it.key);
      startAfter = page.next;
    } while (startAfter !== undefined);
  } finally {
    await p.close();
  }
  return out;
}
