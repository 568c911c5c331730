/**
 * A batch staged behind a commit in flight (pipelined group commit) reads through that commit's
 * staged changes until it is applied — and only until then: once the commit in flight is
 * applied to memory, the state holds its changes, and reading its staged changes on top of it
 * counts them twice. Summed reads (a bucket's history bytes, uploads in progress) must not.
 * (Found by fork-kill.test.ts: a deleteBucket staged so recorded a history total short by the
 * bytes the batch before it added to the bucket, and verify reported the commit Corrupt.)
 *
 * The commit in flight is held at its durable step (the log append, or the commit-blob path's
 * anchor move) until the next batch has started staging; that batch then waits for the first
 * one's acknowledgement (applied) before staging what reads the sum — as deleteBucket does after
 * its emptiness scan, whose reads yield. The commit record's history total must match its
 * changes on top of the root (verify), and a reopen must not find the account off.
 */
import { describe, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import type { AppendLog } from '../../src/provider/append-log.js';
import type { BlobBody, PutOptions, Provider } from '../../src/provider/provider.js';
import { Store } from '../../src/store/store.js';
import type { Tx } from '../../src/store/tx.js';
import { verifyRepository } from '../../src/store/verify.js';
import { stream, tempDir } from './helpers.js';

const B = 'pipe-applied';

/** Holds the next durable step (`hold` arms it) until the released promise resolves. */
interface Gate {
  arm(onHeld: () => Promise<void>): void;
}

/** Wraps `p`: the armed gate fires on the next log append (`log`) or anchor put (`anchor`). */
function gated(p: Provider, at: 'log' | 'anchor'): { provider: Provider; gate: Gate } {
  let armed: (() => Promise<void>) | undefined;
  const fire = async () => {
    const f = armed;
    armed = undefined;
    if (f) await f();
  };
  const openLog = p.openLog?.bind(p);
  const hooks: Partial<Provider> = {
    put: async (key: string, body: BlobBody, options?: PutOptions) => {
      if (at === 'anchor' && key === 'anchor') await fire();
      return p.put(key, body, options);
    },
  };
  if (openLog) {
    hooks.openLog = async (key: string, bytes: number): Promise<AppendLog> => {
      const log = await openLog(key, bytes);
      return {
        key: log.key,
        preallocated: log.preallocated,
        close: () => log.close(),
        append: async (offset: number, chunks: readonly Uint8Array[]) => {
          if (at === 'log') await fire();
          await log.append(offset, chunks);
        },
      };
    };
  }
  const provider = new Proxy(p, {
    get: (target, prop) => {
      if (prop in hooks) return hooks[prop as keyof Provider];
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { provider, gate: { arm: (f) => (armed = f) } };
}

const text = (s: string) => new TextEncoder().encode(s);

async function put(store: Store, key: string, body: Uint8Array) {
  await store.putObject(B, key, stream(body), { size: body.length });
}

/**
 * Runs `first` (one batch), holds its durable step until `second` (a raw transaction) is being
 * staged in the next batch, then lets `first` land; `second` awaits `first`'s acknowledgement
 * and then stages `then(tx)`.
 */
async function behindApplied(store: Store, gate: Gate, first: () => Promise<unknown>, then: (tx: Tx) => unknown) {
  let second: Promise<unknown> | undefined;
  let firstDone: Promise<unknown> | undefined;
  let seqs: number[] = [];
  gate.arm(async () => {
    let started!: () => void;
    const staging = new Promise<void>((r) => (started = r));
    second = store.repo.run(async (tx) => {
      seqs.push(tx.seq);
      started();
      await firstDone;
      return then(tx);
    });
    await staging; // the next batch is being staged, the first one not durable yet
  });
  const firstSeq = store.repo.seq + 1;
  firstDone = first();
  await firstDone;
  await second;
  seqs = [firstSeq, ...seqs];
  return seqs;
}

describe('a batch staged behind a commit that is applied meanwhile', () => {
  for (const path of ['commit log (fs)', 'commit blobs (memory)'] as const) {
    it(`counts the applied commit's history once (${path})`, { timeout: 20_000 }, async () => {
      const t = path === 'commit log (fs)' ? tempDir('pipeline-applied') : undefined;
      try {
        const base = t ? await createFsProvider({ dir: t.dir }) : await createMemoryProvider();
        const { provider, gate } = gated(base, t ? 'log' : 'anchor');
        const open = () => Store.open(provider, { checkpointEvery: 1 << 20, ...(t ? { commitLog: true, stageBehindLogAt: 1 } : {}) });
        const store = await open();
        // Another bucket's history keeps the total positive: a double count is then a wrong
        // total recorded (as in fork-kill), not a negative one.
        await store.createBucket(`${B}-other`);
        await store.putObject(`${B}-other`, 'kept', stream(text('kept')), { size: 4 });
        const other = store.repo.state.history.bytes;
        await store.createBucket(B);
        await put(store, 'a', text('first'));
        await put(store, 'b', text('second'));
        const before = store.repo.state.history.bytes;
        // A root that records the account: verify checks the commits after it against it.
        await store.repo.checkpoint();
        // Batch N: an unversioned DELETE adds an absence entry (history bytes) to the bucket.
        // Batch N+1, staged while N is in flight: the bucket's deletion, staged once N is applied.
        const seqs = await behindApplied(
          store,
          gate,
          () => Promise.all([store.deleteObject(B, 'a'), store.deleteObject(B, 'b')]),
          (tx) => tx.deleteBucket(B)
        );
        expect(seqs[1], 'staged in the batch after the one in flight').toBe(seqs[0]! + 1);
        expect(store.repo.state.history.bytes).toBe(other);
        expect(before).toBeGreaterThan(other);
        // Before close, whose checkpoint would leave no commit after the root to check.
        const report = await verifyRepository(provider);
        expect(report.problems.map((p) => `${p.blob}: ${p.message}`)).toEqual([]);
        await store.close();
        const again = await open();
        expect(again.repo.state.history.bytes).toBe(other);
        await again.close();
      } finally {
        t?.cleanup();
      }
    });

    it(`counts the applied commit's uploads in progress once (${path})`, { timeout: 20_000 }, async () => {
      const t = path === 'commit log (fs)' ? tempDir('pipeline-applied') : undefined;
      try {
        const base = t ? await createFsProvider({ dir: t.dir }) : await createMemoryProvider();
        const { provider, gate } = gated(base, t ? 'log' : 'anchor');
        const store = await Store.open(provider, { checkpointEvery: 1 << 20, ...(t ? { commitLog: true, stageBehindLogAt: 1 } : {}) });
        await store.createBucket(B);
        let seen: number | undefined;
        const seqs = await behindApplied(
          store,
          gate,
          () => store.createMultipartUpload(B, 'big'),
          (tx) => (seen = tx.uploadsInProgress(B))
        );
        expect(seqs[1], 'staged in the batch after the one in flight').toBe(seqs[0]! + 1);
        expect(seen).toBe(1);
        await store.close();
      } finally {
        t?.cleanup();
      }
    });
  }
});

describe('operations that arrive while a commit log append is in flight', () => {
  for (const stageBehindLogAt of [undefined, 1]) {
    const name = stageBehindLogAt === undefined ? 'wait for it to land, then go in one batch (default)' : 'stageBehindLogAt 1: are staged behind it at once';
    it(name, { timeout: 20_000 }, async () => {
      const t = tempDir('pipeline-wait');
      try {
        const { provider, gate } = gated(await createFsProvider({ dir: t.dir }), 'log');
        const store = await Store.open(provider, { checkpointEvery: 1 << 20, commitLog: true, ...(stageBehindLogAt ? { stageBehindLogAt } : {}) });
        await store.createBucket(B);
        const seqs: number[] = [];
        let runs: Promise<unknown>[] = [];
        let stagedWhileHeld = -1;
        gate.arm(async () => {
          runs = Array.from({ length: 10 }, (_, i) => store.repo.run(async (tx) => (seqs.push(tx.seq), i)));
          await new Promise((r) => setTimeout(r, 30));
          stagedWhileHeld = seqs.length;
        });
        const held = store.repo.seq + 1;
        await put(store, 'a', text('held'));
        expect(await Promise.all(runs)).toEqual([...Array(10).keys()]);
        if (stageBehindLogAt === undefined) {
          expect(stagedWhileHeld, 'nothing staged while the append was held').toBe(0);
          expect(seqs, 'all ten in the batch after it').toEqual(Array(10).fill(held + 1));
        } else {
          expect(stagedWhileHeld, 'the first arrival staged behind the held append').toBeGreaterThan(0);
        }
        expect((await store.headObject(B, 'a')).version.size).toBe(4);
        await store.close();
      } finally {
        t.cleanup();
      }
    });
  }

  it('are staged behind it once as many wait as stageBehindLogAt says, in one batch', { timeout: 20_000 }, async () => {
    const t = tempDir('pipeline-wait');
    try {
      const { provider, gate } = gated(await createFsProvider({ dir: t.dir }), 'log');
      const store = await Store.open(provider, { checkpointEvery: 1 << 20, commitLog: true, stageBehindLogAt: 4 });
      await store.createBucket(B);
      const seqs: number[] = [];
      const runs: Promise<unknown>[] = [];
      const staged: number[] = [];
      const arrive = (n: number) => {
        for (let i = 0; i < n; i++) runs.push(store.repo.run(async (tx) => seqs.push(tx.seq)));
      };
      gate.arm(async () => {
        arrive(3);
        await new Promise((r) => setTimeout(r, 30));
        staged.push(seqs.length);
        arrive(2);
        await new Promise((r) => setTimeout(r, 30));
        staged.push(seqs.length);
      });
      const held = store.repo.seq + 1;
      await put(store, 'a', text('held'));
      await Promise.all(runs);
      expect(staged, 'none staged at 3 waiting, all 5 at 5 waiting').toEqual([0, 5]);
      expect(seqs, 'in the one batch behind the held append').toEqual(Array(5).fill(held + 1));
      await store.close();
    } finally {
      t.cleanup();
    }
  });
});
