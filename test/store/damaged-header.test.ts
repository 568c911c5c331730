/**
 * A blob file whose fs header is damaged (or cut below it) is one damaged blob: `verify` reports
 * it as a problem naming the objects it holds, and a GC pass goes past it, instead of either
 * failing on the listing of the whole directory (both list without etags: they need keys,
 * sizes and times only).
 */
import { truncateSync } from 'node:fs';
import { overwriteFile } from '../support/bytes.js';
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { collectGarbage } from '../../src/store/gc.js';
import type { FsProvider } from '../../src/provider/fs/index.js';
import { bigAndSmall, makeProvider } from './helpers.js';

describe('a damaged blob file header on the fs provider', () => {
  for (const how of ['spoiled', 'cut below it'] as const) {
    it(`${how}: verify reports the blob as Corrupt, naming the object; GC goes past it`, async () => {
      const p = await makeProvider('fs');
      try {
        const store = await Store.open(p.provider);
        await bigAndSmall(store, 17);
        await store.close();

        const chunks = (await p.provider.list({ prefix: 'chunks/' })).items.map((i) => i.key);
        expect(chunks.length).toBeGreaterThan(0);
        const victim = chunks[0]!;
        const path = (p.provider as FsProvider).blobFilePath(victim);
        if (how === 'spoiled') overwriteFile(path, 0, Buffer.from('XXXX'));
        else truncateSync(path, 10);

        const report = await verifyRepository(p.provider);
        expect(report.ok).toBe(false);
        const problem = report.problems.find((x) => x.blob === victim);
        expect(problem, JSON.stringify(report.problems)).toBeDefined();
        expect(problem!.code).toBe('Corrupt');
        expect(problem!.affects).toContain('bkt/big');

        const gc = await collectGarbage(p.provider, { graceMs: 0 });
        expect(gc.examinedBlobs).toBeGreaterThan(chunks.length);
        expect((await p.provider.list({ prefix: 'chunks/', etags: false })).items.map((i) => i.key)).toContain(victim);
      } finally {
        p.cleanup();
      }
    });
  }
});
