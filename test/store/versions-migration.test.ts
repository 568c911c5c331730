/**
 * A repository written before the version log (test/fixtures/legacy-uploads-v1: objects
 * `plain.txt` and `done.bin` with pre-log ids, a root without the version log section) opens
 * with today's code: its objects read as their keys' `null` versions (GET ?versionId=null,
 * ListObjectVersions), opening wrote a root naming a version log run, verify is clean, and
 * later versioned writes stack on top of the null versions.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { readAnchor } from '../../src/store/recovery.js';
import { readRecord } from '../../src/store/records-io.js';
import { decodeRoot, type RootRecord } from '../../src/store/root.js';
import { verifyRepository } from '../../src/store/verify.js';
import { collect, stream, tempDir } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/legacy-uploads-v1', import.meta.url));
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function rootOf(dir: string): Promise<RootRecord> {
  const provider = await createFsProvider({ dir });
  try {
    const { anchor } = (await readAnchor(provider))!;
    return decodeRoot(await readRecord(provider, anchor.root, 'root'));
  } finally {
    await provider.close();
  }
}

describe('opening a repository written before the version log', () => {
  it('makes its objects the null versions of their keys, once, and verifies clean', async () => {
    const { dir: tmp, cleanup } = tempDir('legacy-versions');
    cleanups.push(cleanup);
    const dir = join(tmp, 'repo');
    cpSync(FIXTURE, dir, { recursive: true, filter: (src) => !src.endsWith('.md') && !src.endsWith('.mjs') });
    expect((await rootOf(dir)).versionLog).toBeUndefined();
    const store = await openStore(dir);
    const list = await store.listVersions('legacy');
    expect(list.versions.map((v) => [v.key, v.versionId, v.isLatest])).toEqual([
      ['done.bin', 'null', true],
      ['plain.txt', 'null', true],
    ]);
    const g = await store.getObject('legacy', 'plain.txt', { versionId: 'null' });
    expect(g.version.versionId).toBe('null');
    expect(Buffer.from(await collect(g.body)).toString()).toBe('plain object');
    expect((await store.version('legacy', 'plain.txt')).versionId).toBe('null');
    const root = await rootOf(dir);
    expect(root.versionLog).toBe(true);
    expect(root.buckets.find((b) => b.name === 'legacy')?.versionRuns).toHaveLength(1);
    // Versioned writes stack on the null version; tagging the null version works by id.
    await store.putVersioning('legacy', 'Enabled');
    const body = new TextEncoder().encode('new');
    const v = await store.putObject('legacy', 'plain.txt', stream(body), { size: body.length });
    await store.putObjectTagging('legacy', 'plain.txt', { was: 'legacy' }, 'null');
    expect((await store.listVersions('legacy', { prefix: 'plain' })).versions.map((x) => [x.versionId, x.isLatest, x.version.tags])).toEqual([
      [v.versionId, true, {}],
      ['null', false, { was: 'legacy' }],
    ]);
    await store.close();
    const again = await openStore(dir);
    expect((await again.listVersions('legacy', { prefix: 'plain' })).versions.map((x) => x.versionId)).toEqual([v.versionId, 'null']);
    expect(again.repo.state.buckets.get('legacy')!.versions.runs).toHaveLength(1);
    await again.close();
    const provider = await createFsProvider({ dir });
    try {
      expect((await verifyRepository(provider)).problems).toEqual([]);
    } finally {
      await provider.close();
    }
  });
});
