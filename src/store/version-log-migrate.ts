/**
 * @module Building the version log of a repository written before it existed.
 *
 * Such a repository's root has no version log section. Opening it writes, for each bucket,
 * one log run holding every current object of the namespace as its key's null version at
 * position (0, 0) (version-id.ts LEGACY_POSITION), with its last-modified time as its commit
 * time; then a checkpoint names those runs. Streamed (namespace order is log order, one
 * entry per key), so memory stays that of a merge. Idempotent: only records without a log
 * position (pre-log ids read as `null` without `logId`) are taken, so a crash before the
 * checkpoint lands just repeats it at the next open.
 */
import type { Repository } from './repository.js';
import type { BucketState } from './state.js';
import { mergeSources } from './index/merge.js';
import { decodeVersions, isTombstone } from './records.js';
import { encodeEntry } from './version-log.js';
import { formatVersionId, LEGACY_POSITION, logKey } from './version-id.js';
import { writeVersionsRun } from './runs.js';

/** The log entries of `bucket`'s pre-log objects, in log key order. */
async function* legacyEntries(bucket: BucketState): AsyncGenerator<[string, Uint8Array]> {
  const it = mergeSources(bucket.sources());
  try {
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      const { key, value } = r.value;
      if (isTombstone(value)) continue;
      const v = decodeVersions(value, `${bucket.name}/${key}`)[0];
      if (!v || v.versionId !== 'null' || v.logId !== undefined) continue;
      const record = { ...v, logId: formatVersionId(LEGACY_POSITION) };
      yield [logKey(key, LEGACY_POSITION), encodeEntry({ kind: 'version', isNull: true, time: v.lastModified, record })];
    }
  } finally {
    await it.return();
  }
}

/**
 * Adds to each bucket of `repo` (restored from a pre-log root, commits replayed) a log run of
 * its pre-log objects, as the oldest run of its log. Mutates the buckets' version logs only;
 * the caller checkpoints. Throws what reading the index or writing a run throws.
 */
export async function migrateToVersionLog(repo: Repository): Promise<number> {
  let buckets = 0;
  for (const bucket of repo.state.buckets.values()) {
    const run = await writeVersionsRun(repo.provider, bucket.id, legacyEntries(bucket), repo.cache);
    if (!run) continue;
    bucket.versions.runs = [...bucket.versions.runs, run];
    buckets++;
  }
  return buckets;
}
