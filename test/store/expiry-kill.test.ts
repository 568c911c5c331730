/**
 * Expiry killed midway (SIGKILL, expiry-kill-worker.ts, checkpoints every 4 commits) and run
 * again: after every kill the repository opens and verifies clean, what S3 shows (every
 * object's body, every listed version) is exactly what it was before expiry, as-of reads at
 * the first readable time agree, and the log only shrinks; a last run converges to exactly the
 * entries the rule keeps (window 0: the current writes and the listed versions), and a
 * further run drops nothing.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleEntry } from '../soak/bundle.js';
import { openStore } from '../../src/store/open.js';
import { verifyRepository } from '../../src/store/verify.js';
import { mergeSources } from '../../src/store/index/merge.js';
import { isLogTombstone } from '../../src/store/version-log.js';
import { readableRange } from '../../src/store/history-window.js';
import { runKillable } from './kill-run.js';
import { collect, tempDir } from './helpers.js';
import { putText } from './history-model.js';
import type { Store } from '../../src/store/store.js';

const PLAIN = 'killed-plain';
const VERS = 'killed-vers';
const KEYS = 40;
const ROUNDS = 120;

let worker: Awaited<ReturnType<typeof bundleEntry>>;
const temps: (() => void)[] = [];
beforeAll(async () => {
  worker = await bundleEntry(fileURLToPath(new URL('./expiry-kill-worker.ts', import.meta.url)), 'expiry-kill');
});
afterAll(async () => {
  for (const c of temps.splice(0)) c();
  await worker?.remove();
});

interface Line {
  t: string;
  expired?: number;
  message?: string;
}

/** Runs the worker; SIGKILLs it once it reports `killAfter` entries expired (never, if undefined). */
function run(dir: string, killAfter: number | undefined): Promise<{ lines: Line[]; killed: boolean }> {
  return runKillable<Line>(worker.path, [dir, '0'], (line, kill) => {
    if (killAfter !== undefined && line.t === 'progress' && (line.expired ?? 0) >= killAfter) kill();
  });
}

const key = (i: number) => `k/${String(i).padStart(3, '0')}`;

/** What S3 shows: every object's body, every listed version or marker of both buckets. */
async function s3View(store: Store): Promise<unknown> {
  const out: Record<string, unknown> = {};
  for (const b of [PLAIN, VERS]) {
    const page = await store.listObjects(b, { maxKeys: 1000 });
    for (const c of page.contents) out[`${b}/${c.key}`] = Buffer.from(await collect((await store.getObject(b, c.key)).body)).toString();
    const vs = await store.listVersions(b, { maxKeys: 1000 });
    out[`${b} versions`] = vs.versions.map((v) => `${v.key}@${v.versionId}${v.version.deleteMarker ? ' marker' : ''}`);
  }
  return out;
}

async function logSize(store: Store, bucket: string): Promise<number> {
  const it = mergeSources(store.repo.state.buckets.get(bucket)!.versions.sources());
  let n = 0;
  for (;;) {
    const r = await it.next();
    if (r.done) return n;
    if (!isLogTombstone(r.value.value)) n++;
  }
}

/** As-of reads at the first readable time equal the current bodies (window 0 after expiry). */
async function asOfAgrees(store: Store, view: Record<string, unknown>): Promise<void> {
  const b = store.repo.state.buckets.get(PLAIN)!;
  const from = readableRange(store.repo, b).from;
  for (let i = 0; i < KEYS; i += 7) {
    const got = Buffer.from(await collect((await store.getObject(PLAIN, key(i), { asOf: from })).body)).toString();
    expect(got).toBe(view[`${PLAIN}/${key(i)}`]);
  }
}

describe('kill -9 during expiry', () => {
  it('leaves a consistent repository after each kill, and re-runs converge to exactly what the rule keeps', async () => {
    const { dir, cleanup } = tempDir('expiry-kill');
    temps.push(cleanup);
    const repo = `${dir}/repo`;
    let store = await openStore(repo);
    await store.createBucket(PLAIN);
    for (let r = 0; r < ROUNDS; r++) await Promise.all(Array.from({ length: KEYS }, (_, i) => putText(store, PLAIN, key(i), `r${r} ${i}`)));
    await store.createBucket(VERS);
    await store.putVersioning(VERS, 'Enabled');
    const ids: string[][] = [];
    for (let i = 0; i < 10; i++) {
      ids.push([]);
      for (let v = 0; v < 20; v++) ids[i]!.push((await putText(store, VERS, key(i), `v${v} ${i}`)).versionId);
    }
    for (let i = 0; i < 10; i++) for (const id of ids[i]!.slice(5, 16)) await store.removeVersion(VERS, key(i), id);
    const before = await s3View(store);
    let size = (await logSize(store, PLAIN)) + (await logSize(store, VERS));
    expect(size).toBe(KEYS * ROUNDS + 200);
    await store.close();

    let midway = 0;
    for (const killAt of [1000, 1000, 2000]) {
      const { lines, killed } = await run(repo, killAt);
      expect(lines.find((l) => l.t === 'fatal')?.message).toBeUndefined();
      expect(killed).toBe(true);
      // A frozen clock: with window 0 the readable range is one instant, which must not move mid-check.
      const t = Date.now();
      store = await openStore(repo, { create: false, retentionMs: 0, now: () => t });
      const report = await verifyRepository(store.repo.provider);
      expect(report.problems).toEqual([]);
      expect(report.ok).toBe(true);
      expect(await s3View(store)).toEqual(before);
      await asOfAgrees(store, before as Record<string, unknown>);
      const now = (await logSize(store, PLAIN)) + (await logSize(store, VERS));
      expect(now).toBeLessThan(size);
      if (now > KEYS + 90) midway++;
      size = now;
      await store.close();
    }
    expect(midway).toBeGreaterThan(0);
    const last = await run(repo, undefined);
    expect(last.lines.at(-1)).toMatchObject({ t: 'done' });
    store = await openStore(repo, { create: false, retentionMs: 0 });
    expect(await s3View(store)).toEqual(before);
    // Window 0: each plain key's current write, and the versions S3 lists (9 per key).
    expect(await logSize(store, PLAIN)).toBe(KEYS);
    expect(await logSize(store, VERS)).toBe(90);
    expect((await store.expireHistory()).expired).toBe(0);
    await store.close();
    const v = await verifyRepository((await openStore(repo, { create: false })).repo.provider);
    expect(v.ok).toBe(true);
  }, 180_000);
});
