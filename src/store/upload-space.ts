/**
 * @module A bucket's uploads keyspace in memory (its overlay, its runs, the count of uploads
 * in progress) and what each committed upload mutation writes into it.
 *
 * The overlay holds what changed since the last checkpoint; a checkpoint freezes it and flushes
 * it into a run, so an upload costs memory only until then. Transactions stage the very writes that
 * applying the mutation later makes (uploadWrites), so what a batch sees is what it commits.
 */
import { SortedMap } from './index/sorted-map.js';
import type { SortedSource } from './index/merge.js';
import type { Mutation } from './commit.js';
import type { RunHandle } from './state.js';
import { keyspaceLookup, keyspaceSources, type FrozenLayer, type Keyspace } from './keyspace.js';
import { completionKey, GONE, isGone, partKey, queueKey, uploadKey } from './upload-keys.js';

export type UploadMutation = Extract<Mutation, { op: 'beginUpload' | 'setPart' | 'closeUpload' | 'dropCompletion' }>;

const utf8 = new TextEncoder();

export class UploadSpace implements Keyspace {
  overlay = new SortedMap('uploads overlay');
  /**
   * Overlays frozen by a checkpoint in flight (checkpoint.ts), newest first; uploads do not
   * fork, so these are never shared.
   */
  frozen: FrozenLayer[] = [];
  /** Newest first. */
  runs: RunHandle[] = [];
  /** Uploads in progress (what the per-bucket cap counts). */
  count = 0;

  /** The value under `key`, or undefined when absent or deleted. Throws what reading a run throws. */
  async lookup(key: string): Promise<Uint8Array | undefined> {
    const v = await keyspaceLookup(this, key);
    return v && !isGone(v) ? v : undefined;
  }

  /** Sources for a merge, newest first. */
  sources(): SortedSource[] {
    return keyspaceSources(this);
  }
}

/** The keyspace writes of `m`, in order (an empty value deletes). Pure. */
export function uploadWrites(m: UploadMutation): [string, Uint8Array][] {
  switch (m.op) {
    case 'beginUpload':
      return [
        [uploadKey(m), m.record],
        [queueKey('u', m.initiated, m), utf8.encode(m.key)],
      ];
    case 'setPart':
      return [[partKey(m, m.number), m.record]];
    case 'closeUpload': {
      const w: [string, Uint8Array][] = [
        [uploadKey(m), GONE],
        [queueKey('u', m.initiated, m), GONE],
      ];
      if (m.completion) {
        w.push([completionKey(m), m.completion.record], [queueKey('c', m.completion.time, m), utf8.encode(m.key)]);
      }
      return w;
    }
    case 'dropCompletion':
      return [
        [completionKey(m), GONE],
        [queueKey('c', m.completed, m), GONE],
      ];
  }
}

/** How `m` changes the number of uploads in progress. */
export function uploadCountDelta(m: UploadMutation): number {
  return m.op === 'beginUpload' ? 1 : m.op === 'closeUpload' ? -1 : 0;
}

/** Applies one committed upload mutation to `space`. */
export function applyUploadMutation(space: UploadSpace, m: UploadMutation): void {
  for (const [k, v] of uploadWrites(m)) space.overlay.set(k, v);
  space.count += uploadCountDelta(m);
}
