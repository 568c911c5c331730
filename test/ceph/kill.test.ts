/**
 * SIGKILL on Ceph RGW: a child process (kill-worker.ts) writes small bodies, multi-MiB carriers
 * and overwrites of hot keys into a repository kept in RGW, with checkpoints every few commits,
 * and is killed at a random moment; three times on one repository, so later kills land on
 * state recovered from earlier ones. After each kill the repository is reopened here, and:
 *   - every acknowledged put is there, byte-exact (unless a later put of the same key was in
 *     flight, which may have replaced it: then it holds one of the two);
 *   - a put in flight at the kill shows its old value or its new one, nothing else;
 *   - the repository verifies clean.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createS3Provider, type S3Provider } from '../../src/provider/s3/index.js';
import { StoreError } from '../../src/store/errors.js';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { bundleEntry } from '../soak/bundle.js';
import { prng, randInt } from '../support/random.js';
import { CEPH_START_TIMEOUT_MS, cephSuite, startCeph, type RunningCeph } from '../support/ceph.js';
import { bodyOf, BUCKET } from './kill-body.js';

interface Line {
  t: string;
  n?: number;
  key?: string;
  size?: number;
  seed?: number;
  message?: string;
}

/** A value of a key: the (size, seed) of the put that wrote it. */
type Value = { size: number; seed: number };

const PREFIX = 'killrepo/';
let ceph: RunningCeph | undefined;
let worker: Awaited<ReturnType<typeof bundleEntry>> | undefined;
const opened: S3Provider[] = [];

async function provider(): Promise<S3Provider> {
  const p = await createS3Provider({
    endpoint: ceph!.endpoint,
    bucket: ceph!.bucket,
    prefix: PREFIX,
    accessKeyId: ceph!.accessKeyId,
    secretAccessKey: ceph!.secretAccessKey,
    conditionalWrites: 'probe',
  });
  opened.push(p);
  return p;
}

/** Runs the worker and SIGKILLs it `killAfterMs` after it is ready; returns its lines. */
function runAndKill(seed: number, killAfterMs: number): Promise<Line[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [worker!.path, ceph!.bucket, PREFIX, String(seed)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        S3_ENDPOINT: ceph!.endpoint,
        AWS_ACCESS_KEY_ID: ceph!.accessKeyId,
        AWS_SECRET_ACCESS_KEY: ceph!.secretAccessKey,
      },
    });
    let buf = '';
    let stderr = '';
    const lines: Line[] = [];
    let timer: NodeJS.Timeout | undefined;
    const guard = setTimeout(() => child.kill('SIGKILL'), 90_000);
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
      else resolve(lines);
    });
  });
}

async function readKey(store: Store, key: string): Promise<Buffer | undefined> {
  try {
    const parts: Uint8Array[] = [];
    for await (const c of (await store.getObject(BUCKET, key)).body) parts.push(c);
    return Buffer.concat(parts);
  } catch (err) {
    if (err instanceof StoreError && err.code === 'NoSuchKey') return undefined;
    throw err;
  }
}

cephSuite.describe('SIGKILL of a writer on Ceph RGW', () => {
  beforeAll(async () => {
    [ceph, worker] = await Promise.all([
      startCeph(),
      bundleEntry(fileURLToPath(new URL('./kill-worker.ts', import.meta.url)), 'ceph-kill'),
    ]);
  }, CEPH_START_TIMEOUT_MS);
  afterAll(async () => {
    for (const p of opened) await p.close().catch(() => {});
    await worker?.remove();
    await ceph?.stop();
  }, 120_000);

  it('keeps every acknowledged put byte-exact across three kills', async () => {
    const next = prng(1010);
    /** What each key must hold: its last acknowledged value (undefined: absent). */
    const model = new Map<string, Value | undefined>();
    let acked = 0;
    let inflightSeen = 0;
    for (let iteration = 0; iteration < 3; iteration++) {
      const lines = await runAndKill(iteration + 1, randInt(next, 2000, 5000));
      const starts = new Map<number, Line>();
      const errors: Line[] = [];
      for (const l of lines) {
        if (l.t === 'fatal' || l.t === 'error') errors.push(l);
        if (l.t === 'start') starts.set(l.n!, l);
        if (l.t === 'ack') {
          const s = starts.get(l.n!)!;
          starts.delete(l.n!);
          model.set(s.key!, { size: s.size!, seed: s.seed! });
          acked++;
        }
      }
      expect(errors).toEqual([]);
      // Puts still in flight, by key: each may or may not have landed.
      const inflight = new Map<string, Value[]>();
      for (const s of starts.values()) {
        const list = inflight.get(s.key!) ?? [];
        list.push({ size: s.size!, seed: s.seed! });
        inflight.set(s.key!, list);
      }
      inflightSeen += starts.size;

      const store = await Store.open(await provider());
      for (const key of new Set([...model.keys(), ...inflight.keys()])) {
        const got = await readKey(store, key);
        const allowed = [model.get(key), ...(inflight.get(key) ?? [])];
        const same = (v: Value | undefined): boolean =>
          v === undefined ? got === undefined : got !== undefined && got.equals(bodyOf(v.size, v.seed));
        const index = allowed.findIndex(same);
        expect(
          index,
          `${key} after kill ${iteration + 1}: ${got === undefined ? 'absent' : `${got.length} bytes`} ` +
            `matches none of ${JSON.stringify(allowed)}`
        ).toBeGreaterThanOrEqual(0);
        const match = allowed[index];
        model.set(key, match); // what it holds now is what later iterations start from
      }
      await store.close();
      const report = await verifyRepository(await provider());
      expect(report.problems).toEqual([]);
    }
    expect(acked).toBeGreaterThan(30); // the kills landed on a busy writer
    console.log(`ceph kill: ${acked} acknowledged puts over 3 kills, ${inflightSeen} in flight at the kills`);
  }, 240_000);
});
