/**
 * @module One workload's whole lifecycle for `bench:lifecycle`: each phase in a fresh child
 * process (lifecycle-phase.ts), each followed by a probe process that reopens the repository
 * and measures it at rest. The order is rs3's: write; delete the latest value; reopen (the
 * probe after the delete); restore three sampled points; expire everything (retention 0);
 * GC (grace 0); verify. The GC latency experiment runs on a copy taken after expiry, so the
 * measured GC pass and the final state are untouched by its side writes.
 *
 * A failed phase ends the lane (what follows would measure a state nobody asked for).
 */
import { spawn, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RESULT_MARK, removeDir, tempDir, filesystemOf } from './engine-fixture.js';
import type { PhaseName, PhaseResult } from './lifecycle-phase.js';
import { laneName, workloadArgs, type Workload } from './lifecycle-workload.js';

export interface PhaseRun {
  /** The row name: a phase, or 'reopen' for the probe after the delete. */
  name: string;
  phase?: PhaseResult;
  /** The probe after it (stored bytes, walk, history metadata), when one ran. */
  probe?: PhaseResult;
}

export interface LaneRun {
  workload: Workload;
  rows: PhaseRun[];
  gcLatency?: PhaseResult;
  /** Every phase ran and none failed (nor a probe), and no read as of a sampled point was wrong. */
  complete: boolean;
  /** The first failure or unavailability, in words. */
  stoppedBy?: string;
  elapsedMs: number;
  filesystem: string;
}

/** Runs `lifecycle-phase.js --phase=NAME` and returns its RESULT (also when it failed). */
function runPhase(phase: PhaseName, dir: string, w: Workload, extra: string[] = []): Promise<PhaseResult> {
  const script = fileURLToPath(new URL('./lifecycle-phase.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, `--phase=${phase}`, `--dir=${dir}`, ...workloadArgs(w), ...extra], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith(RESULT_MARK));
      if (!line) return reject(new Error(`phase ${phase} exited with ${code} and no result`));
      resolve(JSON.parse(line.slice(RESULT_MARK.length)) as PhaseResult);
    });
  });
}

/** Runs the whole lifecycle of `w` in a new temp repository, which is removed at the end. */
export async function runLane(w: Workload, log: (m: string) => void): Promise<LaneRun> {
  const dir = await tempDir(`lifecycle-${w.mode}-${w.writes}`);
  const copy = `${dir}-gc-copy`;
  const t0 = performance.now();
  const lane: LaneRun = { workload: w, rows: [], complete: false, elapsedMs: 0, filesystem: filesystemOf(dir) };
  const name = laneName(w);
  let points = '';
  const step = async (phase: PhaseName, rowName: string = phase, probe = true): Promise<boolean> => {
    log(`${name}: ${rowName}`);
    const row: PhaseRun = { name: rowName };
    lane.rows.push(row);
    row.phase = await runPhase(phase, dir, w, points ? [`--points=${points}`] : []);
    if (row.phase.error) {
      lane.stoppedBy ??= `${rowName}: ${row.phase.error}`;
      log(`${name}: ${rowName} FAILED: ${row.phase.error}`);
    }
    if (probe && !row.phase.error) {
      row.probe = await runPhase('probe', dir, w, points ? [`--points=${points}`] : []);
      if (row.probe.error) log(`${name}: probe after ${rowName} FAILED: ${row.probe.error}`);
    }
    return !row.phase.error;
  };
  try {
    if (!(await step('write'))) return lane;
    points = ((lane.rows[0]!.phase!.data.pointTimes as number[]) ?? []).join(',');
    if (!(await step('delete', 'delete', false))) return lane;
    // The reopen: a fresh process opens the repository the delete left and walks its history.
    log(`${name}: reopen`);
    lane.rows.push({ name: 'reopen', probe: await runPhase('probe', dir, w, [`--points=${points}`]) });
    if (!(await step('restore'))) return lane;
    if (!(await step('expire'))) return lane;
    log(`${name}: GC latency (on a copy)`);
    execFileSync('cp', ['-a', dir, copy]);
    try {
      lane.gcLatency = await runPhase('gc-latency', copy, w);
    } finally {
      await removeDir(copy);
    }
    if (!(await step('gc'))) return lane;
    if (!(await step('verify', 'verify', false))) return lane;
    // A read as of a sampled point must give its bytes, or be refused once expired: an absence
    // or other bytes is a wrong answer, and the lifecycle did not complete.
    const wrongReads = lane.rows.filter((r) => ((r.probe?.data.pointReads as string[] | undefined) ?? []).some((x) => x === 'absent' || x === 'wrong'));
    if (wrongReads.length > 0) lane.stoppedBy ??= `wrong reads as of sampled points after ${wrongReads.map((r) => r.name).join(', ')}`;
    lane.complete = lane.stoppedBy === undefined && lane.rows.every((r) => !r.probe?.error);
    return lane;
  } finally {
    lane.elapsedMs = performance.now() - t0;
    await removeDir(dir);
  }
}
