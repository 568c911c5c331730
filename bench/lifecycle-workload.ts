/**
 * @module What every `bench:lifecycle` phase shares: the four workloads (rs3's retained-history
 * lanes), their keys, bodies and budgets, the sampled history points and the state expected
 * after each step, and the store opened on an fs directory behind a CountingProvider.
 *
 * A workload writes `writes` serial PUTs of BODY_BYTES: in overwrite mode all to one key, in
 * append mode each to its own key. Write i (0-based) stores bodyOf(i), so any reader can
 * regenerate what a key must hold without being told. The bucket never enables versioning:
 * every write is still history (the version log keeps it), as in rs3's retained profile.
 */
import { BUCKET, bodyOf, objectKey, openBenchStore, type BenchStore } from './engine-fixture.js';
import type { StoreOptions } from '../src/store/store.js';

export { BUCKET };

/** Plaintext bytes of every PUT (rs3's lanes: 512 B values). */
export const BODY_BYTES = 512;
const MiB = 2 ** 20;

export type Mode = 'overwrite' | 'append';

export interface Workload {
  mode: Mode;
  writes: number;
  /** Repository option historyBudget (bytes; budget helper, issue 10). */
  historyBudget: number;
  /** Repository option pendingBytes (bytes). */
  pendingBytes: number;
}

/**
 * The four lanes and their budgets, as issue 10 sets them: 256 MiB history / 64 MiB pending
 * at 10,000 writes, 1 GiB / 64 MiB at 100,000 (rs3 needed 1 GiB of graph metadata there).
 * `--quick` shrinks the counts (a smoke run, not a measurement).
 */
export function workloads(quick: boolean): Workload[] {
  const counts = quick ? [300, 600] : [10_000, 100_000];
  const out: Workload[] = [];
  for (const writes of counts) {
    const historyBudget = writes >= 100_000 || (quick && writes === counts[1]) ? 1024 * MiB : 256 * MiB;
    for (const mode of ['overwrite', 'append'] as const) out.push({ mode, writes, historyBudget, pendingBytes: 64 * MiB });
  }
  return out;
}

/** "100,000 append". */
export const laneName = (w: Workload) => `${w.writes.toLocaleString('en-US')} ${w.mode}`;

/** The key write `i` goes to. */
export function keyOf(mode: Mode, i: number): string {
  return objectKey(mode === 'overwrite' ? 0 : i);
}

/** The body of write `i` (its index in the first 4 bytes, then a fill byte). */
export const bodyOfWrite = (i: number): Uint8Array => bodyOf(i, BODY_BYTES);

/**
 * The three historical points restored, as the index of the last write they include:
 * a third and two thirds of the way, and the last write (the moment before the delete, so
 * the third restore undoes the delete). Restored in this order, the final state is every
 * write's result: append mode all `writes` keys, overwrite mode the last body.
 */
export function samplePoints(writes: number): number[] {
  return [Math.floor(writes / 3) - 1, Math.floor((2 * writes) / 3) - 1, writes - 1];
}

/** Live keys and the write each holds, after write `last` (inclusive) and nothing else. */
export function stateAfter(mode: Mode, last: number): Map<string, number> {
  const m = new Map<string, number>();
  if (last < 0) return m;
  if (mode === 'overwrite') m.set(keyOf(mode, 0), last);
  else for (let i = 0; i <= last; i++) m.set(keyOf(mode, i), i);
  return m;
}

/** The key the delete phase removes: the latest value (the last write's key). */
export const deletedKey = (w: Workload): string => keyOf(w.mode, w.writes - 1);

/** Repository options of every phase: the lane's budgets (historyBudget, pendingBytes) and `extra`. */
export function storeOptions(w: Workload, extra: Record<string, unknown> = {}): StoreOptions {
  return { historyBudget: w.historyBudget, pendingBytes: w.pendingBytes, ...extra } as StoreOptions;
}

/** Opens the lane's repository at `dir` (see openBenchStore). */
export function openLane(dir: string, w: Workload, extra: Record<string, unknown> = {}): Promise<BenchStore> {
  return openBenchStore(dir, storeOptions(w, extra));
}

/** The workload named on a child's command line (--mode, --writes, --history-budget, --pending). */
export function workloadFromArgs(arg: (name: string) => string | undefined): Workload {
  const mode = arg('mode');
  const writes = Number(arg('writes'));
  const historyBudget = Number(arg('history-budget'));
  const pendingBytes = Number(arg('pending'));
  if ((mode !== 'overwrite' && mode !== 'append') || !(writes >= 3) || !(historyBudget > 0) || !(pendingBytes > 0)) {
    throw new Error('usage: --mode=overwrite|append --writes=N (>= 3) --history-budget=BYTES --pending=BYTES');
  }
  return { mode, writes, historyBudget, pendingBytes };
}

/** The command-line form of a workload, for a child process. */
export const workloadArgs = (w: Workload): string[] => [`--mode=${w.mode}`, `--writes=${w.writes}`, `--history-budget=${w.historyBudget}`, `--pending=${w.pendingBytes}`];
