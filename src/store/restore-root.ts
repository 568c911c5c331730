/**
 * @module Opening a root into memory: its buckets' runs, uploads and access keys.
 *
 * Used once, when a repository opens, before the commits after the root are replayed.
 */
import type { Provider } from '../provider/provider.js';
import type { BlockCache } from './index/block-cache.js';
import type { RootRecord } from './root.js';
import { BucketState, type RepoState, type RunHandle } from './state.js';
import { lazyRunHandle, openRunHandle } from './runs.js';
import { decodeKeyRecord } from './keys-record.js';

/**
 * Fills `state` (empty) from `root`: one BucketState per bucket with its runs opened (version
 * log runs lazily: history is read on demand), an STR1 root's uploads applied as keyspace
 * entries, and the access keys. Mutates only `state`; throws what opening a run throws.
 */
export async function restoreRoot(provider: Provider, cache: BlockCache, state: RepoState, root: RootRecord): Promise<void> {
  // Forks share runs: each run is opened once, whatever number of buckets name it.
  const opened = new Map<string, Promise<RunHandle>>();
  const open = (meta: Uint8Array) => {
    const id = Buffer.from(meta).toString('base64');
    let h = opened.get(id);
    if (!h) opened.set(id, (h = openRunHandle(provider, meta, cache)));
    return h;
  };
  const lazy = new Map<string, RunHandle>();
  const openLazy = (meta: Uint8Array) => {
    const id = Buffer.from(meta).toString('base64');
    let h = lazy.get(id);
    if (!h) lazy.set(id, (h = lazyRunHandle(provider, meta, cache)));
    return h;
  };
  for (const b of root.buckets) {
    const bucket = new BucketState(b.name, b.id, b.created);
    for (const [name, value] of b.configs) bucket.configs.set(name, value);
    bucket.runs = await Promise.all(b.runs.map(open));
    bucket.uploads.runs = await Promise.all(b.uploadRuns.map((meta) => openRunHandle(provider, meta, cache)));
    bucket.uploads.count = b.uploadCount;
    // History runs are opened when history is read (or compacted), not to open the repository.
    bucket.versions.runs = (b.versionRuns ?? []).map(openLazy);
    state.buckets.set(b.name, bucket);
  }
  // An STR1 root lists uploads in progress itself: they become keyspace entries, as their
  // creating commits would make them.
  for (const u of root.uploads) {
    state.apply({ op: 'createUpload', bucket: u.bucket, uploadId: u.uploadId, record: u.record });
    for (const [number, record] of u.parts) state.apply({ op: 'putPart', bucket: u.bucket, uploadId: u.uploadId, number, record });
  }
  for (const [id, record] of root.keys ?? []) state.keys.set(id, decodeKeyRecord(record, `key ${id} of root ${root.seq}`));
}
