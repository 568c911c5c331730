/**
 * Kill -9 during multipart traffic (uploads-kill-worker.ts), with checkpoints every 25 commits
 * or 16 KiB of overlay and uploads-keyspace compactions every few checkpoints, three kills on
 * one directory (later kills land on state recovered from earlier ones). After each kill the
 * directory is reopened in this process and must show, from the worker's log:
 *   - every upload whose create was acknowledged and that was not being ended: listed, with
 *     every acknowledged part (by ETag); an upload whose abort or Complete was acknowledged:
 *     not listed; nothing listed that was never created (bar a create in flight);
 *   - every acknowledged Complete (or one in flight whose upload is gone) answers a retry with
 *     the same ETag: completion records survive the crash;
 *   - the bucket's count of uploads in progress equals what is listed; verify is clean.
 * Then every upload left open is aborted, so the next worker starts from a known state.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleEntry } from '../soak/bundle.js';
import { openStore } from '../../src/store/open.js';
import { etagOf } from '../../src/store/records.js';
import { verifyRepository } from '../../src/store/verify.js';
import { prng, randInt } from '../support/random.js';
import { tempDir } from './helpers.js';

const BUCKET = 'killed-uploads';

interface Upload {
  key: string;
  /** open; ending: abort/Complete started, not settled; gone: abort acked; completed: Complete acked. */
  state: 'open' | 'ending' | 'gone' | 'completed';
  ending?: 'abort' | 'complete';
  parts: Map<number, string>;
  /** Part numbers with an upload in flight. */
  inflight: Set<number>;
  completion?: { parts: { partNumber: number; etag: string }[]; etag?: string };
}

interface Line {
  t: string;
  n?: number;
  op?: string;
  key?: string;
  id?: string;
  part?: number;
  etag?: string;
  parts?: { partNumber: number; etag: string }[];
  event?: string;
  message?: string;
}

let worker: Awaited<ReturnType<typeof bundleEntry>>;
const temps: (() => void)[] = [];
beforeAll(async () => {
  worker = await bundleEntry(fileURLToPath(new URL('./uploads-kill-worker.ts', import.meta.url)), 'uploads-kill');
});
afterAll(async () => {
  for (const c of temps.splice(0)) c();
  await worker?.remove();
});

/** Runs the worker until `killAfterMs` after it is ready, then SIGKILLs it; returns its lines. */
function runAndKill(dir: string, seed: number, iteration: number, killAfterMs: number): Promise<{ lines: Line[]; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [worker.path, dir, String(seed), String(iteration)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    let stderr = '';
    const lines: Line[] = [];
    let timer: NodeJS.Timeout | undefined;
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      const parts = (buf + d.toString()).split('\n');
      buf = parts.pop()!; // a partial last line was never complete: ignored
      for (const raw of parts) {
        if (!raw) continue;
        const line = JSON.parse(raw) as Line;
        lines.push(line);
        if (line.t === 'ready' && !timer) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      }
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      clearTimeout(guard);
      clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`worker exited by itself (${signal}): ${stderr}`));
      else resolve({ lines, killed: true });
    });
  });
}

/** What the log says about each upload. */
function model(lines: Line[]): { uploads: Map<string, Upload>; creating: Map<string, number>; problems: string[]; acked: number } {
  const uploads = new Map<string, Upload>();
  // Creates in flight per key: two lanes may create uploads of the same key at once, and the
  // first one's ack must not hide the second (durable, unacknowledged) from the model.
  const creating = new Map<string, number>();
  const starts = new Map<number, Line>();
  const problems: string[] = [];
  let acked = 0;
  for (const l of lines) {
    if (l.t === 'fatal') problems.push(`worker died: ${l.message}`);
    // Routine events: checkpoints, compactions, and commit log rolls (one at every open).
    if (l.t === 'event' && !['checkpoint', 'compaction', 'commitlog.rolled'].includes(String(l.event))) problems.push(`event ${l.event}: ${JSON.stringify(l)}`);
    if (l.t === 'start') {
      starts.set(l.n!, l);
      const u = l.id ? uploads.get(l.id) : undefined;
      if (l.op === 'create') creating.set(l.key!, (creating.get(l.key!) ?? 0) + 1);
      else if (l.op === 'part') u!.inflight.add(l.part!);
      else if (l.op === 'abort' || l.op === 'complete') {
        u!.state = 'ending';
        u!.ending = l.op;
        if (l.op === 'complete') u!.completion = { parts: l.parts! };
      }
    }
    if (l.t === 'ack' || l.t === 'error') {
      const s = starts.get(l.n!)!;
      const ok = l.t === 'ack';
      if (ok) acked++;
      if (!ok) problems.push(`${s.op} failed: ${JSON.stringify(l)}`);
      const u = s.id ? uploads.get(s.id) : undefined;
      if (s.op === 'create') {
        const n = (creating.get(s.key!) ?? 0) - 1;
        if (n > 0) creating.set(s.key!, n);
        else creating.delete(s.key!);
        if (ok) uploads.set(l.id!, { key: s.key!, state: 'open', parts: new Map(), inflight: new Set() });
      } else if (s.op === 'part') {
        u!.inflight.delete(s.part!);
        if (ok) u!.parts.set(s.part!, l.etag!);
      } else if (s.op === 'abort') u!.state = ok ? 'gone' : 'open';
      else if (s.op === 'complete') {
        u!.state = ok ? 'completed' : 'open';
        if (ok) u!.completion!.etag = l.etag!;
      } else if (s.op === 'retry' && ok && l.etag !== u!.completion?.etag) problems.push(`retry of ${s.id} answered ${l.etag}, not ${u!.completion?.etag}`);
    }
  }
  return { uploads, creating, problems, acked };
}

describe('kill -9 during multipart traffic', () => {
  it('keeps exactly the acknowledged uploads, parts and completions (3 kills, one directory)', async () => {
    const { dir, cleanup } = tempDir('uploads-kill');
    temps.push(cleanup);
    const repo = `${dir}/repo`;
    const seeds = prng(2026);
    let checkpoints = 0;
    let compactions = 0;
    let checkedOpen = 0;
    let checkedCompleted = 0;
    for (let iteration = 0; iteration < 3; iteration++) {
      const { lines } = await runAndKill(repo, seeds(), iteration, randInt(seeds, 700, 1500));
      checkpoints += lines.filter((l) => l.event === 'checkpoint').length;
      compactions += lines.filter((l) => l.event === 'compaction').length;
      const m = model(lines);
      expect(m.problems).toEqual([]);
      expect(m.acked).toBeGreaterThan(20);
      const store = await openStore(repo);
      try {
        const listed = new Map<string, string>();
        let keyMarker: string | undefined;
        let uploadIdMarker: string | undefined;
        for (;;) {
          const page = await store.listMultipartUploads(BUCKET, { maxUploads: 50, ...(keyMarker ? { keyMarker } : {}), ...(uploadIdMarker ? { uploadIdMarker } : {}) });
          for (const u of page.uploads) listed.set(u.uploadId, u.key);
          if (!page.isTruncated) break;
          keyMarker = page.nextKeyMarker;
          uploadIdMarker = page.nextUploadIdMarker;
        }
        expect(store.repo.state.buckets.get(BUCKET)!.uploads.count).toBe(listed.size);
        for (const [id, key] of listed) {
          const u = m.uploads.get(id);
          if (!u) expect(m.creating.has(key), `${id} of ${key} listed but never created`).toBe(true);
          else expect(['open', 'ending'], `${id} (${u.state}) listed`).toContain(u.state);
        }
        for (const [id, u] of m.uploads) {
          const isListed = listed.has(id);
          if (u.state === 'open') expect(isListed, `open upload ${id} of ${u.key} is gone`).toBe(true);
          if (u.state === 'gone' || u.state === 'completed') expect(isListed, `ended upload ${id} is listed`).toBe(false);
          if (isListed) {
            checkedOpen++;
            const parts = new Map((await store.listParts(BUCKET, u.key, id)).parts.map((p) => [p.partNumber, p.etag]));
            for (const [n, etag] of u.parts) if (!u.inflight.has(n)) expect(parts.get(n), `part ${n} of ${id}`).toBe(etag);
            for (const n of parts.keys()) expect(u.parts.has(n) || u.inflight.has(n), `part ${n} of ${id} never uploaded`).toBe(true);
          }
          const completedForSure = u.state === 'completed' || (u.state === 'ending' && u.ending === 'complete' && !isListed);
          if (completedForSure) {
            checkedCompleted++;
            const again = await store.completeMultipartUpload(BUCKET, u.key, id, u.completion!.parts);
            if (u.completion!.etag) expect(etagOf(again)).toBe(u.completion!.etag);
          }
        }
        const report = await verifyRepository(store.repo.provider);
        expect(report.problems).toEqual([]);
        for (const [id, key] of listed) await store.abortMultipartUpload(BUCKET, key, id);
        expect(store.repo.state.buckets.get(BUCKET)!.uploads.count).toBe(0);
      } finally {
        await store.close();
      }
    }
    // The kills landed on a keyspace that was being checkpointed and compacted.
    expect(checkpoints).toBeGreaterThan(3);
    expect(compactions).toBeGreaterThan(0);
    expect(checkedOpen).toBeGreaterThan(5);
    expect(checkedCompleted).toBeGreaterThan(2);
  }, 180_000);
});
