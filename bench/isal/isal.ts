/**
 * @module ISA-L side by side: builds bench/isal/isal-rs.c with the system C compiler against
 * Debian's libisal-dev at bench time, runs it for one RS(k, m) and shard size, and returns
 * its rates. Used by bench/codec-rs.ts, interleaved with Strata's own runs of the same
 * configuration so that both see the same machine load.
 *
 * Nothing here is required: a machine without `cc` or ISA-L gets a skip reason, never an
 * exception, and the benchmark prints it instead of the ISA-L rows.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** ISA-L entry points the harness times: 128-bit SSE, and ISA-L's own dispatch (AVX2/AVX-512). */
export type IsalImpl = 'sse' | 'dispatch';

export interface IsalRow {
  impl: IsalImpl;
  op: 'encode' | 'reconstruct';
  /** MB/s (1e6 bytes) of data bytes, one per run after a warm-up. */
  mbps: number[];
}

export type IsalHarness = { path: string } | { skipped: string };

/** How the harness times its runs: CPU time of its process, or the monotonic wall clock. */
export type IsalClock = 'cpu' | 'wall';

/** What to install when the harness cannot be built. */
const INSTALL_HINT = 'skipped: apt-get install libisal-dev (and a C compiler, cc)';
/** The harness's own runs take about runs * minMs * 4 ops; allow far more before giving up. */
const RUN_TIMEOUT_MS = 120_000;

/** The repository root: the nearest ancestor of this file holding package.json (src or dist). */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('bench/isal: no package.json above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
  return dir;
}

/**
 * Compiles the harness into .cache/bench/isal-rs (again only when the C source is newer).
 * Returns its path, or a one-line skip reason naming the package to install.
 */
export function buildIsalHarness(): IsalHarness {
  const root = repoRoot();
  const source = join(root, 'bench', 'isal', 'isal-rs.c');
  const out = join(root, '.cache', 'bench', 'isal-rs');
  if (!existsSync(source)) return { skipped: `skipped: ${source} not found` };
  if (existsSync(out) && statSync(out).mtimeMs >= statSync(source).mtimeMs) return { path: out };
  mkdirSync(dirname(out), { recursive: true });
  const cc = spawnSync('cc', ['-O2', '-o', out, source, '-lisal'], { encoding: 'utf8' });
  if (cc.error || cc.status !== 0) {
    const why = cc.error ? cc.error.message : (cc.stderr || '').trim().split('\n')[0];
    return { skipped: `${INSTALL_HINT} (build failed: ${why})` };
  }
  return { path: out };
}

/**
 * Runs the harness for RS(k, m) at `shard` bytes: `runs` timed runs of about `minMs` each per
 * row, timed by `clock`. Throws if the harness fails or prints something other than the expected JSON (a
 * benchmark must not quote figures it could not check; the harness also verifies that its
 * reconstruction rebuilt the lost shards exactly).
 */
export function runIsal(
  path: string,
  k: number,
  m: number,
  shard: number,
  runs: number,
  minMs: number,
  clock: IsalClock = 'cpu'
): IsalRow[] {
  const args = [...[k, m, shard, runs, minMs].map(String), clock];
  const r = spawnSync(path, args, { encoding: 'utf8', timeout: RUN_TIMEOUT_MS });
  if (r.error || r.status !== 0) {
    throw new Error(`isal-rs ${args.join(' ')}: ${r.error?.message ?? `exit ${r.status}`} ${r.stdout} ${r.stderr}`.trim());
  }
  const parsed = JSON.parse(r.stdout) as { k: number; m: number; shard: number; clock: string; rows: IsalRow[] };
  if (parsed.k !== k || parsed.m !== m || parsed.shard !== shard || parsed.clock !== clock || !Array.isArray(parsed.rows)) {
    throw new Error(`isal-rs ${args.join(' ')}: unexpected output ${r.stdout.slice(0, 200)}`);
  }
  for (const row of parsed.rows) {
    const ok =
      (row.impl === 'sse' || row.impl === 'dispatch') &&
      (row.op === 'encode' || row.op === 'reconstruct') &&
      Array.isArray(row.mbps) &&
      row.mbps.length === runs &&
      row.mbps.every((x) => Number.isFinite(x) && x > 0);
    if (!ok) throw new Error(`isal-rs ${args.join(' ')}: malformed row ${JSON.stringify(row)}`);
  }
  return parsed.rows;
}
