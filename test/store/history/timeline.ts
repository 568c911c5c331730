/**
 * @module What every bucket of a model-based run looked like after each write, and when: the
 * reference for reads as of a past time, restores and forks at a time.
 *
 * A snapshot's time lies strictly between the commit of the write before it and the commit of
 * the write after it: the runner takes the clock right after a write is acknowledged (its
 * commit time is at or before that, same machine), names the next millisecond, and starts no
 * write before the millisecond after that. Snapshots keep each key's versions by reference,
 * so a version's tags, rewritten in place later (PutObjectTagging by versionId), are seen as
 * they are now, as the version log keeps one record per version.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { BucketModel, MVersion, Versioning, World } from './model.js';

/** One bucket at one moment. */
export interface BucketSnapshot {
  versioning: Versioning;
  /** Key -> versions and markers, newest first (a copy of the arrays, versions shared). */
  keys: Map<string, MVersion[]>;
}

export interface Snapshot {
  /** ms since the epoch: after the write that made this state, before the next one. */
  time: number;
  buckets: Map<string, BucketSnapshot>;
}

export function snapshotOf(m: BucketModel): BucketSnapshot {
  return { versioning: m.versioning, keys: new Map([...m.keys].map(([k, vs]) => [k, [...vs]])) };
}

/** The latest version of `key` in `s` (undefined: none or a delete marker). */
export function liveAt(s: BucketSnapshot, key: string): MVersion | undefined {
  const v = s.keys.get(key)?.[0];
  return v && !v.marker ? v : undefined;
}

export class Timeline {
  readonly snapshots: Snapshot[] = [];
  /** Bucket -> the time it was created (the first moment as-of reads may name). */
  readonly created = new Map<string, number>();
  #notBefore = 0;

  /** Before a write: waits until the clock is past the last snapshot's time. */
  async beforeWrite(): Promise<void> {
    while (Date.now() < this.#notBefore) await sleep(1);
  }

  /** After an acknowledged write: records every bucket as it is now. */
  afterWrite(world: World): Snapshot {
    const now = Date.now();
    const s: Snapshot = { time: now + 1, buckets: new Map([...world].map(([name, m]) => [name, snapshotOf(m)])) };
    this.snapshots.push(s);
    this.#notBefore = now + 2;
    return s;
  }

  /** A random snapshot in which `bucket` existed, or undefined. */
  pick(next: () => number, bucket: string): Snapshot | undefined {
    const with_ = this.snapshots.filter((s) => s.buckets.has(bucket));
    return with_.length === 0 ? undefined : with_[next() % with_.length];
  }
}
