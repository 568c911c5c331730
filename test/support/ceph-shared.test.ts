/**
 * The coordination of the shared Ceph cluster (test/support/ceph-shared.ts) with a stand-in
 * cluster (a directory whose "daemon" is a sleep process, stopped by the real stop-ceph.sh):
 * concurrent files start it once and share it; a failed start fails every file with the same
 * error without retrying; a lock left by a dead starter is taken over; the teardown stops the
 * daemon and removes both directories; the watchdog does the same when the owner dies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sharedCephCluster, stopSharedCeph, type SharedInfo } from './ceph-shared.js';

const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const f of cleanup.splice(0)) f();
});

function tempDir(name: string): string {
  const d = mkdtempSync(join(tmpdir(), `strata-ceph-shared-test-${name}-`));
  cleanup.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

function sleeper(): ChildProcess {
  const p = spawn('sleep', ['300'], { stdio: 'ignore' });
  cleanup.push(() => p.kill('SIGKILL'));
  return p;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function exited(p: ChildProcess): boolean {
  return p.exitCode !== null || p.signalCode !== null || !alive(p.pid!);
}

async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return cond();
}

/** A stand-in cluster: a directory laid out like start-ceph.sh's with a live "rgw" daemon. */
interface FakeStarter {
  start: () => Promise<SharedInfo>;
  starts: () => number;
  daemon: () => ChildProcess;
}

function fakeStarter(): FakeStarter {
  let n = 0;
  let daemon: ChildProcess | undefined;
  return {
    starts: () => n,
    daemon: () => daemon!,
    start: async () => {
      n++;
      await new Promise((r) => setTimeout(r, 300));
      const dir = tempDir('cluster');
      mkdirSync(join(dir, 'run'));
      daemon = sleeper();
      writeFileSync(join(dir, 'run', 'rgw.gw.pid'), String(daemon.pid));
      return { endpoint: 'http://127.0.0.1:1', accessKeyId: 'AK', secretAccessKey: 'SK', dir };
    },
  };
}

describe('shared Ceph cluster coordination', () => {
  it('concurrent files start one cluster and share it; teardown stops and removes it', async () => {
    const run = join(tempDir('run'), 'r');
    const fake = fakeStarter();
    const got = await Promise.all(
      [1, 2, 3].map(() => sharedCephCluster(run, process.pid, fake.start))
    );
    expect(fake.starts()).toBe(1);
    expect(new Set(got.map((g) => g.dir)).size).toBe(1);
    // a later file reuses it too
    expect((await sharedCephCluster(run, process.pid, fake.start)).dir).toBe(got[0].dir);
    expect(fake.starts()).toBe(1);
    const daemon = fake.daemon();
    expect(alive(daemon.pid!)).toBe(true);

    await stopSharedCeph(run);
    expect(await until(() => exited(daemon), 5000)).toBe(true);
    expect(existsSync(got[0].dir)).toBe(false);
    expect(existsSync(run)).toBe(false);
  });

  it('a failed start fails every file with the same error and is not retried', async () => {
    const run = join(tempDir('run'), 'r');
    let starts = 0;
    const start = async (): Promise<SharedInfo> => {
      starts++;
      await new Promise((r) => setTimeout(r, 300));
      throw new Error('start-ceph.sh failed: radosgw died');
    };
    const results = await Promise.allSettled(
      [1, 2].map(() => sharedCephCluster(run, process.pid, start))
    );
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    for (const r of results) {
      expect(String((r as PromiseRejectedResult).reason)).toMatch(/radosgw died/);
    }
    await expect(sharedCephCluster(run, process.pid, start)).rejects.toThrow(/radosgw died/);
    expect(starts).toBe(1);
    await stopSharedCeph(run); // nothing started: only removes the directory
    expect(existsSync(run)).toBe(false);
  });

  it('takes over the lock of a starter that died', async () => {
    const run = join(tempDir('run'), 'r');
    const dead = spawn('true');
    await new Promise((r) => dead.once('exit', r));
    mkdirSync(join(run, 'lock'), { recursive: true });
    writeFileSync(join(run, 'lock', 'pid'), String(dead.pid));
    const fake = fakeStarter();
    const info = await sharedCephCluster(run, process.pid, fake.start);
    expect(fake.starts()).toBe(1);
    expect(existsSync(info.dir)).toBe(true);
    await stopSharedCeph(run);
    expect(existsSync(info.dir)).toBe(false);
  });

  it('the watchdog stops the cluster and removes the run dir when the owner dies', async () => {
    const run = join(tempDir('run'), 'r');
    const owner = sleeper();
    const fake = fakeStarter();
    const info = await sharedCephCluster(run, owner.pid!, fake.start);
    const daemon = fake.daemon();
    owner.kill('SIGKILL');
    expect(await until(() => !existsSync(run) && !existsSync(info.dir), 15_000)).toBe(true);
    expect(exited(daemon)).toBe(true);
  }, 30_000);
});
