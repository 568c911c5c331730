/**
 * @module Runs a seeded sequence of the model-based history test against a server: each
 * operation checked as it is answered, everything compared every `checkEvery` operations and
 * at the end. A failure names the seed, the step and the operations before it, so it replays.
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { prng } from '../../support/random.js';
import type { Probe } from './client.js';
import { checkAll } from './check.js';
import { applyOp, expectEq } from './driver.js';
import { BucketModel, type World } from './model.js';
import { describeOp, KEYS, nextOp, type GenOptions, type Op } from './ops.js';

export interface RunOptions extends GenOptions {
  seed: number;
  /** Operations to run. */
  ops: number;
  /** Full comparison after every this many operations and at the end (0: none). */
  checkEvery: number;
  /** Continue these models (their buckets exist) instead of creating buckets. */
  world?: World;
  /** Buckets to create (default 2), named `<prefix>-<n>`. */
  buckets?: number;
  prefix?: string;
  /** Called after each acknowledged operation (the kill test counts them). */
  onAck?: (op: Op, n: number) => void;
}

/** What a run covered: operations by kind, and how much state the checks compared. */
export interface RunStats {
  ops: Record<Op['t'], number>;
  fullChecks: number;
  /** Versions + markers in the models at the end. */
  entries: number;
  markers: number;
  /** Null versions and markers in the model at the end. */
  nulls: number;
}

export class SequenceFailure extends Error {
  override readonly name = 'SequenceFailure';
}

/** Creates the buckets (unless continuing a world), runs the sequence; throws SequenceFailure. */
export async function runSequence(p: Probe, o: RunOptions): Promise<{ world: World; stats: RunStats }> {
  let world = o.world;
  if (!world) {
    world = new Map();
    for (let b = 0; b < (o.buckets ?? 2); b++) {
      const name = `${o.prefix ?? `model-${o.seed}`}-${b}`;
      const a = await p.call(new CreateBucketCommand({ Bucket: name }));
      expectEq(`CreateBucket ${name} status`, a.status, 200);
      world.set(name, new BucketModel(name));
    }
  }
  const next = prng(o.seed);
  const checks = prng(o.seed ^ 0x5bd1e995);
  const keys = o.keys ?? KEYS;
  const stats: RunStats = {
    ops: { versioning: 0, put: 0, mpu: 0, tag: 0, copy: 0, delete: 0, deleteVersion: 0, deleteObjects: 0, read: 0 },
    fullChecks: 0,
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
    const op = nextOp(next, world, i, o);
    try {
      await applyOp(p, world, op);
    } catch (err) {
      fail(i, err);
    }
    done.push(`${i}: ${describeOp(op)}`);
    stats.ops[op.t]++;
    o.onAck?.(op, i);
    if (o.checkEvery > 0 && ((i + 1) % o.checkEvery === 0 || i === o.ops - 1)) {
      try {
        for (const m of world.values()) await checkAll(p, m, keys, checks);
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
  return { world, stats };
}
