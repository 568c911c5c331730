/**
 * @module `strata verify`: walks a repository and checks everything it can.
 *
 *   1. the anchor, the newest root and the commit chain after it (hashes, sequence, links);
 *   2. every blob under commits/, roots/, chunks/, packs/: pack framing and every entry's CRC32C;
 *      every commit log segment under log/: each frame up to the log's end (checksum, then its
 *      pack image's framing and CRCs, then its record decodes; commit-log/scan.ts);
 *   3. every run the newest root names (object index, uploads keyspace, version log): footer, every
 *      block's CRC, key order, every entry decodes;
 *   4. every chunk the live index refers to exists (listed above): object bodies, and the
 *      parts of uploads in progress (verify-uploads.ts); each bucket's upload count matches.
 *
 * It reads everything once, streams nothing into memory beyond one blob at a time, reports
 * progress through a callback, and returns a report rather than throwing on damage.
 */
import { getBytes, type Provider } from '../provider/provider.js';
import { decodePack } from '../pack/reader.js';
import { readAnchor, loadChain } from './recovery.js';
import { decodeRoot } from './root.js';
import { readRecord } from './records-io.js';
import { BlockCache } from './index/block-cache.js';
import { decodeRunMeta } from './index/run-format.js';
import { openRun } from './index/run-reader.js';
import { FROM_START } from './index/merge.js';
import { decodeVersions, type ObjectVersion } from './records.js';
import type { CommitRecord } from './commit.js';
import type { RootRecord } from './root.js';
import { chainUploads, checkUploadEntry, legacyRecordKeys, referLegacyRootParts, referLiveParts } from './verify-uploads.js';
import { StoreError } from './errors.js';
import { CONFIG_KEY } from './layout.js';
import { deriveFrameKey, type FrameKey } from './commit-log/frame.js';
import { FORMAT } from './anchor.js';
import { checkLogEntry } from './version-log-verify.js';
import { verifyHistory } from './history-verify.js';
import { markRepository } from './gc-mark.js';
import { verifySegment, type FrameDamage } from './verify-segment.js';

/** Blob keys a version's body lives in. */
function bodyBlobs(v: ObjectVersion): string[] {
  if (v.location.kind === 'pack') return [v.location.blob];
  if (v.location.kind === 'chunks') return v.location.chunks.map((c) => c.blob);
  return [];
}

export interface VerifyProblem {
  blob: string;
  code: string;
  message: string;
  /** What the damage reaches: `bucket/key` of objects (or `upload <id>`) whose bodies live
   * in `blob`, at most MAX_AFFECTED_NAMES of them; absent when none is known. */
  affects?: string[];
  /** How many more objects than `affects` lists. */
  affectsMore?: number;
}

/** Object names kept per damaged blob: enough to act on, bounded for a pack of thousands. */
export const MAX_AFFECTED_NAMES = 20;

export interface VerifyReport {
  ok: boolean;
  anchorSeq: number;
  rootSeq: number;
  commitsInChain: number;
  blobs: number;
  bytes: number;
  runs: number;
  runEntries: number;
  problems: VerifyProblem[];
  /** Chunks and packs that cannot be read but that nothing reaches from the anchor or refers
   * to: the leftovers of a write that never committed (on the erasure provider, a put killed
   * before k fragments landed). They harm no object, GC deletes them, and they do not make the
   * report damaged; a blob the anchor reaches, and any root or commit blob, is a problem. */
  garbage: VerifyProblem[];
}

export type VerifyProgress = (p: { phase: string; done: number; total: number; bytes: number }) => void;

/** Prefixes of blobs written before the commit that names them (carrier chunks and parts,
 * packs pack cleaning writes before re-pointing): a crash can leave one torn and unnamed. */
const UNCOMMITTED_PREFIXES = ['chunks/', 'packs/'] as const;

const codeOf = (err: unknown) => (err as { code?: string }).code ?? 'Error';
const msgOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function listAll(provider: Provider, prefix: string): Promise<{ key: string; size: number }[]> {
  const out: { key: string; size: number }[] = [];
  let startAfter: string | undefined;
  for (;;) {
    // Keys and sizes only: without etags a provider need not read each blob to list it, and a
    // blob whose header is damaged is listed (its read below reports it) instead of failing
    // the listing of everything.
    const page = await provider.list({ prefix, etags: false, ...(startAfter ? { startAfter } : {}) });
    for (const i of page.items) out.push({ key: i.key, size: i.size });
    if (!page.next) return out;
    startAfter = page.next;
  }
}

export async function verifyRepository(provider: Provider, progress: VerifyProgress = () => undefined): Promise<VerifyReport> {
  const report: VerifyReport = { ok: false, anchorSeq: -1, rootSeq: -1, commitsInChain: 0, blobs: 0, bytes: 0, runs: 0, runEntries: 0, problems: [], garbage: [] };
  const problem = (blob: string, err: unknown) => report.problems.push({ blob, code: codeOf(err), message: msgOf(err) });

  // 0. The configuration (format, repository id, token secret) must parse. Its secret keys the
  // commit log's frames (commit-log/frame.ts): without it, keyed segments cannot be checked.
  let frameKey: FrameKey | undefined;
  try {
    const config = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(await getBytes(provider, CONFIG_KEY))) as { format?: unknown; tokenSecret?: unknown };
    if (config.format !== FORMAT || typeof config.tokenSecret !== 'string' || !/^[0-9a-f]{64}$/.test(config.tokenSecret)) {
      throw new StoreError('Corrupt', `${CONFIG_KEY} does not hold a valid ${FORMAT} configuration`);
    }
    frameKey = deriveFrameKey(config.tokenSecret);
  } catch (err) {
    problem(CONFIG_KEY, err instanceof SyntaxError || err instanceof TypeError ? new StoreError('Corrupt', `${CONFIG_KEY} is not valid JSON`) : err);
  }

  // 1. Anchor, root, chain.
  // A run shared by forks is checked once, its objects named under every bucket sharing it.
  let runMetas: { buckets: string[]; bytes: Uint8Array; uploads: boolean; versions: boolean }[] = [];
  let chain: CommitRecord[] = [];
  let root: RootRecord | undefined;
  const referenced = new Map<string, { names: string[]; more: number }>(); // blob -> who refers to it
  const refer = (blob: string, by: string) => {
    let r = referenced.get(blob);
    if (!r) referenced.set(blob, (r = { names: [], more: 0 }));
    if (r.names.includes(by)) return;
    if (r.names.length < MAX_AFFECTED_NAMES) r.names.push(by);
    else r.more++;
  };
  try {
    const found = await readAnchor(provider);
    if (!found) throw new StoreError('MissingBlob', 'anchor is missing: not a Strata repository');
    report.anchorSeq = found.anchor.seq;
    root = decodeRoot(await readRecord(provider, found.anchor.root, 'root'), found.anchor.root.key);
    report.rootSeq = root.seq;
    const byMeta = new Map<string, { buckets: string[]; bytes: Uint8Array; uploads: boolean; versions: boolean }>();
    for (const b of root.buckets) {
      const lists = [['o', b.runs], ['u', b.uploadRuns], ['v', b.versionRuns ?? []]] as const;
      for (const [kind, list] of lists) {
        for (const bytes of list) {
          const id = `${kind}${Buffer.from(bytes).toString('base64')}`;
          const known = byMeta.get(id);
          if (known) known.buckets.push(b.name);
          else byMeta.set(id, { buckets: [b.name], bytes, uploads: kind === 'u', versions: kind === 'v' });
        }
      }
    }
    runMetas = [...byMeta.values()];
    chain = await loadChain(provider, found.anchor, root, frameKey);
    report.commitsInChain = chain.length;
    for (const c of chain) {
      for (const m of c.mutations) {
        // A fork as of a past time brings its own runs: checked like a root's.
        if (m.op === 'forkBucketAt') {
          runMetas.push(...m.runs.map((bytes) => ({ buckets: [m.bucket], bytes, uploads: false, versions: false })));
          runMetas.push(...m.versionRuns.map((bytes) => ({ buckets: [m.bucket], bytes, uploads: false, versions: true })));
        }
        if (m.op === 'put') for (const v of decodeVersions(m.value)) for (const b of bodyBlobs(v)) refer(b, `${m.bucket}/${m.key}`);
        if (m.op === 'putVersion' || m.op === 'rewriteVersion') {
          const v = checkLogEntry(m.entry);
          if (v) for (const b of bodyBlobs(v)) refer(b, `${m.bucket}/${m.key}`);
        }
      }
    }
  } catch (err) {
    problem((err as StoreError).message?.match(/(commits|roots|log)\/[0-9a-f-]+/)?.[0] ?? 'anchor', err);
  }

  // 2. Every pack-framed blob.
  // packs/: packs written by GC's pack cleaning (gc-pack.ts), framed like commit blobs.
  const blobs = [...(await listAll(provider, 'commits/')), ...(await listAll(provider, 'roots/')), ...(await listAll(provider, 'chunks/')), ...(await listAll(provider, 'packs/'))];
  let done = 0;
  const vanished = new Set<string>(); // listed, then gone: a concurrent writer's uncommitted chunks
  /** Blobs that failed to read: damage if the anchor reaches them, garbage otherwise (step 4). */
  const unreadable = new Map<string, unknown>();
  for (const b of blobs) {
    try {
      decodePack(await getBytes(provider, b.key));
    } catch (err) {
      if ((err as { code?: string }).code === 'NotFound') vanished.add(b.key);
      else unreadable.set(b.key, err);
    }
    done++;
    report.blobs++;
    report.bytes += b.size;
    if (done % 64 === 0 || done === blobs.length) progress({ phase: 'packs', done, total: blobs.length, bytes: report.bytes });
  }

  // 2b. Commit log segments: frame by frame to the end of what was ever appended whole; a
  // damaged frame names the objects whose bodies it held (verify-segment.ts).
  const segments = await listAll(provider, 'log/');
  /** Objects named by the damaged frames of segments: reported instead of every object there. */
  const frameDamage = new Map<string, FrameDamage>();
  for (const seg of segments) {
    try {
      await verifySegment(provider, seg.key, MAX_AFFECTED_NAMES, frameKey);
    } catch (err) {
      const damage = (err as { damage?: FrameDamage }).damage;
      if (damage) frameDamage.set(seg.key, damage);
      if ((err as { code?: string }).code === 'NotFound' || (err as { code?: string }).code === 'MissingBlob') vanished.add(seg.key);
      else unreadable.set(seg.key, err);
    }
    report.blobs++;
    report.bytes += seg.size;
  }
  blobs.push(...segments);

  // 3. Runs named by the newest root: every block read and checked.
  const cache = new BlockCache({ maxBytes: 4 * 1024 * 1024 });
  done = 0;
  for (const { buckets, bytes, uploads, versions } of runMetas) {
    let key = `(run meta of bucket ${buckets[0]})`;
    try {
      const meta = decodeRunMeta(bytes);
      key = meta.blobKey;
      const run = await openRun(provider, meta, cache);
      const it = run.scan(FROM_START);
      let n = 0;
      for (;;) {
        const r = await it.next();
        if (r.done) break;
        const batch = r.value;
        for (let i = batch.start; i < batch.keys.length; i++) {
          if (uploads) checkUploadEntry(batch.keys[i]!, batch.valueAt(i));
          else if (versions) {
            const v = checkLogEntry(batch.valueAt(i), batch.keys[i]!);
            if (v) for (const b of bodyBlobs(v)) for (const bucket of buckets) refer(b, `${bucket}/${v.key}`);
          } else for (const v of decodeVersions(batch.valueAt(i))) for (const b of bodyBlobs(v)) for (const bucket of buckets) refer(b, `${bucket}/${batch.keys[i]!}`);
        }
        n += batch.keys.length - batch.start;
      }
      if (n !== meta.entryCount) throw new StoreError('Corrupt', `${key}: ${n} entries, footer says ${meta.entryCount}`);
      report.runEntries += n;
      report.bytes += meta.size;
    } catch (err) {
      problem(key, err);
    }
    report.runs++;
    progress({ phase: 'runs', done: ++done, total: runMetas.length, bytes: report.bytes });
  }
  // 3b. Uploads in progress: their counts, and the parts whose chunks must exist.
  if (root) {
    try {
      const changes = chainUploads(root, chain);
      referLegacyRootParts(root, changes, refer);
      const names = new Set([...root.buckets.map((b) => b.name), ...changes.keys()]);
      for (const name of names) {
        const b = root.buckets.find((x) => x.name === name);
        try {
          const runs = await Promise.all((b?.uploadRuns ?? []).map((m) => openRun(provider, decodeRunMeta(m), cache)));
          const live = await referLiveParts(name, runs, changes.get(name), refer, legacyRecordKeys(root, name));
          if (b && live !== b.uploadCount) {
            throw new StoreError('Corrupt', `bucket ${name}: the root counts ${b.uploadCount} uploads in progress, its uploads index holds ${live}`);
          }
        } catch (err) {
          problem(`bucket ${name} uploads`, err);
        }
      }
    } catch (err) {
      problem('uploads', err);
    }
  }

  // 3c. The history account the root and the chain record matches the logs (history-verify.ts).
  if (root) for (const p of await verifyHistory(provider, root, chain)) problem(p.blob, p.error);

  // 4. Every body blob the index refers to exists. Referred to means as reads see the index:
  // each key's newest entry (gc-mark.ts walks it merged). An entry shadowed by a newer one in
  // a newer run (an overwrite, a re-pointing by pack cleaning, an expired log entry) reads
  // nothing, so GC may have freed its body. When the merged walk itself fails (damage already
  // reported above), every entry read counts.
  const present = new Set(blobs.filter((b) => !vanished.has(b.key)).map((b) => b.key));
  const reached = await markRepository(provider).then((m) => m.live, () => undefined);
  // An unreadable chunk or GC pack nothing reaches is an uncommitted write's leftover (both
  // are written before the commit that names them); when the mark itself failed (damage
  // reported above) nothing can be called garbage. Roots and commit blobs stay damage either
  // way: the chain names them, and an old one damaged says the disk is failing.
  for (const [blob, err] of unreadable) {
    if (UNCOMMITTED_PREFIXES.some((x) => blob.startsWith(x)) && reached && !reached.has(blob) && !referenced.has(blob)) {
      report.garbage.push({ blob, code: codeOf(err), message: `${msgOf(err)} (reached by nothing: garbage GC deletes)` });
    } else problem(blob, err);
  }
  for (const [blob, by] of referenced) {
    if (!present.has(blob) && (!reached || reached.has(blob))) report.problems.push({ blob, code: 'MissingBlob', message: `${blob} is missing (body of ${by.names[0]})` });
  }
  // 5. Name what each damaged blob reaches, so the operator knows which objects to restore.
  for (const p of report.problems) {
    // A damaged log frame whose record still reads names exactly the objects it damaged (a
    // segment holds thousands of commits: naming every object in it would say little).
    const d = frameDamage.get(p.blob);
    if (d && d.names.length > 0) {
      p.affects = d.names;
      if (d.more) p.affectsMore = d.more;
      continue;
    }
    const r = referenced.get(p.blob);
    if (!r) continue;
    p.affects = r.names;
    if (r.more) p.affectsMore = r.more;
  }
  report.ok = report.problems.length === 0;
  return report;
}
