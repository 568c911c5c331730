/**
 * The fs provider against the shared contract, plus what only a directory has:
 * cross-process conditional puts, the repository lock, temp-file hygiene, layout.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireDirectoryLock, createFsProvider } from '../../src/provider/fs/index.js';
import { keyLockPath } from '../../src/provider/fs/key-lock.js';
import { keyPath } from '../../src/provider/fs/key-path.js';
import { bundleScript } from './bundle.js';
import { runProviderContract } from './contract.js';
import { expectCode, readAll } from './helpers.js';

const roots: string[] = [];
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'strata-fs-'));
  roots.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of roots) await rm(dir, { recursive: true, force: true });
});

runProviderContract({
  name: 'fs',
  create: async () => createFsProvider({ dir: await freshDir() }),
  etagPerWrite: true,
});

// Exclusive mode (the repository holds the directory lock): in-memory key locks, cached
// directories, etags and read handles must keep exactly the same contract.
runProviderContract({
  name: 'fs (exclusive)',
  create: async () => createFsProvider({ dir: await freshDir(), exclusive: true }),
  etagPerWrite: true,
});

let child = '';
beforeAll(async () => {
  child = await bundleScript(fileURLToPath(new URL('./fs-child.ts', import.meta.url)));
  roots.push(join(child, '..'));
});

/** Starts the helper process; resolves with it once it prints its first line. */
function startChild(
  args: string[]
): Promise<{ child: ChildProcess; first: string; lines: Promise<string[]> }> {
  const proc = fork(child, args, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let resolved = false;
    const lines = new Promise<string[]>((res) =>
      proc.on('exit', () => res(out.trim().split('\n')))
    );
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (!resolved && out.includes('\n')) {
        resolved = true;
        resolve({ child: proc, first: out.split('\n')[0], lines });
      }
    });
    proc.on('error', reject);
    proc.on(
      'exit',
      (code) => !resolved && reject(new Error(`child exited ${code} before reporting`))
    );
  });
}

describe('fs provider', () => {
  it('lays keys out as short hex names, so no key can traverse', async () => {
    expect(keyPath(Buffer.from('../x'))).toEqual({ dirs: [], leaf: '2e2e2f78-b' });
    const long = keyPath(Buffer.from('a'.repeat(40)));
    expect(long.dirs).toEqual(['61'.repeat(16), '61'.repeat(16)]);
    expect(long.leaf).toBe('61'.repeat(8) + '-b');
    const max = keyPath(Buffer.alloc(1024, 0xff));
    expect(max.dirs).toHaveLength(64);
    expect(max.leaf).toBe('-b');
    const dir = await freshDir();
    const p = await createFsProvider({ dir });
    await p.put('../../escape', Buffer.from('x'));
    expect(await readdir(dir)).toEqual(['blobs', 'locks', 'tmp']);
    expect(await readdir(join(dir, 'blobs'))).toEqual([keyPath(Buffer.from('../../escape')).leaf]);
  });

  it('lets exactly one of two processes win a create-if-absent race, every round', async () => {
    const dir = await freshDir();
    const ROUNDS = 30;
    const a = startChild([dir, 'race', 'A', String(ROUNDS)]);
    const b = startChild([dir, 'race', 'B', String(ROUNDS)]);
    const [ca, cb] = await Promise.all([a, b]);
    // Both are ready: release them together.
    ca.child.send('go');
    cb.child.send('go');
    const [la, lb] = await Promise.all([ca.lines, cb.lines]);
    const p = await createFsProvider({ dir });
    for (let round = 0; round < ROUNDS; round++) {
      const ra = la.find((l) => l.startsWith(`${round} `))!.split(' ')[1];
      const rb = lb.find((l) => l.startsWith(`${round} `))!.split(' ')[1];
      expect([ra, rb].sort(), `round ${round}`).toEqual(['PreconditionFailed', 'won']);
      const winner = ra === 'won' ? 'A' : 'B';
      expect((await readAll(p, `race/${round}`)).toString()).toBe(`${winner} ${round}`);
    }
  });

  it('refuses a second holder of the directory lock and recovers from a killed one', async () => {
    const dir = await freshDir();
    const lock = await acquireDirectoryLock(dir);
    await expectCode(acquireDirectoryLock(dir), 'Locked');
    await lock.release();
    await lock.release(); // idempotent

    const { child, first } = await startChild([dir, 'lock']);
    expect(first).toBe('locked');
    const err = await expectCode(acquireDirectoryLock(dir), 'Locked');
    expect(err.message).toContain(`pid ${child.pid}`);
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGKILL');
    await exited;
    const again = await acquireDirectoryLock(dir);
    expect(again.owner.pid).toBe(process.pid);
    await again.release();
    expect(await readdir(dir)).toEqual([]);
  });

  it('ignores temp files of a crashed writer and removes them at the next open', async () => {
    const dir = await freshDir();
    const p = await createFsProvider({ dir });
    await p.put('kept', Buffer.from('k'));
    // A writer that died mid-put (pid 2^22+1 is above Linux's pid_max default, so never alive) …
    const dead = join(dir, 'tmp', `${2 ** 22 + 1}.0123456789abcdef.tmp`);
    await writeFile(dead, 'partial');
    // … a live writer's file in flight, and debris in the blob tree.
    const live = join(dir, 'tmp', `${process.pid}.fedcba9876543210.tmp`);
    await writeFile(live, 'in flight');
    await mkdir(join(dir, 'blobs', 'not-ours'));
    await writeFile(join(dir, 'blobs', 'README'), 'x');
    expect((await p.list()).items.map((i) => i.key)).toEqual(['kept']);
    await createFsProvider({ dir });
    expect((await readdir(join(dir, 'tmp'))).sort()).toEqual([
      `${process.pid}.fedcba9876543210.tmp`,
    ]);
    expect((await p.list()).items.map((i) => i.key)).toEqual(['kept']);
  });

  it('breaks key locks and removes lock debris of dead processes at open', async () => {
    const dir = await freshDir();
    const p = await createFsProvider({ dir });
    const deadPid = 2 ** 22 + 1;
    const lock = keyLockPath(join(dir, 'locks'), Buffer.from('k'));
    await writeFile(
      lock,
      JSON.stringify({ pid: deadPid, host: hostname(), nonce: 'n', time: Date.now() })
    );
    await writeFile(`${lock}.${deadPid}.abcd.new`, '');
    await writeFile(`${lock}.${process.pid}.abcd.new`, ''); // a live process's: kept
    await createFsProvider({ dir });
    expect(await readdir(join(dir, 'locks'))).toEqual([
      `${basename(lock)}.${process.pid}.abcd.new`,
    ]);
    // and a put does not wait for a dead owner's lock either
    await writeFile(
      lock,
      JSON.stringify({ pid: deadPid, host: hostname(), nonce: 'n2', time: Date.now() })
    );
    await p.put('k', Buffer.from('v'), { ifNoneMatch: '*' });
    expect((await readAll(p, 'k')).toString()).toBe('v');
  });

  it('leaves no temp file behind after failed puts and prunes emptied directories', async () => {
    const dir = await freshDir();
    const p = await createFsProvider({ dir });
    await expectCode(p.put('x', Buffer.from('abc'), { contentLength: 4 }), 'LengthMismatch');
    await p.put('x', Buffer.from('abc'));
    await expectCode(p.put('x', Buffer.from('new'), { ifNoneMatch: '*' }), 'PreconditionFailed');
    expect(await readdir(join(dir, 'tmp'))).toEqual([]);
    expect(await readdir(join(dir, 'locks'))).toEqual([]);
    const deep = 'd'.repeat(100);
    await p.put(deep, Buffer.from('deep'));
    expect((await readdir(join(dir, 'blobs'))).length).toBe(2);
    await p.delete(deep);
    expect(await readdir(join(dir, 'blobs'))).toEqual([keyPath(Buffer.from('x')).leaf]);
  });

  // Regression: deleting several blobs of one directory at once made the last deletes fail
  // (their directory fsync raced another delete's pruning of the emptied directory).
  it('deletes many blobs of one directory at once, every delete succeeding', async () => {
    for (const exclusive of [false, true]) {
      const dir = await freshDir();
      const p = await createFsProvider({ dir, exclusive });
      for (let round = 0; round < 20; round++) {
        const keys = Array.from({ length: 8 }, (_, i) => `chunks/0000000000000000${round}-${i}`);
        await Promise.all(keys.map((k) => p.put(k, Buffer.from(k))));
        await Promise.all(keys.map((k) => p.delete(k)));
        for (const k of keys) await expectCode(p.head(k), 'NotFound');
      }
      expect(await readdir(join(dir, 'blobs'))).toEqual([]);
      await p.close();
    }
  });

  it('lists a file too short to be a blob file at size 0 without etags (its reads fail Corrupt) and fails a list with etags; keys deleted meanwhile are skipped', async () => {
    const dir = await freshDir();
    const p = await createFsProvider({ dir });
    const keys = Array.from({ length: 70 }, (_, i) => `k/${String(i).padStart(3, '0')}`); // several list batches
    await Promise.all(keys.map((k) => p.put(k, Buffer.from(k))));
    // Deleted while a list runs: never an error, and every key that stays is listed.
    const gone = keys.filter((_, i) => i % 3 === 0);
    const [listed] = await Promise.all([p.list({ prefix: 'k/', etags: false }), ...gone.map((k) => p.delete(k))]);
    const kept = keys.filter((k) => !gone.includes(k));
    expect(listed.items.map((i) => i.key).filter((k) => kept.includes(k))).toEqual(kept);
    // A blob file cut below its header (not something the provider writes): without etags it
    // is listed at size 0 (never a negative size) beside the others, and reading it says it is
    // damaged; with etags (which reads every header) the listing fails.
    const { dirs, leaf } = keyPath(Buffer.from('k/short'));
    await mkdir(join(dir, 'blobs', ...dirs), { recursive: true });
    await writeFile(join(dir, 'blobs', ...dirs, leaf), Buffer.from('SBLB'));
    const withShort = await p.list({ prefix: 'k/', etags: false });
    expect(withShort.items.map((i) => i.key)).toEqual([...kept, 'k/short'].sort());
    expect(withShort.items.find((i) => i.key === 'k/short')!.size).toBe(0);
    await expectCode(p.read('k/short'), 'Corrupt');
    await expectCode(p.get('k/short'), 'Corrupt');
    await expectCode(p.list({ prefix: 'k/' }), 'Io');
    await p.close();
  });

  it('refuses calls after close', async () => {
    const p = await createFsProvider({ dir: await freshDir() });
    await p.close();
    await expectCode(p.head('x'), 'Io');
  });
});

describe('fs read() fast path', () => {
  for (const exclusive of [false, true]) {
    it(`reads ranges like get(), and never serves a replaced or deleted blob (exclusive=${exclusive})`, async () => {
      const p = await createFsProvider({ dir: await freshDir(), exclusive });
      const a = Buffer.from('0123456789abcdef');
      await p.put('k/blob', a);
      expect(Buffer.from(await p.read!('k/blob'))).toEqual(a);
      expect(Buffer.from(await p.read!('k/blob', { start: 3, end: 6 }))).toEqual(a.subarray(3, 7));
      expect(Buffer.from(await p.read!('k/blob', { start: 10 }))).toEqual(a.subarray(10));
      expect(Buffer.from(await p.read!('k/blob', { start: 10, end: 1000 }))).toEqual(a.subarray(10));
      await expectCode(p.read!('k/blob', { start: 16 }), 'InvalidRange');
      // A caller's buffer, when large enough, receives the bytes (the result is a view of it).
      const into = new Uint8Array(8).fill(0xee);
      const got = await p.read!('k/blob', { start: 2, end: 5 }, into);
      expect(Buffer.from(got)).toEqual(a.subarray(2, 6));
      expect(got.buffer).toBe(into.buffer);
      expect(Buffer.from(into.subarray(0, 4))).toEqual(a.subarray(2, 6));
      expect(into[4]).toBe(0xee);
      // Too small: ignored, a new buffer is returned and the caller's is untouched.
      const small = new Uint8Array(2).fill(0xee);
      const whole = await p.read!('k/blob', undefined, small);
      expect(Buffer.from(whole)).toEqual(a);
      expect(whole.buffer).not.toBe(small.buffer);
      expect([...small]).toEqual([0xee, 0xee]);
      // Replace: a cached handle on the old file must not be used.
      const b = Buffer.from('ZYXWVUTSRQPONMLKJIHGFEDCBA');
      await p.put('k/blob', b);
      expect(Buffer.from(await p.read!('k/blob'))).toEqual(b);
      await p.delete('k/blob');
      await expectCode(p.read!('k/blob'), 'NotFound');
      await p.close();
    });
  }
});
