/**
 * @module The lanes of `npm run bench:http` and the stored figures they merge into.
 *
 * A lane is one slice of the benchmark that can be re-run alone: `put4k` (4 KiB PUT at 1 and 16
 * connections, every target), `get4k`, ... `get64m`, and `list100k` / `list1m` (LIST on a
 * bucket of that many objects; `list10k` is the quick run's). `--only=` takes lane names and
 * the groups `sweep`, `put`, `get` and `list`.
 *
 * Every run stores its lanes' figures (summaries, not samples) in bench/RESULTS-http.json, a
 * re-run lane replacing all of that lane's cells (every target's), so ratios between targets
 * are always from one run; the RESULTS.md section is then rendered from all stored lanes, each
 * stamped with its time, load average and whether it was a quick run. `--fresh` drops the
 * stored lanes first (the section then shows only the lanes just run).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { RESULTS_PATH } from './lib/results.js';
import type { TargetName } from './http-targets.js';
import type { ListStats } from './http-list.js';

export type Op = 'PUT' | 'GET';

export interface SweepLane {
  name: string;
  op: Op;
  size: number;
  conc: number[];
  /** Measured duration of one run of one cell, ms (a quick run caps it at QUICK_RUN_MS). */
  ms: number;
  /** Distinct keys the lane's requests cycle through, each with its own body. */
  keys: number;
}

/** Per-key bodies of every size stay under ~128 MiB of client memory; 4 KiB gets 1,024 keys. */
const SIZES: { size: number; label: string; conc: number[]; ms: number; keys: number }[] = [
  { size: 4 << 10, label: '4k', conc: [1, 16], ms: 2500, keys: 1024 },
  { size: 64 << 10, label: '64k', conc: [1, 16], ms: 2000, keys: 256 },
  { size: 1 << 20, label: '1m', conc: [1, 16], ms: 2000, keys: 32 },
  { size: 8 << 20, label: '8m', conc: [1], ms: 3000, keys: 8 },
  { size: 64 << 20, label: '64m', conc: [1], ms: 4000, keys: 2 },
];

export const SWEEP_LANES: readonly SweepLane[] = SIZES.flatMap((s) =>
  (['PUT', 'GET'] as const).map((op) => ({ name: `${op.toLowerCase()}${s.label}`, op, size: s.size, conc: s.conc, ms: s.ms, keys: s.keys }))
);

/** LIST lanes: bucket sizes (objects). The quick run lists a 10,000-object bucket instead. */
export const LIST_LANES: Readonly<Record<string, number>> = { list10k: 10_000, list100k: 100_000, list1m: 1_000_000 };

/** A quick run's cap on one run of one cell, ms. */
export const QUICK_RUN_MS = 400;

/**
 * The lanes `--only=` names (all lanes of a full or quick run when `only` is undefined).
 * Throws on an unknown name, listing the known ones.
 */
export function selectLanes(only: string | undefined, quick: boolean): { sweep: SweepLane[]; lists: string[] } {
  const defaultLists = quick ? ['list10k'] : ['list100k', 'list1m'];
  if (only === undefined) return { sweep: [...SWEEP_LANES], lists: defaultLists };
  const sweep = new Set<string>();
  const lists = new Set<string>();
  for (const raw of only.split(',')) {
    const name = raw.trim().toLowerCase();
    if (!name) continue;
    if (name === 'sweep') SWEEP_LANES.forEach((l) => sweep.add(l.name));
    else if (name === 'put' || name === 'get') SWEEP_LANES.filter((l) => l.name.startsWith(name)).forEach((l) => sweep.add(l.name));
    else if (name === 'list') defaultLists.forEach((l) => lists.add(l));
    else if (name in LIST_LANES) lists.add(name);
    else if (SWEEP_LANES.some((l) => l.name === name)) sweep.add(name);
    else throw new Error(`unknown lane '${raw}'; lanes: ${[...SWEEP_LANES.map((l) => l.name), ...Object.keys(LIST_LANES)].join(', ')}, groups: sweep, put, get, list`);
  }
  return { sweep: SWEEP_LANES.filter((l) => sweep.has(l.name)), lists: Object.keys(LIST_LANES).filter((l) => lists.has(l)) };
}

/** One run of one cell, summarised (latency samples are not stored). */
export interface RunSummary {
  n: number;
  seconds: number;
  errors: number;
  wrong: number;
  /** Body bytes moved (sent for PUT, received for GET). */
  bytes: number;
  /** Bytes whose content the client compared with what it PUT (GET bodies) or whose MD5 it compared with the ETag (PUT bodies). */
  checkedBytes: number;
  p50: number;
  serverCpuSeconds: number;
  clientCpuSeconds: number;
  /** Lines the server wrote to its stdout log during the run. */
  logLines: number;
  firstError?: string;
}

export interface CellSummary {
  target: TargetName;
  size: number;
  conc: number;
  op: Op;
  runs: RunSummary[];
  /** Over all samples of all runs, ms. */
  p95: number;
  p99: number;
}

/** When and how a lane was measured. */
export interface LaneStamp {
  at: string;
  /** 1, 5 and 15 minute load averages when the lane finished. */
  load: number[];
  quick: boolean;
  runs: number;
  /** Duration of one cell run (sweep lanes), ms. */
  ms?: number;
  targets: TargetName[];
}

export interface StoredHttp {
  sweep: Record<string, LaneStamp & { cells: CellSummary[] }>;
  lists: Record<string, LaneStamp & { stats: ListStats }>;
}

/** bench/RESULTS-http.json, beside RESULTS.md. */
export const STORE_PATH = join(dirname(RESULTS_PATH), 'RESULTS-http.json');

/** The stored lanes (empty when the file is absent; throws if it exists but is not JSON). */
export function loadStored(path = STORE_PATH): StoredHttp {
  if (!existsSync(path)) return { sweep: {}, lists: {} };
  const s = JSON.parse(readFileSync(path, 'utf8')) as Partial<StoredHttp>;
  return { sweep: s.sweep ?? {}, lists: s.lists ?? {} };
}

/** `base` with every lane of `fresh` replacing the lane of the same name (others kept). Pure. */
export function mergeStored(base: StoredHttp, fresh: StoredHttp): StoredHttp {
  return { sweep: { ...base.sweep, ...fresh.sweep }, lists: { ...base.lists, ...fresh.lists } };
}

/** Writes the stored lanes, one line per lane in lane order (so a re-run lane is a one-line diff). */
export function saveStored(s: StoredHttp, path = STORE_PATH): void {
  const lines = (r: Record<string, unknown>, names: string[]) =>
    names
      .filter((n) => n in r)
      .map((n) => `  ${JSON.stringify(n)}: ${JSON.stringify(r[n])}`)
      .join(',\n');
  const sweep = lines(s.sweep, SWEEP_LANES.map((l) => l.name));
  const lists = lines(s.lists, Object.keys(LIST_LANES));
  writeFileSync(path, `{\n "sweep": {\n${sweep}\n },\n "lists": {\n${lists}\n }\n}\n`);
}
