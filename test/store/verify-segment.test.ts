/**
 * `strata verify` on commit log segments (src/store/verify-segment.ts): a damaged body inside a
 * frame is reported with exactly the objects it reaches (not its neighbours in the segment), a
 * damaged commit record is reported without names it cannot know, and a clean log (sealed at
 * close) verifies clean.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { stream, tempDir } from './helpers.js';

const cleanups: (() => void)[] = [];
/** The fs provider names a blob's file by its key in hex: "log/" is 6c6f672f. */
const LOG_FILE = /\/6c6f672f/;
afterEach(() => cleanups.splice(0).forEach((c) => c()));

/** A repository on disk with bucket `bkt` holding a.txt, b.txt, c.txt, each its own commit (frame). */
async function written(): Promise<string> {
  const { dir, cleanup } = tempDir('verify-seg');
  cleanups.push(cleanup);
  const store = await Store.open(await createFsProvider({ dir }), { commitLog: true, ownsProvider: true });
  expect(store.repo.usesCommitLog).toBe(true);
  await store.createBucket('bkt');
  for (const k of ['a.txt', 'b.txt', 'c.txt']) {
    const body = Buffer.from(`body of ${k} `.repeat(40));
    await store.putObject('bkt', k, stream(body), { size: body.length });
  }
  await store.close();
  return dir;
}

/** Flips one bit of the first occurrence of `needle` in any file under `dir`; returns the file. */
function damage(dir: string, needle: Buffer, skip = 3): string {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (readFileSync(p).includes(needle)) files.push(p);
    }
  };
  walk(dir);
  expect(files).toHaveLength(1);
  const bytes = readFileSync(files[0]!);
  bytes[bytes.indexOf(needle) + skip]! ^= 0x20;
  writeFileSync(files[0]!, bytes);
  return files[0]!;
}

describe('verify of commit log segments', () => {
  it('a clean log verifies clean', async () => {
    const dir = await written();
    const report = await verifyRepository(await createFsProvider({ dir }));
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('a damaged body inside a frame names exactly the object whose bytes it damaged', async () => {
    const dir = await written();
    const file = damage(dir, Buffer.from('body of b.txt body of b.txt'));
    expect(file).toMatch(LOG_FILE);
    const report = await verifyRepository(await createFsProvider({ dir }));
    expect(report.ok).toBe(false);
    const logProblems = report.problems.filter((p) => p.blob.startsWith('log/'));
    expect(logProblems.length).toBeGreaterThan(0);
    expect(logProblems.find((p) => /the frame at \d+ is damaged/.test(p.message))?.message).toMatch(/bkt\/b\.txt/);
    const affected = report.problems.flatMap((p) => p.affects ?? []);
    expect(affected).toContain('bkt/b.txt');
    expect(affected).not.toContain('bkt/a.txt');
    expect(affected).not.toContain('bkt/c.txt');
    // Recovery refuses rather than silently dropping c.txt, acknowledged behind the damage.
    await expect(Store.open(await createFsProvider({ dir }), { commitLog: true })).rejects.toMatchObject({ code: expect.stringMatching(/Corrupt|BrokenChain/) });
  });

  it('a damaged commit record is reported, naming nothing it cannot know', async () => {
    const dir = await written();
    // The record of b.txt's commit holds its key; its body does not hold the bare "b.txt" after
    // "bkt" — damage the key where the record names it (the record entry's CRC then fails).
    const file = readFileSync(damageRecordOf(dir));
    expect(file.length).toBeGreaterThan(0);
    const report = await verifyRepository(await createFsProvider({ dir }));
    expect(report.ok).toBe(false);
    expect(report.problems.some((p) => p.blob.startsWith('log/'))).toBe(true);
    expect(report.problems.flatMap((p) => p.affects ?? [])).toEqual([]);
  });
});

/** Flips a bit of "b.txt" where a commit record names it (not inside a body); returns the file. */
function damageRecordOf(dir: string): string {
  const needle = Buffer.from('b.txt');
  const walk = (d: string): string | undefined => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) {
        const hit = walk(p);
        if (hit) return hit;
      } else if (LOG_FILE.test(p)) return p;
    }
    return undefined;
  };
  const file = walk(dir)!;
  const bytes = readFileSync(file);
  const body = Buffer.from('body of b.txt');
  for (let i = bytes.indexOf(needle); i >= 0; i = bytes.indexOf(needle, i + 1)) {
    if (bytes.subarray(i - 8, i + 5).equals(body)) continue; // inside a body
    bytes[i]! ^= 0x20;
    writeFileSync(file, bytes);
    return file;
  }
  throw new Error('no record names b.txt');
}
