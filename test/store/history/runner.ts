/**
 * @module Runs a seeded sequence of the model-based history test against a server: each
 * operation checked as it is answered, everything compared every `checkEvery` operations and
 * at the end — the present of every bucket, and (`asOf`) reads as of random past moments of
 * the run and restores to them. A failure names the seed, the step and the operations before
 * it, so it replays.
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { prng } from '../../support/random.js';
import type { Probe } from './client.js';
import { checkAll, checkAsOf } from './check.js';
import { applyOp, expectEq } from './driver.js';
import { BucketModel, type World } from './model.js';
import { describeOp, KEYS, nextOp, type GenOptions, type Op } from './ops.js';
import { applyRestore, type RestoreOp } from './restore.js';
import { applyBucketOp, describeBucketOp, type BucketOp } from './buckets.js';
import { Timeline } from './timeline.js';

export interface RunOptions extends GenOptions {
  seed: number;
  /** Operations to run. */
  ops: number;
  /** Full comparison after every this many operations and at the end (0: none). */
  checkEvery: number;
  /** Continue these models (their buckets exist) instead of creating buckets. */
  world?: World;
  /** The run's past so far (continuing a world). */
  timeline?: Timeline;
  /** Buckets to create (default 2), named `<prefix>-<n>`. */
  buckets?: number;
  prefix?: string;
  /** Reads as of past moments at each full comparison, and restores among the operations. */
  asOf?: boolean;
  /** Forks of buckets (CreateBucket with x-strata-fork-source) and deletions of whole buckets. */
  forks?: boolean;
  /** Called after each acknowledged operation (the kill test counts them). */
  onAck?: (op: Op, n: number) => void;
}

/** What a run covered: operations by kind, and how much state the checks compared. */
export interface RunStats {
  ops: Record<Op['t'] | 'restore' | BucketOp['t'], number>;
  fullChecks: number;
  /** Buckets read as of a past moment (each: a listing and every key). */
  asOfChecks: number;
  /** Versions + markers in the models at the end. */
  entries: number;
  markers: number;
  /** Null versions and markers in the model at the end. */
  nulls: number;
}

export class SequenceFailure extends Error {
  override readonly name = 'SequenceFailure';
}

/** Share of steps (in 1000) that restore a bucket to a past moment, when `asOf`. */
const RESTORE_PER_MILLE = 25;
/** Share of steps (in 1000) that fork a bucket, and that delete one, when `forks`. */
const FORK_PER_MILLE = 25;
const DROP_PER_MILLE = 15;
/** Forks stop at this many buckets; deletions leave at least MIN_BUCKETS. */
const MAX_BUCKETS = 5;
const MIN_BUCKETS = 2;

/**
 * Creates the buckets (unless continuing a world), runs the sequence; returns the world and
 * its timeline for a continuation. Throws SequenceFailure.
 */
export async function runSequence(p: Probe, o: RunOptions): Promise<{ world: World; timeline: Timeline; stats: RunStats }> {
  const timeline = o.timeline ?? new Timeline();
  let world = o.world;
  if (!world) {
    world = new Map();
    for (let b = 0; b < (o.buckets ?? 2); b++) {
      const name = `${o.prefix ?? `model-${o.seed}`}-${b}`;
      timeline.created.set(name, Date.now());
      const a = await p.call(new CreateBucketCommand({ Bucket: name }));
      expectEq(`CreateBucket ${name} status`, a.status, 200);
      world.set(name, new BucketModel(name));
    }
    timeline.afterWrite(world);
  }
  const next = prng(o.seed);
  const checks = prng(o.seed ^ 0x5bd1e995);
  const keys = o.keys ?? KEYS;
  const stats: RunStats = {
    ops: { versioning: 0, put: 0, mpu: 0, tag: 0, copy: 0, delete: 0, deleteVersion: 0, deleteObjects: 0, read: 0, restore: 0, fork: 0, drop: 0 },
    fullChecks: 0,
    asOfChecks: 0,
    entries: 0,
    markers: 0,
    nulls: 0,
  };
  const done: string[] = [];
  const fail = (step: number, err: unknown): never => {
    const recent = done.slice(-20).map((d) => `    ${d}`).join('\n');
    throw new SequenceFailure(
      `model-history seed ${o.seed}, step ${step} of ${o.ops}: ${(err as Error).message}\n  the operations before it:\n${recent}`,
      { cause: err }
    );
  };
  for (let i = 0; i < o.ops; i++) {
    const step = nextStep(next, world, timeline, i, o);
    const what = step.t === 'restore' ? `${step.op.bucket}: RESTORE to ${new Date(step.op.to).toISOString()} prefix ${JSON.stringify(step.op.prefix)}` : step.t === 'bucket' ? describeBucketOp(step.op) : describeOp(step.op);
    const writes = step.t !== 'op' || step.op.t !== 'read';
    try {
      if (writes) await timeline.beforeWrite();
      if (step.t === 'restore') {
        const then = timeline.snapshots.find((s) => s.time === step.op.to)!.buckets.get(step.op.bucket)!;
        await applyRestore(p, world.get(step.op.bucket)!, step.op, then);
      } else if (step.t === 'bucket') await applyBucketOp(p, world, timeline, step.op);
      else await applyOp(p, world, step.op);
      if (writes) timeline.afterWrite(world);
    } catch (err) {
      fail(i, new Error(`${what}: ${(err as Error).message}`));
    }
    done.push(`${i}: ${what}`);
    stats.ops[step.t === 'restore' ? 'restore' : step.op.t]++;
    if (step.t === 'op') o.onAck?.(step.op, i);
    if (o.checkEvery > 0 && ((i + 1) % o.checkEvery === 0 || i === o.ops - 1)) {
      try {
        for (const m of world.values()) await checkAll(p, m, keys, checks);
        if (o.asOf) stats.asOfChecks += await checkPast(p, world, timeline, keys, checks);
      } catch (err) {
        fail(i, new Error(`full check after step ${i}: ${(err as Error).message}`));
      }
      stats.fullChecks++;
    }
  }
  for (const model of world.values()) {
    for (const key of model.keys.keys()) {
      for (const v of model.versionsOf(key)) {
        stats.entries++;
        if (v.marker) stats.markers++;
        if (v.id === 'null') stats.nulls++;
      }
    }
  }
  return { world, timeline, stats };
}

type Step = { t: 'op'; op: Op } | { t: 'restore'; op: RestoreOp } | { t: 'bucket'; op: BucketOp };

/** The next step: now and then a restore, a fork or a bucket deletion, else an object operation. */
function nextStep(next: () => number, world: World, timeline: Timeline, serial: number, o: RunOptions): Step {
  const names = [...world.keys()];
  const r = next() % 1000;
  if (o.asOf && r < RESTORE_PER_MILLE) {
    const bucket = names[next() % names.length]!;
    const s = timeline.pick(next, bucket);
    if (s) return { t: 'restore', op: { bucket, to: s.time, prefix: ['', '', 'a/', 'd/'][next() % 4]! } };
  }
  if (o.forks && r >= 500 && r < 500 + FORK_PER_MILLE && names.length < MAX_BUCKETS) {
    const source = names[next() % names.length]!;
    const op: BucketOp = { t: 'fork', bucket: `${o.prefix ?? `model-${o.seed}`}-f${o.seed}-${serial}`, source };
    // With point-in-time reads, half the forks are as of a past moment of the source.
    const then = o.asOf && next() % 2 === 0 ? timeline.pick(next, source) : undefined;
    if (then) op.at = then.time;
    return { t: 'bucket', op };
  }
  if (o.forks && r >= 600 && r < 600 + DROP_PER_MILLE && names.length > MIN_BUCKETS) {
    return { t: 'bucket', op: { t: 'drop', bucket: names[next() % names.length]! } };
  }
  return { t: 'op', op: nextOp(next, world, serial, o) };
}

/** Reads every bucket as of two random past moments; returns how many bucket reads it made. */
export async function checkPast(p: Probe, world: World, timeline: Timeline, keys: readonly string[], next: () => number): Promise<number> {
  let n = 0;
  for (const name of world.keys()) {
    for (let k = 0; k < 2; k++) {
      const s = timeline.pick(next, name);
      if (!s) continue;
      await checkAsOf(p, name, s.buckets.get(name)!, s.time, keys, next);
      n++;
    }
  }
  return n;
}
