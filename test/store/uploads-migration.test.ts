/**
 * A repository written by the code before the uploads keyspace (test/fixtures/legacy-uploads-v1:
 * an STR1 root listing uploads in progress, then legacy createUpload / putPart / endUpload
 * commits) opens with today's code: verify accepts it as written, the uploads it had in
 * progress are all there (and only those), their old-style ids keep working for every
 * operation, and opening moved them into the uploads keyspace (an STR2 root naming a run).
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
import { etagOf } from '../../src/store/records.js';
import type { Store } from '../../src/store/store.js';
import { collect, stream, tempDir } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/legacy-uploads-v1', import.meta.url));
const B = 'legacy';
const A = '132fc33c2c92055dacb36be48881a856';
const A2 = 'ba4c5bfc0c53553e1fc88a9d7b8fbacd';
const ABORTED = 'c576f37c68d2b232c8708aff79efa92e';
const C = '4bd6da3187035c140cb723c2a25d6bae';
const DONE = '3ae2bccb13ac4d624e343cf8279fb30a';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function copyFixture(): string {
  const { dir, cleanup } = tempDir('legacy');
  cleanups.push(cleanup);
  const repo = join(dir, 'repo');
  cpSync(FIXTURE, repo, { recursive: true, filter: (src) => !src.endsWith('.md') && !src.endsWith('.mjs') });
  return repo;
}

async function rootOf(dir: string): Promise<RootRecord> {
  const provider = await createFsProvider({ dir });
  try {
    const { anchor } = (await readAnchor(provider))!;
    return decodeRoot(await readRecord(provider, anchor.root, 'root'));
  } finally {
    await provider.close();
  }
}

async function verified(dir: string): Promise<void> {
  const provider = await createFsProvider({ dir });
  try {
    expect((await verifyRepository(provider)).problems).toEqual([]);
  } finally {
    await provider.close();
  }
}

const text = async (s: Store, key: string) => Buffer.from(await collect((await s.getObject(B, key)).body)).toString();

describe('a repository written before the uploads keyspace', () => {
  it('verifies as written: an STR1 root with uploads, legacy upload commits after it', async () => {
    const dir = copyFixture();
    const root = await rootOf(dir);
    expect(root.uploads.map((u) => u.uploadId).sort()).toEqual([A, A2, ABORTED].sort());
    expect(root.buckets[0]!.uploadRuns).toEqual([]);
    await verified(dir);
  });

  it('opens with every upload it had in progress, migrated into the keyspace, old ids working', async () => {
    const dir = copyFixture();
    const store = await openStore(dir);
    // Opening migrated the root's uploads and checkpointed: the new root lists none itself.
    const uploads = await store.listMultipartUploads(B);
    expect(uploads.uploads.map((u) => [u.key, u.uploadId])).toEqual([
      ['dir/a.bin', A],
      ['dir/a.bin', A2],
      ['zeta/c.bin', C],
    ]);
    expect(uploads.uploads[0]!.initiated).toBeLessThan(uploads.uploads[1]!.initiated);
    expect(uploads.uploads[1]).toMatchObject({ checksumAlgorithm: 'crc32', checksumType: 'COMPOSITE' });
    expect(store.repo.state.buckets.get(B)!.uploads.count).toBe(3);
    const parts = await store.listParts(B, 'dir/a.bin', A);
    expect(parts.parts.map((p) => [p.partNumber, p.size])).toEqual([
      [1, 12],
      [2, 11],
    ]);
    expect(parts.upload).toMatchObject({ contentType: 'application/x-a', userMetadata: { who: 'a' } });
    for (const gone of [ABORTED, DONE]) await expect(store.listParts(B, gone === DONE ? 'done.bin' : 'dir/b.bin', gone)).rejects.toMatchObject({ code: 'NoSuchUpload' });
    expect(await text(store, 'done.bin')).toBe('D1-done');
    expect(await text(store, 'plain.txt')).toBe('plain object');
    // Old ids work for every operation.
    await store.uploadPart(B, 'dir/a.bin', A, 3, stream(new TextEncoder().encode('A3')), { size: 2 });
    expect((await store.listParts(B, 'dir/a.bin', A)).parts.map((p) => p.partNumber)).toEqual([1, 2, 3]);
    const c1 = (await store.listParts(B, 'zeta/c.bin', C)).parts[0]!;
    const done = await store.completeMultipartUpload(B, 'zeta/c.bin', C, [{ partNumber: 1, etag: c1.etag }]);
    expect(await text(store, 'zeta/c.bin')).toBe('C1');
    // A retried Complete finds the completion record of an old-style id too.
    expect(etagOf(await store.completeMultipartUpload(B, 'zeta/c.bin', C, [{ partNumber: 1, etag: c1.etag }]))).toBe(etagOf(done));
    await store.abortMultipartUpload(B, 'dir/a.bin', A2);
    await expect(store.abortMultipartUpload(B, 'dir/a.bin', A2)).rejects.toMatchObject({ code: 'NoSuchUpload' });
    // Markers with old-style ids place the listing after that upload.
    const after = await store.listMultipartUploads(B, { keyMarker: 'dir/a.bin', uploadIdMarker: A });
    expect(after.uploads.map((u) => u.uploadId)).toEqual([]);
    await store.close();

    const root = await rootOf(dir);
    expect(root.uploads).toEqual([]);
    expect(root.buckets[0]!.uploadRuns.length).toBeGreaterThan(0);
    await verified(dir);
    const again = await openStore(dir);
    expect((await again.listMultipartUploads(B)).uploads.map((u) => u.uploadId)).toEqual([A]);
    expect((await again.listParts(B, 'dir/a.bin', A)).parts.map((p) => p.partNumber)).toEqual([1, 2, 3]);
    expect(again.repo.state.buckets.get(B)!.uploads.count).toBe(1);
    await again.checkpoint();
    await again.close();
    await verified(dir);
  });

  it('can still be deleted as a bucket holding only uploads in progress, once its objects are gone', async () => {
    const dir = copyFixture();
    const store = await openStore(dir);
    for (const key of ['plain.txt', 'done.bin']) await store.deleteObject(B, key);
    await store.deleteBucket(B);
    await store.repo.reaper.idle();
    expect(store.repo.reaper.stats).toEqual({ deleted: 3, failed: 0 }); // the chunks of parts a1, a2 and c1
    await store.close();
    await verified(dir);
  });
});
