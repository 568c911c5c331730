/**
 * GC killed midway (SIGKILL, gc-kill-worker.ts) loses nothing: a repository whose commit
 * blobs mix bodies of a kept bucket (with a fork sharing them, SSE-S3 bodies among them) and
 * of a deleted one (packed and carrier bodies) is collected by passes that are SIGKILLed
 * during pack cleaning (before, between and after its re-pointing commits) and during the
 * sweep, several times on one directory, each pass starting from what the killed ones left.
 * After every kill the repository opens, verifies clean and every kept object (bucket and
 * fork) reads back byte-exact; two final passes run to the end and leave it the same.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleEntry } from '../soak/bundle.js';
import { openStore } from '../../src/store/open.js';
import { verifyRepository } from '../../src/store/verify.js';
import type { Store } from '../../src/store/store.js';
import type { KeyRing } from '../../src/store/crypto/envelope.js';
import { randomBytes } from '../support/random.js';
import { expectBytes } from '../support/bytes.js';
import { runKillable } from './kill-run.js';
import { collect, stream, tempDir } from './helpers.js';

const KEPT = 1000;
const ROOT = Buffer.from(randomBytes(32, 77));
const KEYS: KeyRing = { sseS3: ROOT };
const bodyOf = (i: number) => randomBytes(100 + (i % 300), i + 1);
const encrypted = (i: number) => i % 7 === 0;

let worker: Awaited<ReturnType<typeof bundleEntry>>;
const temps: (() => void)[] = [];
beforeAll(async () => {
  worker = await bundleEntry(fileURLToPath(new URL('./gc-kill-worker.ts', import.meta.url)), 'gc-kill');
});
afterAll(async () => {
  for (const c of temps.splice(0)) c();
  await worker?.remove();
});

interface Line {
  t: string;
  phase?: string;
  message?: string;
  freedBlobs?: number;
  cleanedPacks?: number;
}

/** Runs one pass; SIGKILLs it `delayMs` after its first event of `phase` (never, if undefined). */
function run(dir: string, phase: string | undefined, delayMs = 0): Promise<{ lines: Line[]; killed: boolean }> {
  let armed = false;
  return runKillable<Line>(worker.path, [dir], (line, kill) => {
    if (phase && !armed && line.phase === phase) {
      armed = true;
      if (delayMs === 0) kill();
      else setTimeout(kill, delayMs);
    }
  });
}

async function expectKept(store: Store, label: string): Promise<void> {
  for (const bucket of ['kept', 'kept-fork']) {
    for (let i = 0; i < KEPT; i++) {
      const got = await store.getObject(bucket, `k${i}`, encrypted(i) ? { keys: KEYS } : {});
      expectBytes(await collect(got.body), bodyOf(i), `${label}: ${bucket}/k${i}`);
    }
  }
}

describe('kill -9 during GC', () => {
  it('loses nothing when killed during pack cleaning and during the sweep', async () => {
    const { dir, cleanup } = tempDir('gc-kill');
    temps.push(cleanup);
    const repo = `${dir}/repo`;
    // Commit blobs: pack cleaning relocates live bodies out of them (commit log segments are
    // not cleaned, only swept once nothing in them is reachable: gc-sweep.ts).
    let store = await openStore(repo, { commitLog: false });
    await store.createBucket('kept');
    await store.createBucket('gone');
    // Kept and deleted bodies share commit blobs: cleaning has plenty to move.
    for (let i = 0; i < KEPT; i += 250) {
      await Promise.all(
        Array.from({ length: 250 }, async (_, j) => {
          const n = i + j;
          const b = bodyOf(n);
          await store.putObject('kept', `k${n}`, stream(b), { size: b.length, ...(encrypted(n) ? { encryption: { mode: 'sse-s3' as const, root: ROOT } } : {}) });
          const g = randomBytes(n % 50 === 0 ? 600 * 1024 : 900, n + 9999);
          await store.putObject('gone', `g${n}`, stream(g), { size: g.length });
        })
      );
    }
    await store.forkBucket('kept', 'kept-fork');
    for (let i = 0; i < KEPT; i += 1000) await store.deleteObjects('gone', Array.from({ length: 1000 }, (_, j) => `g${i + j}`));
    await store.deleteBucket('gone');
    await store.checkpoint();
    await store.close();

    const outcomes: string[] = [];
    for (const [phase, delay] of [['clean', 0], ['clean', 30], ['sweep', 0], ['clean', 80], ['sweep', 15]] as const) {
      const { lines, killed } = await run(repo, phase, delay);
      expect(lines.find((l) => l.t === 'fatal')?.message).toBeUndefined();
      const last = lines.filter((l) => l.t === 'progress').at(-1);
      outcomes.push(killed ? `killed in ${last?.phase ?? 'start'}` : 'finished');
      store = await openStore(repo, { create: false });
      expect((await verifyRepository(store.repo.provider)).problems, `after ${phase}+${delay}`).toEqual([]);
      await expectKept(store, `after a kill in ${phase}+${delay}ms`);
      await store.close();
    }
    console.log(`gc-kill: ${outcomes.join(', ')}`);
    expect(outcomes.filter((o) => o === 'killed in clean').length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o === 'killed in sweep').length).toBeGreaterThan(0);

    const final = await run(repo, undefined);
    expect(final.lines.at(-1)).toMatchObject({ t: 'done' });
    const again = await run(repo, undefined);
    expect(again.lines.at(-1)).toMatchObject({ t: 'done' });
    store = await openStore(repo, { create: false });
    expect((await verifyRepository(store.repo.provider)).problems).toEqual([]);
    await expectKept(store, 'at the end');
    await store.close();
  }, 240_000);
});
