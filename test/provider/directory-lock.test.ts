/**
 * The repository lock against dead owners that still look alive to `kill(pid, 0)`.
 *
 * Regression (issue 8 §7): a server SIGKILLed under load and restarted at once was refused
 * with "locked by pid N": N was a zombie (killed, not yet reaped by its parent), which
 * `kill(N, 0)` reports as existing. A reused pid (another process now running under the
 * dead owner's pid) had the same effect. Both are now stale; a live owner still locks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireDirectoryLock, makeDirectory } from '../../src/provider/fs/directory-lock.js';
import { isProcessAlive, ownStamp } from '../../src/provider/fs/process-identity.js';
import { bundleScript } from './bundle.js';
import { expectCode } from './helpers.js';

const linux = process.platform === 'linux';
const roots: string[] = [];
const children: ChildProcess[] = [];
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'strata-lock-'));
  roots.push(dir);
  return dir;
}
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const dir of roots) await rm(dir, { recursive: true, force: true });
});

let lockChild = '';
beforeAll(async () => {
  lockChild = await bundleScript(fileURLToPath(new URL('./fs-child.ts', import.meta.url)));
  roots.push(join(lockChild, '..'));
});

function procState(pid: number): string | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return s.slice(s.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function signalSaysAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function writeLock(dir: string, owner: Record<string, unknown>): Promise<void> {
  await writeFile(
    join(dir, 'LOCK'),
    JSON.stringify({ host: hostname(), nonce: 'n0', time: Date.now(), ...owner })
  );
}

describe.runIf(linux)('directory lock: dead owners that kill(pid, 0) calls alive', () => {
  it('takes over the lock of a killed owner that is still an unreaped zombie', async () => {
    const dir = await freshDir();
    // sh starts the lock holder in the background, prints its pid, then becomes `sleep`,
    // which never waits for children: once killed, the holder stays a zombie.
    const parent = spawn(
      '/bin/sh',
      ['-c', `"${process.execPath}" "${lockChild}" "${dir}" lock & echo $!; exec sleep 120`],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      }
    );
    children.push(parent);
    let out = '';
    parent.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await until('the holder to take the lock', () => out.includes('locked'));
    const pid = Number(out.split('\n')[0]);
    expect(Number.isInteger(pid) && pid > 0).toBe(true);
    const held = await expectCode(acquireDirectoryLock(dir), 'Locked');
    expect(held.message).toContain(`pid ${pid}`);

    process.kill(pid, 'SIGKILL');
    await until('the holder to become a zombie', () => procState(pid) === 'Z');
    expect(signalSaysAlive(pid)).toBe(true); // the trap: the zombie still answers signal 0
    expect(isProcessAlive(pid)).toBe(false);

    const lock = await acquireDirectoryLock(dir);
    expect(lock.owner.pid).toBe(process.pid);
    await lock.release();
    expect(await readdir(dir)).toEqual([]);
    parent.kill('SIGKILL');
  });

  it('treats a pid reused by a process started at another time as dead, and keeps a matching one locked', async () => {
    const dir = await freshDir();
    const other = spawn('sleep', ['120'], { stdio: 'ignore' });
    children.push(other);
    await until('sleep to start', () => procState(other.pid!) !== undefined);
    const stat = readFileSync(`/proc/${other.pid}/stat`, 'latin1');
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
    const { boot } = ownStamp();

    // The recorded owner started at the same tick as the live process: it IS that process.
    await writeLock(dir, { pid: other.pid, start, boot });
    await expectCode(acquireDirectoryLock(dir), 'Locked');
    // Same pid, another start time: the owner died and its pid went to someone else.
    await writeLock(dir, { pid: other.pid, start: String(BigInt(start) + 1n), boot });
    const lock = await acquireDirectoryLock(dir);
    await lock.release();
    // A lock written during an earlier boot is dead whatever its pid shows today.
    await writeLock(dir, {
      pid: process.pid,
      start: ownStamp().start,
      boot: '00000000-0000-0000-0000-000000000000',
    });
    await (await acquireDirectoryLock(dir)).release();
    other.kill('SIGKILL');
  });

  it('records its own start time and boot id, and still honours records written without them', async () => {
    const dir = await freshDir();
    const lock = await acquireDirectoryLock(dir);
    expect(lock.owner.start).toMatch(/^\d+$/);
    expect(lock.owner.boot).toMatch(/^[0-9a-f-]{36}$/);
    await lock.release();
    // An older record (no stamp) of a live process: still locked.
    await writeLock(dir, { pid: process.pid });
    await expectCode(acquireDirectoryLock(dir), 'Locked');
    // Pids that can name no single process: stale.
    for (const pid of [0, -1]) {
      await writeLock(dir, { pid });
      await (await acquireDirectoryLock(dir)).release();
    }
  });
});

describe('makeDirectory', () => {
  it('creates missing parents and fails at once, not in a loop, where mkdir cannot work', async () => {
    const dir = await freshDir();
    await makeDirectory(join(dir, 'a', 'b', 'c'));
    expect(await readdir(join(dir, 'a', 'b'))).toEqual(['c']);
    await makeDirectory(join(dir, 'a', 'b', 'c')); // exists: fine
    await writeFile(join(dir, 'file'), 'x');
    await expect(makeDirectory(join(dir, 'file', 'sub'))).rejects.toMatchObject({
      code: 'ENOTDIR',
    });
    if (linux) {
      // Node's mkdir({ recursive: true }) spins forever here (ENOENT under an existing parent).
      const t0 = Date.now();
      await expect(makeDirectory('/proc/strata-not-here/x')).rejects.toMatchObject({
        code: 'ENOENT',
      });
      await expectCode(acquireDirectoryLock('/proc/strata-not-here'), 'Io');
      expect(Date.now() - t0).toBeLessThan(2000);
    }
  });
});
