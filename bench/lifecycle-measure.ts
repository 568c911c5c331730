/**
 * @module The figures `bench:lifecycle` takes of a repository at rest: stored bytes (the sum of
 * blob sizes the provider lists, and the disk usage `du` reports), the full history walk (every
 * version-log entry of a bucket, each record decoded, as a ListObjectVersions that hides nothing
 * would read them), the accounted history metadata, and the live state checked byte-exact.
 */
import { execFileSync } from 'node:child_process';
import type { Provider } from '../src/provider/provider.js';
import type { Store } from '../src/store/store.js';
import { mergeSources } from '../src/store/index/merge.js';
import { decodeEntry, isLogTombstone } from '../src/store/version-log.js';
import { StoreError } from '../src/store/errors.js';
import { blobClass } from './lib/counting-provider.js';

/** Blobs and bytes the provider lists, in total and per blob class (`commits`, `runs`, ...). */
export interface StoredBytes {
  blobs: number;
  bytes: number;
  byClass: Record<string, { blobs: number; bytes: number }>;
}

/** Lists every blob of `provider` (pages of 1000) and sums their sizes. */
export async function storedBytes(provider: Provider): Promise<StoredBytes> {
  const out: StoredBytes = { blobs: 0, bytes: 0, byClass: {} };
  for (let after: string | undefined; ; ) {
    const page = await provider.list({ limit: 1000, ...(after !== undefined ? { startAfter: after } : {}) });
    for (const item of page.items) {
      out.blobs++;
      out.bytes += item.size;
      const c = (out.byClass[blobClass(item.key)] ??= { blobs: 0, bytes: 0 });
      c.blobs++;
      c.bytes += item.size;
    }
    if (page.next === undefined) break;
    after = page.next;
  }
  return out;
}

/** Bytes of disk `dir` occupies (allocated blocks, `du -s -B1`), or NaN where du is missing. */
export function diskUsage(dir: string): number {
  try {
    return Number(execFileSync('du', ['-s', '-B1', dir], { encoding: 'utf8' }).split(/\s/)[0]);
  } catch {
    return NaN;
  }
}

/** What one full walk of a bucket's version log saw. */
export interface WalkResult {
  entries: number;
  /** Entries expiry dropped whose tombstones the log still holds (until compaction removes them). */
  tombstones: number;
  /** Version entries (records decoded), absences (unversioned deletes), removed entries. */
  versions: number;
  absences: number;
  removed: number;
  /** Bytes of the live entries walked, log key (UTF-8) + value: what issue 10's history budget
   * accounts per entry, recounted here from the log itself. */
  logBytes: number;
  ms: number;
}

/**
 * Walks every entry of `bucket`'s version log (overlay and runs, merged) from the first key to
 * the last and decodes each entry with its record (tombstones of expired entries are counted
 * and stepped over, as every reader of the log does). Read-only. Throws StoreError 'NoSuchBucket'
 * and what reading the log throws (a damaged entry: 'Corrupt').
 */
export async function walkHistory(store: Store, bucket: string): Promise<WalkResult> {
  const b = store.repo.state.buckets.get(bucket);
  if (!b) throw new StoreError('NoSuchBucket', `no bucket ${bucket}`);
  const t0 = performance.now();
  const out: WalkResult = { entries: 0, tombstones: 0, versions: 0, absences: 0, removed: 0, logBytes: 0, ms: 0 };
  const it = mergeSources(b.versions.sources());
  for (;;) {
    const r = await it.next();
    if (r.done) break;
    if (isLogTombstone(r.value.value)) {
      out.tombstones++;
      continue;
    }
    const e = decodeEntry(r.value.value);
    out.entries++;
    out.logBytes += Buffer.byteLength(r.value.key, 'utf8') + r.value.value.length;
    if (e.kind === 'version') out.versions++;
    else out.absences++;
    if (e.removedAt !== undefined) out.removed++;
  }
  out.ms = performance.now() - t0;
  return out;
}

/** The repository's accounted history metadata (bytes), or undefined before the budget helper's field exists. */
export function historyBytes(store: Store): number | undefined {
  const v = (store.repo.state as unknown as { historyBytes?: unknown }).historyBytes;
  return typeof v === 'number' ? v : undefined;
}

/** What checking the live state against the expected one found. */
export interface LiveCheck {
  expected: number;
  /** Keys whose body was read back byte-exact. */
  exact: number;
  /** Expected keys missing, keys whose read failed (a lost body blob), keys with wrong bytes,
   * and listed keys not expected. */
  missing: number;
  unreadable: number;
  wrong: number;
  unexpected: number;
  firstProblem?: string;
}

/**
 * Reads every expected key back (GET, byte-exact against `bodyOf(write)`) and (unless
 * opts.listUnexpected is false) lists the bucket to find keys that should not exist. Read-only.
 */
export async function checkLive(store: Store, bucket: string, expected: Map<string, number>, bodyOf: (i: number) => Uint8Array, opts: { listUnexpected?: boolean } = {}): Promise<LiveCheck> {
  const out: LiveCheck = { expected: expected.size, exact: 0, missing: 0, unreadable: 0, wrong: 0, unexpected: 0 };
  const problem = (p: string) => (out.firstProblem ??= p);
  for (const [key, write] of expected) {
    let got: Buffer;
    try {
      const res = await store.getObject(bucket, key);
      const chunks: Uint8Array[] = [];
      for await (const c of res.body) chunks.push(c);
      got = Buffer.concat(chunks);
    } catch (err) {
      if (err instanceof StoreError && err.code === 'NoSuchKey') {
        out.missing++;
        problem(`${key} is missing`);
        continue;
      }
      out.unreadable++;
      problem(`${key} cannot be read: ${(err as Error).message}`);
      continue;
    }
    if (got.equals(bodyOf(write))) out.exact++;
    else {
      out.wrong++;
      problem(`${key} does not hold write ${write}`);
    }
  }
  for (let token: string | undefined; opts.listUnexpected !== false; ) {
    const page = await store.listObjects(bucket, { maxKeys: 1000, ...(token ? { continuationToken: token } : {}) });
    for (const e of page.contents) {
      if (!expected.has(e.key)) {
        out.unexpected++;
        problem(`${e.key} exists and should not`);
      }
    }
    if (!page.isTruncated) break;
    token = page.nextContinuationToken!;
  }
  return out;
}

/** True when the check found exactly the expected keys, every one byte-exact. */
export const liveOk = (c: LiveCheck): boolean => c.exact === c.expected && c.missing + c.unreadable + c.wrong + c.unexpected === 0;

/**
 * How a read as of a sampled point came out: 'exact' (the write it must show), 'refused' (the
 * time is outside the readable history: the right answer once the point expired), 'absent'
 * (the store says the key did not exist then: it did, so this is a wrong answer) or 'wrong'
 * (other bytes).
 */
export type PointRead = 'exact' | 'refused' | 'absent' | 'wrong';

/**
 * Reads `key` as of each time in `times` (GetObject with asOf) and compares the body with
 * `bodyOf(writes[i])` (see PointRead; StoreError 'InvalidArgument' is a refusal, 'NoSuchKey'
 * an absence). Read-only; throws what else the read throws.
 */
export async function readPoints(store: Store, bucket: string, reads: { key: string; time: number; write: number }[], bodyOf: (i: number) => Uint8Array): Promise<PointRead[]> {
  const out: PointRead[] = [];
  for (const r of reads) {
    try {
      const res = await store.getObject(bucket, r.key, { asOf: r.time });
      const chunks: Uint8Array[] = [];
      for await (const c of res.body) chunks.push(c);
      out.push(Buffer.concat(chunks).equals(bodyOf(r.write)) ? 'exact' : 'wrong');
    } catch (err) {
      if (err instanceof StoreError && err.code === 'InvalidArgument') out.push('refused');
      else if (err instanceof StoreError && err.code === 'NoSuchKey') out.push('absent');
      else throw err;
    }
  }
  return out;
}
