/**
 * The commit log's append latency (RepositoryStats.logAppend, exposed as
 * strata_commit_log_append_seconds): every commit appended to the log is timed from the
 * append's start until it is durable; a failed append is not; the commit-blob path appends
 * nothing. Real fs provider and commit log, its appends slowed (or failed) by a wrapper.
 */
import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppendError, type AppendLog } from '../../src/provider/append-log.js';
import type { Provider } from '../../src/provider/provider.js';
import { LATENCY_BUCKETS } from '../../src/store/latency-histogram.js';
import type { Store } from '../../src/store/store.js';
import { withFsStore } from './helpers.js';

const B = 'latency';
const DELAY_MS = 40;

/** What the wrapper does to the next appends. */
interface LogControl {
  delayMs: number;
  /** Appends to fail (stage 'write', nothing written) before any reaches the log. */
  failNext: number;
}

/** `inner` with every append log it opens slowed by `ctl.delayMs`, or failed per `ctl`. */
function slowLogs(inner: Provider, ctl: LogControl): Provider {
  const bind = <T extends object>(target: T, p: string | symbol): unknown => {
    const v = (target as Record<string | symbol, unknown>)[p];
    return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
  };
  const wrapLog = (log: AppendLog): AppendLog =>
    new Proxy(log, {
      get: (t, p) =>
        p === 'append'
          ? async (offset: number, chunks: readonly Uint8Array[]) => {
              if (ctl.failNext > 0) {
                ctl.failNext--;
                throw new AppendError('write', 'injected: nothing written', undefined);
              }
              await sleep(ctl.delayMs);
              return t.append(offset, chunks);
            }
          : bind(t, p),
    });
  return new Proxy(inner, {
    get: (t, p) => (p === 'openLog' && t.openLog ? async (key: string, bytes: number) => wrapLog(await t.openLog!(key, bytes)) : bind(t, p)),
  });
}

function withStore(ctl: LogControl, commitLog: boolean, body: (store: Store) => Promise<void>): Promise<void> {
  return withFsStore(B, { checkpointEvery: 1 << 20, commitLog, gatherMs: 0 }, body, (p) => slowLogs(p, ctl));
}

let n = 0;
function write(store: Store): Promise<void> {
  const value = new Uint8Array([n++ & 0xff]);
  return store.repo.run(async (tx) => void tx.setConfig(B, 'latency-test', value));
}

describe('the commit log append latency', () => {
  it('times every commit appended to the log from its start until durable', { timeout: 20_000 }, async () => {
    await withStore({ delayMs: DELAY_MS, failNext: 0 }, true, async (store) => {
      for (let i = 0; i < 5; i++) await write(store);
      const { commits, logAppend } = store.repo.stats;
      expect(commits).toBeGreaterThanOrEqual(5);
      expect(logAppend.count, 'one observation per commit').toBe(commits);
      expect(logAppend.sum).toBeGreaterThanOrEqual((logAppend.count * (DELAY_MS - 2)) / 1000);
      // Every append took at least DELAY_MS: none in the buckets below 25 ms, all by 10 s.
      expect(logAppend.counts[LATENCY_BUCKETS.indexOf(0.025)]).toBe(0);
      expect(logAppend.counts[LATENCY_BUCKETS.indexOf(10)]).toBe(commits);
    });
  });

  it('does not count an append that failed (the batch fails; the next one commits and counts)', { timeout: 20_000 }, async () => {
    const ctl = { delayMs: 0, failNext: 0 };
    await withStore(ctl, true, async (store) => {
      const before = store.repo.stats.logAppend.count;
      ctl.failNext = 1;
      await expect(write(store)).rejects.toThrow(/injected/);
      expect(store.repo.stats.logAppend.count).toBe(before);
      await write(store);
      expect(store.repo.stats.logAppend.count).toBe(before + 1);
    });
  });

  it('stays empty on the commit-blob path (no commit log)', { timeout: 20_000 }, async () => {
    await withStore({ delayMs: 0, failNext: 0 }, false, async (store) => {
      for (let i = 0; i < 3; i++) await write(store);
      expect(store.repo.stats.commits).toBeGreaterThanOrEqual(3);
      expect(store.repo.stats.logAppend.count).toBe(0);
    });
  });
});
