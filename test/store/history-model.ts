/**
 * @module A plain model of one bucket's S3 state under versioning (what every key's versions
 * are, newest first), a seeded script of writes that drives a real Store and the model side by
 * side on an injected clock, and the snapshots that say what the bucket was after each step —
 * what reads as of a past time, restores and forks at a time are compared with.
 */
import { expect } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { stream } from './helpers.js';

type Versioning = 'Enabled' | 'Suspended' | undefined;

interface ModelVersion {
  id: string;
  body?: string;
  isNull: boolean;
  marker: boolean;
}

/** S3 semantics of one bucket, written independently of the store's version log. */
export class BucketModel {
  versioning: Versioning;
  /** Key -> versions newest first. */
  readonly keys = new Map<string, ModelVersion[]>();

  #list(key: string): ModelVersion[] {
    let l = this.keys.get(key);
    if (!l) this.keys.set(key, (l = []));
    return l;
  }

  /** A PUT that the store answered with `id`. */
  put(key: string, body: string, id: string): void {
    const l = this.#list(key);
    const enabled = this.versioning === 'Enabled';
    if (!enabled) this.#dropNull(l);
    l.unshift({ id, body, isNull: !enabled, marker: false });
  }

  /** A DELETE without versionId that the store answered with marker id `id` (if one was made). */
  delete(key: string, id: string | undefined): void {
    const l = this.#list(key);
    if (this.versioning === undefined) {
      this.#dropNull(l);
      return;
    }
    if (this.versioning === 'Suspended') this.#dropNull(l);
    l.unshift({ id: id!, isNull: this.versioning === 'Suspended', marker: true });
  }

  /** DELETE ?versionId=: the version leaves for good. */
  remove(key: string, id: string): void {
    const l = this.#list(key);
    const i = l.findIndex((v) => (id === 'null' ? v.isNull : v.id === id && !v.isNull));
    if (i >= 0) l.splice(i, 1);
  }

  #dropNull(l: ModelVersion[]): void {
    const i = l.findIndex((v) => v.isNull);
    if (i >= 0) l.splice(i, 1);
  }

  /** Every existing key and its body, in key order. */
  snapshot(): Map<string, string> {
    const out = new Map<string, string>();
    for (const key of [...this.keys.keys()].sort(byCodePoint)) {
      const top = this.keys.get(key)![0];
      if (top && !top.marker) out.set(key, top.body!);
    }
    return out;
  }

  /** Every key's versions and markers S3 shows, as [key, id, marker], in listing order. */
  versions(): [string, string, boolean][] {
    const out: [string, string, boolean][] = [];
    for (const key of [...this.keys.keys()].sort(byCodePoint)) for (const v of this.keys.get(key)!) out.push([key, v.isNull ? 'null' : v.id, v.marker]);
    return out;
  }

  /** Ids S3 shows for `key` (for removals). */
  ids(key: string): string[] {
    return (this.keys.get(key) ?? []).map((v) => (v.isNull ? 'null' : v.id));
  }
}

/** Code-point order of keys (the store's). */
export function byCodePoint(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

/** Mulberry32: a small seeded generator (same script for the same seed). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A settable clock for Store.open({ now }). */
export class Clock {
  t: number;
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start;
  }
  readonly now = (): number => this.t;
  tick(ms = 1000): number {
    this.t += ms;
    return this.t;
  }
  /**
   * A time at which every write of `store` so far is visible (the clock, or the newest commit's
   * time if a burst of commits ran ahead of it); then moves the clock past it, so later writes
   * are after it.
   */
  mark(store: Store): number {
    const t = Math.max(this.t, store.repo.lastCommitTime);
    this.t = t + 1000;
    return t;
  }
}

const utf8 = (s: string) => new TextEncoder().encode(s);

export async function putText(store: Store, bucket: string, key: string, body: string) {
  const b = utf8(body);
  return store.putObject(bucket, key, stream(b), { size: b.length });
}

/** One step of a script: what it did, and the time after which its commit is visible. */
export interface Step {
  what: string;
  /** The time of the step's commit (the state after it is readable from this time on). */
  time: number;
  snapshot: Map<string, string>;
  /** ListObjectVersions after it: [key, id, marker]. */
  versions: [string, string, boolean][];
}

/**
 * Runs `count` seeded random writes on `bucket` (PUT, DELETE, permanent removals, versioning
 * changes, tag rewrites) over `keys`, the clock ticking `tick` ms before each, and returns the
 * snapshot after each step (steps[0]: before any write, at the script's start). The model and
 * the store's current state are compared after every step.
 */
export async function runScript(
  store: Store,
  clock: Clock,
  bucket: string,
  model: BucketModel,
  opts: { seed: number; count: number; keys: string[]; tick?: number; versioningChanges?: boolean }
): Promise<Step[]> {
  const rnd = seeded(opts.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const steps: Step[] = [{ what: 'start', time: clock.mark(store), snapshot: model.snapshot(), versions: model.versions() }];
  for (let i = 0; i < opts.count; i++) {
    clock.tick(opts.tick ?? 1000);
    const key = pick(opts.keys);
    const roll = rnd();
    let what: string;
    if (opts.versioningChanges !== false && roll < 0.06) {
      const status = model.versioning === 'Enabled' ? 'Suspended' : 'Enabled';
      await store.putVersioning(bucket, status);
      model.versioning = status;
      what = `versioning ${status}`;
    } else if (roll < 0.2) {
      const res = await store.deleteObject(bucket, key);
      model.delete(key, res.versionId);
      what = `delete ${key}`;
    } else if (roll < 0.3 && model.ids(key).length > 0) {
      const id = pick(model.ids(key));
      await store.removeVersion(bucket, key, id);
      model.remove(key, id);
      what = `remove ${key}@${id}`;
    } else if (roll < 0.35 && model.snapshot().has(key)) {
      // A tag rewrite changes no history (it is not a write of the key).
      await store.putObjectTagging(bucket, key, { step: String(i) });
      what = `tag ${key}`;
    } else {
      const body = `${key}#${i}`;
      const res = await putText(store, bucket, key, body);
      model.put(key, body, res.versionId);
      what = `put ${key}`;
    }
    const snapshot = model.snapshot();
    // Its commit's time (an operation that wrote nothing leaves the previous one's).
    steps.push({ what, time: store.repo.lastCommitTime, snapshot, versions: model.versions() });
    const listed = await store.listObjects(bucket, { maxKeys: 1000 });
    expect(listed.contents.map((c) => c.key), `current state after step ${i} (${what})`).toEqual([...snapshot.keys()]);
  }
  return steps;
}
