/**
 * Damage on disk: a flipped byte or a deleted blob in an fs repository.
 *
 * The fixture holds packed objects, carriers, a multipart object, commits before and after
 * the newest root, a root naming two object index runs and an uploads keyspace run, runs
 * superseded by a compaction and chunks no
 * longer referenced. For every blob file in turn, a byte of the blob (after the fs
 * provider's 32-byte file header) is flipped at its first, a middle and its last position
 * (plus the middle of the record, for the newest root and the commits it replays); then
 * this file proves that:
 *   - opening succeeds, or fails with an error naming the damaged blob — and it must fail
 *     when the anchor, or the record of the newest root or of a replayed commit, is hit;
 *   - every GET returns exactly the bytes written, or throws an error naming the blob, and
 *     LIST returns exactly the keys written, or throws: never wrong bytes;
 *   - `verifyRepository` reports the damaged blob, and `strata verify` (the CLI bundled
 *     from src/cli/main.ts, run with node, on the first blob of each kind) exits non-zero
 *     and names it. Superseded runs are
 *     garbage nothing reads; `config` has its own tests below.
 * Run damage surfaces as StoreError (Corrupt / MissingBlob) naming the run.
 * Deleting a blob (a replayed commit, a chunk, a live run, the root, an older commit that
 * holds packed bodies) is checked the same way.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { HEADER_BYTES } from '../../src/provider/fs/blob-file.js';
import { dirNameHex, fromKeyHex, keyPath, leafNameHex } from '../../src/provider/fs/key-path.js';
import { IndexError } from '../../src/store/index/errors.js';
import { decodeRunMeta } from '../../src/store/index/run-format.js';
import { ENTRY_HEADER_SIZE } from '../../src/pack/stream-writer.js';
import { decodeCommit, type RecordRef } from '../../src/store/commit.js';
import { readAnchor } from '../../src/store/recovery.js';
import { readRecord } from '../../src/store/records-io.js';
import { decodeRoot } from '../../src/store/root.js';
import { StoreError } from '../../src/store/errors.js';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { bundleEntry } from '../soak/bundle.js';
import { randomBytes } from '../support/random.js';
import { collect, stream, tempDir } from './helpers.js';

const B = 'damage';
const KIB = 1024;
const expected = new Map<string, Uint8Array>();
let pristine: string;
let cli: Awaited<ReturnType<typeof bundleEntry>>;
const temps: (() => void)[] = [];

/** What the pristine repository's blobs are. */
const live = {
  root: '',
  /** Commits replayed at open (after the root). */
  chain: new Set<string>(),
  runs: new Set<string>(),
  /** Where the root's and each replayed commit's record lies in its blob: [first, last] byte. */
  records: new Map<string, [number, number]>(),
  /** The commit blob holding p/1's body (older than the root), and a chunk of carrier/2. */
  olderCommit: '',
  chunk: '',
};

async function buildFixture(dir: string): Promise<void> {
  // Commit blobs, not the commit log: this file damages them blob by blob (the log's own damage
  // cases are in commit-log.test.ts).
  const store = await Store.open(await createFsProvider({ dir }), { checkpointEvery: 1 << 20, overlayBytes: 1 << 30, maxRuns: 2, commitLog: false });
  await store.createBucket(B);
  let seed = 1;
  const put = async (key: string, size: number) => {
    const body = randomBytes(size, seed++);
    await store.putObject(B, key, stream(body, 50_000), { size });
    expected.set(key, body);
  };
  await put('empty', 0);
  await put('p/1', 10);
  await put('p/2', 5000);
  await put('p/3', 512 * KIB);
  await put('carrier/1', 700 * KIB);
  await store.checkpoint(); // run 1
  await put('p/2', 3000);
  await store.deleteObject(B, 'p/3');
  expected.delete('p/3');
  await put('carrier/2', 2 * 1024 * KIB + 5);
  await store.copyObject({ bucket: B, key: 'p/1' }, { bucket: B, key: 'p/1-copy' });
  expected.set('p/1-copy', expected.get('p/1')!);
  await store.checkpoint(); // run 2
  await put('p/5', 40 * KIB);
  const id = await store.createMultipartUpload(B, 'multi');
  const parts = [randomBytes(5 * 1024 * KIB, 90), randomBytes(KIB + 7, 91)];
  const etags = [];
  for (const [i, p] of parts.entries()) etags.push((await store.uploadPart(B, 'multi', id, i + 1, stream(p), { size: p.length })).etag);
  await store.completeMultipartUpload(B, 'multi', id, etags.map((etag, i) => ({ partNumber: i + 1, etag })));
  expected.set('multi', Buffer.concat(parts));
  await store.checkpoint(); // run 3: three runs > maxRuns, compacted into one
  await put('p/6', 100);
  await put('carrier/1', KIB); // the first carrier's chunk is now unreferenced
  await store.checkpoint(); // run 4: the root names it and the compacted run
  await put('p/7', 77);
  await put('p/5', 41 * KIB);
  await store.deleteObject(B, 'p/6');
  expected.delete('p/6');
  await put('carrier/3', 600 * KIB);
  expect(store.repo.stats.compactions).toBe(1);
  await store.close();
}

async function describeLive(dir: string): Promise<void> {
  const provider = await createFsProvider({ dir });
  const { anchor } = (await readAnchor(provider))!;
  const root = decodeRoot(await readRecord(provider, anchor.root, 'root'));
  live.root = anchor.root.key;
  const span = (r: RecordRef): [number, number] => [r.offset, r.offset + ENTRY_HEADER_SIZE + r.length - 1];
  live.records.set(live.root, span(anchor.root));
  for (const b of root.buckets) for (const m of [...b.runs, ...b.uploadRuns, ...(b.versionRuns ?? [])]) live.runs.add(decodeRunMeta(m).blobKey);
  let ref = anchor.head;
  for (let seq = anchor.seq; seq > root.seq && ref; seq--) {
    live.chain.add(ref.key);
    live.records.set(ref.key, span(ref));
    ref = decodeCommit(await readRecord(provider, ref, 'commit')).parent;
  }
  const store = await Store.open(provider);
  const p1 = (await store.version(B, 'p/1')).location;
  const c2 = (await store.version(B, 'carrier/2')).location;
  if (p1.kind !== 'pack' || c2.kind !== 'chunks') throw new Error('fixture: unexpected locations');
  live.olderCommit = p1.blob;
  live.chunk = c2.chunks[0]!.blob;
  await store.close();
}

/** Every blob file of an fs repository, with its key. */
function blobFiles(dir: string): { key: string; path: string }[] {
  const out: { key: string; path: string }[] = [];
  const walk = (path: string, hex: string) => {
    for (const name of readdirSync(path).sort()) {
      const p = join(path, name);
      if (statSync(p).isDirectory()) walk(p, hex + dirNameHex(name)!);
      else out.push({ key: fromKeyHex(hex + leafNameHex(name)!), path: p });
    }
  };
  walk(join(dir, 'blobs'), '');
  return out;
}

function pathOf(dir: string, key: string): string {
  const p = keyPath(Buffer.from(key));
  return join(dir, 'blobs', ...p.dirs, p.leaf);
}

/** Whether `err` is a store failure that names `blob` (the anchor and config by name). */
function names(err: unknown, blob: string): boolean {
  if (err instanceof IndexError) return false; // must have become a StoreError
  return (
    err instanceof StoreError &&
    ['Corrupt', 'BrokenChain', 'MissingBlob', 'UnsupportedFormat'].includes(err.code) &&
    err.message.includes(blob)
  );
}

interface Outcome {
  openError?: unknown;
  /** GET/LIST failures (each must name the blob) and wrong answers (there must be none). */
  readErrors: { key: string; err: unknown }[];
  wrong: string[];
  verifyBlobs: string[];
}

async function inspect(dir: string): Promise<Outcome> {
  const out: Outcome = { readErrors: [], wrong: [], verifyBlobs: [] };
  const provider = await createFsProvider({ dir });
  const report = await verifyRepository(provider);
  out.verifyBlobs = report.problems.map((p) => p.blob);
  let store: Store;
  try {
    store = await Store.open(provider);
  } catch (err) {
    out.openError = err;
    return out;
  }
  for (const [key, body] of expected) {
    try {
      const got = await collect((await store.getObject(B, key)).body);
      if (!Buffer.from(got).equals(body)) out.wrong.push(`${key}: ${got.length} wrong bytes`);
    } catch (err) {
      out.readErrors.push({ key, err });
    }
  }
  try {
    const keys = (await store.listObjects(B)).contents.map((e) => e.key);
    const want = [...expected.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    if (keys.join('\n') !== want.join('\n')) out.wrong.push(`LIST: ${keys.join(', ')}`);
  } catch (err) {
    out.readErrors.push({ key: '(list)', err });
  }
  await store.close();
  return out;
}

type Kind = 'anchor' | 'config' | 'root' | 'old root' | 'replayed commit' | 'older commit' | 'live run' | 'superseded run' | 'chunk';

function kindOf(key: string): Kind {
  if (key === 'anchor' || key === 'config') return key;
  if (key.startsWith('roots/')) return key === live.root ? 'root' : 'old root';
  if (key.startsWith('commits/')) return live.chain.has(key) ? 'replayed commit' : 'older commit';
  if (key.startsWith('runs/')) return live.runs.has(key) ? 'live run' : 'superseded run';
  return 'chunk';
}

/** The checks every damaged blob must pass (see the module doc); `at` is the flipped byte. */
function expectContained(o: Outcome, key: string, kind: Kind, at: number): void {
  const where = `${kind} ${key} byte ${at}`;
  const runs = kind.endsWith('run');
  expect(o.wrong, `${where}: wrong answers`).toEqual([]);
  const record = live.records.get(key);
  if (kind === 'anchor' || (record && at >= record[0] && at <= record[1])) expect(o.openError, `${where}: opened`).toBeDefined();
  if (o.openError !== undefined) expect(names(o.openError, key), `${where}: open failed with ${String(o.openError)}`).toBe(true);
  for (const e of o.readErrors) expect(names(e.err, key), `${where}: ${e.key} failed with ${String(e.err)}`).toBe(true);
  if (kind === 'superseded run') {
    // Garbage: nothing reads it, so nothing notices (and verify only checks live runs).
    expect(o.openError ?? o.readErrors[0]?.err).toBeUndefined();
  } else {
    expect(o.verifyBlobs, `${where}: verify`).toContain(key);
  }
}

function runCli(dir: string): { status: number | null; stdout: string } {
  const r = spawnSync(process.execPath, [cli.path, 'verify', dir], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout };
}

beforeAll(async () => {
  const t = tempDir('corrupt');
  temps.push(t.cleanup);
  pristine = join(t.dir, 'pristine');
  await buildFixture(pristine);
  await describeLive(pristine);
  cli = await bundleEntry(fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url)), 'strata');
}, 120_000);
afterAll(async () => {
  for (const c of temps.splice(0)) c();
  await cli?.remove();
});

describe('corruption', () => {
  it('the fixture has every kind of blob the cases need', () => {
    const kinds = blobFiles(pristine).map((b) => kindOf(b.key));
    for (const k of ['anchor', 'config', 'root', 'old root', 'replayed commit', 'older commit', 'live run', 'superseded run', 'chunk'] as Kind[]) {
      expect(kinds, k).toContain(k);
    }
    // Two object index runs, and the uploads keyspace's run (the multipart upload's records).
    // (Plus the version log's runs: every write is also in the bucket's history.)
    expect([...live.runs].filter((k) => !k.includes('/v-')).length).toBe(3);
    expect([...live.runs].filter((k) => k.includes('/v-')).length).toBeGreaterThan(0);
    expect([...live.runs].filter((k) => k.includes('/u-'))).toHaveLength(1);
    expect(runCli(pristine).status).toBe(0);
  });

  // One test per kind of blob (each within its own timeout: the whole sweep takes minutes on a
  // loaded machine). Every blob of the kind is damaged at every position and checked in process
  // (open, every GET, LIST, verifyRepository); `strata verify` (a child node process running
  // the same verifyRepository after openReadOnly) is run on the first blob of each kind, which
  // proves the CLI's exit code and naming per kind without paying a node start per blob.
  describe('a flipped byte in any blob never yields wrong data, and is reported by name', () => {
    const FLIPPED: Kind[] = ['anchor', 'root', 'old root', 'replayed commit', 'older commit', 'live run', 'superseded run', 'chunk'];
    it.each(FLIPPED)('%s', { timeout: 120_000 }, async (kind) => {
      const { dir, cleanup } = tempDir('flip');
      temps.push(cleanup);
      const work = join(dir, 'repo');
      cpSync(pristine, work, { recursive: true });
      const blobs = blobFiles(work).filter((b) => kindOf(b.key) === kind);
      expect(blobs.length, kind).toBeGreaterThan(0);
      let cliChecked = false;
      for (const { key, path } of blobs) {
        const original = readFileSync(path);
        const size = original.length - HEADER_BYTES;
        const record = live.records.get(key);
        const positions = [0, Math.floor(size / 2) + 1, size - 1];
        if (record) positions.push(Math.floor((record[0] + record[1]) / 2));
        for (const at of positions) {
          const damaged = Buffer.from(original);
          damaged[HEADER_BYTES + at] ^= 0xff;
          writeFileSync(path, damaged);
          try {
            expectContained(await inspect(work), key, kind, at);
            if (at === 0 && kind !== 'superseded run' && !cliChecked) {
              const r = runCli(work);
              expect(r.status, `strata verify after damaging ${key}`).not.toBe(0);
              expect(r.stdout).toContain(key);
              cliChecked = true;
            }
          } finally {
            writeFileSync(path, original);
          }
        }
      }
      expect(cliChecked).toBe(kind !== 'superseded run');
    });
  });

  // `config` carries no checksum: a flip that keeps it valid JSON of the right shape (a
  // digit of `created`) goes unnoticed. What this proves is that data is never affected.
  it('a flipped byte in config never changes what is served', async () => {
    const { dir, cleanup } = tempDir('config');
    temps.push(cleanup);
    const work = join(dir, 'repo');
    cpSync(pristine, work, { recursive: true });
    const path = pathOf(work, 'config');
    const original = readFileSync(path);
    let refused = 0;
    for (let at = HEADER_BYTES; at < original.length; at += 7) {
      const damaged = Buffer.from(original);
      damaged[at] ^= 0x01;
      writeFileSync(path, damaged);
      const o = await inspect(work);
      expect(o.wrong).toEqual([]);
      expect(o.readErrors).toEqual([]);
      if (o.openError) {
        refused++;
        expect(names(o.openError, 'config') || names(o.openError, live.root), String(o.openError)).toBe(true);
      }
    }
    writeFileSync(path, original);
    expect(refused).toBeGreaterThan(0);
  });

  // Regression: verify used not to read `config`, and reported OK for a repository that
  // could not even be opened because its config was not JSON.
  it('verify reports a config that makes the repository unopenable', async () => {
    const { dir, cleanup } = tempDir('config-verify');
    temps.push(cleanup);
    const work = join(dir, 'repo');
    cpSync(pristine, work, { recursive: true });
    const path = pathOf(work, 'config');
    const damaged = readFileSync(path);
    damaged[HEADER_BYTES] ^= 0xff;
    writeFileSync(path, damaged);
    const o = await inspect(work);
    expect(names(o.openError, 'config'), String(o.openError)).toBe(true);
    expect(o.verifyBlobs).toContain('config');
  });
});

describe('missing blobs', () => {
  const cases: { what: string; pick: () => string; mustFailOpen: boolean }[] = [
    { what: 'a replayed commit', pick: () => [...live.chain][1]!, mustFailOpen: true },
    { what: 'the newest root', pick: () => live.root, mustFailOpen: true },
    { what: 'an older commit holding packed bodies', pick: () => live.olderCommit, mustFailOpen: false },
    { what: 'a chunk of a live carrier', pick: () => live.chunk, mustFailOpen: false },
  ];

  it.each(cases)('deleting $what: open or reads fail naming it, verify reports it', async ({ pick, mustFailOpen }) => {
    const { dir, cleanup } = tempDir('missing');
    temps.push(cleanup);
    const work = join(dir, 'repo');
    cpSync(pristine, work, { recursive: true });
    const key = pick();
    unlinkSync(pathOf(work, key));
    const o = await inspect(work);
    expect(o.wrong).toEqual([]);
    if (mustFailOpen) expect(o.openError).toBeDefined();
    else expect(o.readErrors.length, 'some read must notice').toBeGreaterThan(0);
    for (const err of [o.openError, ...o.readErrors.map((e) => e.err)].filter((e) => e !== undefined)) {
      expect(err).toMatchObject({ code: 'MissingBlob' });
      expect(names(err, key), String(err)).toBe(true);
    }
    expect(o.verifyBlobs).toContain(key);
    const r = runCli(work);
    expect(r.status).not.toBe(0);
    expect(r.stdout).toContain(key);
  });

  // Regression: run failures used to escape as ProviderError 'NotFound' (a missing run at
  // open) or IndexError 'ERR_RUN_CORRUPT' (a damaged one at open, GET, LIST) instead of the
  // StoreError codes the S3 layer maps.
  it('deleting a live run: open fails with StoreError MissingBlob naming it', async () => {
    const { dir, cleanup } = tempDir('missing-run');
    temps.push(cleanup);
    const work = join(dir, 'repo');
    cpSync(pristine, work, { recursive: true });
    const key = [...live.runs][0]!;
    unlinkSync(pathOf(work, key));
    const o = await inspect(work);
    expect(o.openError).toMatchObject({ code: 'MissingBlob' });
    expect(names(o.openError, key)).toBe(true);
  });

  it('a flipped byte in a live run surfaces as StoreError Corrupt, never IndexError', async () => {
    const { dir, cleanup } = tempDir('flip-run');
    temps.push(cleanup);
    const work = join(dir, 'repo');
    cpSync(pristine, work, { recursive: true });
    for (const key of live.runs) {
      const path = pathOf(work, key);
      const original = readFileSync(path);
      for (const at of [HEADER_BYTES, original.length - 1]) {
        const damaged = Buffer.from(original);
        damaged[at] ^= 0xff;
        writeFileSync(path, damaged);
        const o = await inspect(work);
        for (const err of [o.openError, ...o.readErrors.map((e) => e.err)].filter((e) => e !== undefined)) {
          expect(names(err, key), String(err)).toBe(true);
        }
        writeFileSync(path, original);
      }
    }
  });
});
