/**
 * @module One streaming pass over a striped blob: every present fragment read once, in large
 * ranged reads with the next group read ahead, every block's CRC32C checked, header and
 * trailer checked against the name, and, when fragments are missing, those rebuilt from the
 * verified cells with the codec and streamed to their target domains in the same pass.
 *
 * This is scrub's unit of work for striped blobs (check.ts): verifying a blob and repairing
 * it cost one read of each present fragment, where checking every fragment and then
 * rebuilding (rebuild.ts, which reads k fragments again, one stripe at a time) cost two. The
 * pass works a group of whole stripes at a time: each source fragment's group is one read of
 * its framed cells (the header joins the first read, the trailer the last), and the checking,
 * rebuilding and framing of a group (stripe-group.ts) runs on a worker thread when there is
 * one (pass-pool.ts) while this thread reads the next group. When every source is a local file
 * (fs domains: Provider.blobFilePath) the worker reads the group itself, with synchronous
 * positional reads into buffers it reuses: a repair of a wiped (10,4) domain took 20-30% less
 * wall time and 15-25% less CPU than with this thread's asynchronous reads (a thread-pool round
 * trip and a fresh buffer per source and group; 3 runs each, interleaved). A worker that does
 * not answer within the domain timeout (a read hanging on a dead disk) is given up, and the pass
 * goes on with this thread's reads, whose per-domain timeouts find the domain that hangs.
 *
 * A source that fails (read error, bad block, bad header or trailer) is dropped from then on
 * and reported with its state; the rebuilt fragments only ever use verified bytes. With fewer
 * than k verified sources left the targets are failed (nothing partial is kept: FragmentSink
 * aborts the child put) and the blob is reported as it stands.
 *
 * With `needed` (a missing-only repair, scrub.ts) the pass reads only k sources, data first,
 * and when one fails the next present fragment joins from that group on (its header read and
 * checked on its own) and the group is read again; what it never read, or read only from a
 * later group on, is returned as `unchecked`, never as verified.
 */
import { getBytes, ProviderError } from '../provider.js';
import { encodeHeader, encodeTrailer, FragmentError, keyHash } from './fragment.js';
import { framedLength, HEADER_BYTES, type Geometry } from './geometry.js';
import { recycle, runGroup, workerCanRead, WorkerReadFailed } from './pass-pool.js';
import { checkHeader, type GroupJob, type GroupResult } from './stripe-group.js';
import { nameOf, type BlobMeta } from './lookup.js';
import { geometryOf, type ReadContext } from './read.js';
import type { RebuildResult } from './rebuild.js';
import { FragmentSink } from './sink.js';
import { descriptorsGone, isDomainFailure } from './domains.js';
import type { FragmentState } from './types.js';

/** Bytes one blob's pass may hold: (read ahead + being read + unframed) per source fragment
 * come to about 3 groups each, so a group is PASS_BYTES / (3 (k + m)), at least one stripe.
 * 16 MiB: a (4,2) pass reads 3 cells of 256 KiB per call, a (10,4) pass one; scrub runs
 * `concurrency` passes at once (8 on a stopped repository: 128 MiB at most). */
export const PASS_BYTES = 16 * 2 ** 20;

export interface PassResult {
  /** State of every fragment index after the pass ('missing' for those not present). An index
   * in `unchecked` reads 'ok' here but was not verified. */
  states: FragmentState[];
  /** Present fragments the pass did not verify whole (`needed`: not read, or read only from a
   * later group on, as a spare); ascending. Never to be reported as verified. */
  unchecked: number[];
  /** One per target, in the order given. */
  rebuilt: RebuildResult[];
}

function stateOf(err: unknown): FragmentState {
  if (err instanceof ProviderError) {
    if (err.code === 'Aborted') throw err;
    if (err.code === 'NotFound') return 'missing';
    if (err.code === 'Unavailable') return 'unreachable';
  }
  return 'corrupt';
}

/** Bytes of each source fragment a group read by a worker (GroupJob.files) covers at least:
 * such a group costs a message and an open per source however small, and its bytes are held
 * only in the worker's reused scratch, not in this thread. At (10,4) with 256 KiB cells,
 * PASS_BYTES alone gives one stripe per group, and a whole 8 MiB blob per group measured 10-20%
 * less CPU for a repair of a wiped domain (3 runs each, interleaved). */
export const WORKER_GROUP_BYTES = 1024 * 1024;

/** What a group read by a worker around the page cache (GroupJob.files `direct`) covers of each
 * source at least: a direct read has no read-ahead, so its thread waits on the device for every
 * read, and fewer, larger reads wait less. A (10,4) repair of a wiped domain (1.3 GiB, every
 * fragment read from the device, 4 workers): 5.5-6.2 s with 2 MiB groups, 6.8 s with 1 MiB,
 * 5.6-5.9 s with 4 MiB. A worker holds a group of every source of a blob at once (k + m of
 * them: 28 MiB at (10,4)). */
export const DIRECT_GROUP_BYTES = 2 * 1024 * 1024;

/** Stripes per group for `meta` (see PASS_BYTES; `byWorker`: at least WORKER_GROUP_BYTES, or
 * DIRECT_GROUP_BYTES when the worker reads `direct`). */
export function groupStripes(meta: BlobMeta, byWorker = false, direct = false): number {
  const cell = framedLength(meta.cellSize);
  const per = Math.max(1, Math.floor(PASS_BYTES / (3 * (meta.k + meta.m)) / cell));
  return byWorker ? Math.max(per, Math.ceil((direct ? DIRECT_GROUP_BYTES : WORKER_GROUP_BYTES) / cell)) : per;
}

export interface PassOptions {
  signal?: AbortSignal;
  /**
   * Read only what rebuilding the targets needs (default false: every present fragment): k
   * sources, data fragments first (lowest indices), each verified block by block as usual;
   * when one fails, the next present fragment joins from that group on (its header checked
   * too) and the group is read again. The fragments never read, and those that joined late,
   * are listed in `unchecked`. Without targets it reads everything, as without it.
   */
  needed?: boolean;
}

/**
 * Verifies every present fragment of striped `meta` (with `options.needed` and targets: only
 * k of them, see PassOptions) and writes fragment `i` to domain `d` for each [i, d] of
 * `targets` (fragments not present; rebuilt from verified cells only). Resolves with every
 * fragment's state and each target's outcome; rejects for an abort, or when a worker thread
 * fails (pass-pool.ts), after failing the targets (nothing is kept). Does not update `meta`.
 */
export async function verifyAndRebuild(
  ctx: ReadContext,
  meta: BlobMeta,
  targets: ReadonlyMap<number, string>,
  options: PassOptions = {}
): Promise<PassResult> {
  const signal = options.signal;
  const g = geometryOf(meta);
  const states: FragmentState[] = meta.fragments.map((d) => (d === undefined ? 'missing' : 'ok'));
  const present: number[] = [];
  meta.fragments.forEach((d, i) => d !== undefined && !targets.has(i) && present.push(i));
  const needed = options.needed === true && targets.size > 0;
  // With `needed`: the first k present (data before parity: a data target is then rebuilt
  // with no parity row computed, stripe-group.ts), the rest spares in index order; `joined`
  // is the group a spare joined at.
  const sources = new Set<number>(needed ? present.slice(0, meta.k) : present);
  const spares = needed ? present.slice(meta.k) : [];
  const joined = new Map<number, number>();
  const targetIdx = [...targets.keys()];
  // Sized for k + m readers also when `needed` reads k: larger groups (and 32 MiB passes)
  // measured no less CPU per byte (10+4, 3 runs side by side, load 8-17).
  // Fs domains: a worker thread reads each group's sources itself (filePaths); else this
  // thread reads them, the next group ahead while a worker checks this one.
  let paths = filePaths(ctx, meta, present);
  const per = groupStripes(meta, paths !== undefined && workerCanRead(), paths !== undefined && [...paths.values()].every((f) => f.direct));
  const sinks = targetIdx.map(
    // Written outputs go back to the pool for the next groups' (pass-pool.ts recycle).
    (i) => new FragmentSink(ctx.domains, targets.get(i)!, nameOf(meta, i), g.fragmentSize, 2 * per * framedLength(meta.cellSize), recycle)
  );
  let folds = targetIdx.map(() => 0);
  const hash = keyHash(meta.key);
  const fail = (i: number, err: unknown) => {
    if (!sources.delete(i)) return;
    states[i] = stateOf(err);
    ctx.onDamaged(meta, i, meta.fragments[i], (err as Error)?.message ?? String(err));
  };
  let tooFew = false;
  try {
    targetIdx.forEach((i, j) =>
      sinks[j]!.push(
        encodeHeader({ layout: 'striped', k: meta.k, m: meta.m, index: i, cellSize: meta.cellSize, length: meta.length, generation: meta.generation, keyHash: hash })
      )
    );
    const groups = Math.max(1, Math.ceil(g.stripes / per));
    const read = (grp: number) => readGroup(ctx, meta, g, [...sources], grp, per, groups);
    const byWorker = () => paths !== undefined && workerCanRead();
    let ahead = byWorker() ? undefined : read(0);
    for (let grp = 0; grp < groups; grp++) {
      if (signal?.aborted) throw new ProviderError('Aborted', `${meta.key}: check aborted`);
      let got = ahead && (await ahead);
      ahead = undefined;
      if (grp + 1 < groups && !byWorker()) {
        ahead = read(grp + 1);
        ahead.catch(() => undefined);
      }
      const job: GroupJob = {
        key: meta.key, k: meta.k, m: meta.m, cellSize: meta.cellSize, length: g.length, generation: meta.generation, keyHash: hash,
        s0: grp * per, s1: Math.min(g.stripes, (grp + 1) * per), first: grp === 0, last: grp === groups - 1,
        sources: [], targets: targetIdx, folds,
      };
      const fill = (from: Map<number, Uint8Array | Error>) => {
        job.sources = [];
        job.files = undefined;
        for (const [i, r] of from) {
          if (!sources.has(i)) continue;
          if (r instanceof Error) fail(i, r);
          else job.sources.push({ index: i, bytes: r });
        }
      };
      // Runs the job over every source: read by a worker while `paths` holds, else read here
      // (a worker that gave up on its reads hands the pass back to this thread's reads, whose
      // domain timeouts find the domain that hangs).
      const run = async (fresh: Map<number, Uint8Array | Error> | undefined): Promise<GroupResult> => {
        if (!fresh && paths) {
          const span = groupSpan(g, grp, per, groups);
          job.sources = [];
          job.files = [...sources].map((i) => ({ index: i, ...paths!.get(i)!, start: span.start, length: span.length }));
          try {
            return await runGroup(job, () => ctx.codec(meta.k, meta.m), ctx.domains.timeoutMs);
          } catch (err) {
            if (!(err instanceof WorkerReadFailed) && !(err instanceof ProviderError && err.code === 'Io')) throw err;
            paths = undefined;
          }
        }
        fill(fresh ?? (await readGroup(ctx, meta, g, [...sources], grp, per, groups)));
        return runGroup(job, () => ctx.codec(meta.k, meta.m));
      };
      const failed = async (res: GroupResult) => {
        const errors = await Promise.all(res.failed.map((f) => readFailure(ctx, meta, f)));
        res.failed.forEach((f, i) => fail(f.index, errors[i]!));
      };
      if (got) {
        // Sources that joined after the read ahead started are read for this group now.
        const late = [...sources].filter((i) => !got!.has(i));
        if (late.length) for (const [i, r] of await readGroup(ctx, meta, g, late, grp, per, groups)) got.set(i, r);
      }
      let res = await run(got);
      await failed(res);
      // `needed`: a source failed, so spares join (header checked when past the first group)
      // and the group is read again from every source (the bytes went to the worker).
      while (needed && res.good < meta.k && spares.length > 0) {
        const add = spares.splice(0, meta.k - res.good);
        for (const i of add) {
          sources.add(i);
          joined.set(i, grp);
          if (grp > 0) await checkSpareHeader(ctx, meta, job, i).catch((err: unknown) => fail(i, err));
        }
        res = await run(undefined);
        await failed(res);
      }
      if (targetIdx.length === 0 || sinks.every((x) => x.failed)) continue;
      if (res.good < meta.k) {
        tooFew = true;
        throw new ProviderError('Io', `${meta.key}: only ${res.good} verified fragments of the ${meta.k} needed to rebuild`);
      }
      folds = res.folds;
      res.outputs.forEach((out, j) => sinks[j]!.push(out));
      await Promise.all(sinks.map((x) => x.drained()));
    }
    targetIdx.forEach((_, j) => sinks[j]!.push(encodeTrailer({ length: g.length, blockCount: g.blockCount, fold: folds[j]! })));
    sinks.forEach((x) => x.end());
  } catch (err) {
    for (const x of sinks) x.fail(err);
    await Promise.allSettled(sinks.map((x) => x.done));
    // Too few good sources: the states say why. Anything else (an abort, a failed worker) leaves
    // sources unverified: the caller must not report them ok.
    if (!tooFew) throw err;
  }
  const settled = await Promise.allSettled(sinks.map((x) => x.done));
  const rebuilt = settled.map((r, j) => ({
    index: targetIdx[j]!,
    domain: targets.get(targetIdx[j]!)!,
    ok: r.status === 'fulfilled',
    bytes: r.status === 'fulfilled' ? g.fragmentSize : 0,
    ...(r.status === 'rejected' ? { error: String((r.reason as Error)?.message ?? r.reason) } : {}),
  }));
  // Not verified whole: never read, or joined after the first group (and not found bad).
  const unchecked = present.filter((i) => states[i] === 'ok' && (!sources.has(i) || (joined.get(i) ?? 0) > 0));
  return { states, unchecked, rebuilt };
}

/** Reads fragment `i`'s header and checks it (a spare joining a pass after its first group).
 * Throws the read's error or FragmentError. */
async function checkSpareHeader(ctx: ReadContext, meta: BlobMeta, job: GroupJob, i: number): Promise<void> {
  const child = nameOf(meta, i);
  const bytes = await ctx.domains.readBlob(meta.fragments[i]!, child, (p) => getBytes(p, child, { start: 0, end: HEADER_BYTES - 1 }));
  if (bytes.length !== HEADER_BYTES) throw new FragmentError(`${child}: fragment is short (${bytes.length} of ${HEADER_BYTES} header bytes)`);
  checkHeader(job, i, bytes);
}

/** Reads group `grp` of every source: one ranged read each (header and trailer included at the
 * ends). Resolves per source with the bytes or the error (never rejects but for an abort). */
async function readGroup(
  ctx: ReadContext,
  meta: BlobMeta,
  g: Geometry,
  sources: number[],
  grp: number,
  per: number,
  groups: number
): Promise<Map<number, Uint8Array | Error>> {
  const { start, length } = groupSpan(g, grp, per, groups);
  const end = start + length;
  const out = new Map<number, Uint8Array | Error>();
  await Promise.all(
    sources.map(async (i) => {
      const child = nameOf(meta, i);
      try {
        const bytes = await ctx.domains.readBlob(meta.fragments[i]!, child, (p) => getBytes(p, child, { start, end: end - 1 }));
        if (bytes.length !== end - start) throw new FragmentError(`${child}: fragment is short (${bytes.length} of ${end - start} bytes at ${start})`);
        out.set(i, bytes);
      } catch (err) {
        if (err instanceof ProviderError && err.code === 'Aborted') throw err;
        out.set(i, err as Error);
      }
    })
  );
  return out;
}

/** The bytes of every source fragment that group `grp` reads: its framed cells, with the header
 * on the first group and the trailer on the last. */
function groupSpan(g: Geometry, grp: number, per: number, groups: number): { start: number; length: number } {
  const start = grp === 0 ? 0 : g.sectionOffset(grp * per);
  const end = grp === groups - 1 ? g.fragmentSize : g.sectionOffset(Math.min(g.stripes, (grp + 1) * per));
  return { start, length: end - start };
}

/**
 * The blob file of each of `present`'s fragments, when a worker thread can read them all
 * itself: every one on a domain whose provider keeps its blobs in local files
 * (Provider.blobFilePath) and not failed of late (a failed domain is read here, under its
 * timeout), with whether to read it around the page cache (Provider.directFileReads). Else
 * undefined.
 */
function filePaths(ctx: ReadContext, meta: BlobMeta, present: number[]): Map<number, { path: string; direct: boolean }> | undefined {
  const out = new Map<number, { path: string; direct: boolean }>();
  try {
    for (const i of present) {
      const id = meta.fragments[i]!;
      const p = ctx.domains.get(id).provider;
      if (!p.blobFilePath || ctx.domains.isFailed(id)) return undefined;
      out.set(i, { path: p.blobFilePath(nameOf(meta, i)), direct: p.directFileReads === true });
    }
  } catch {
    return undefined;
  }
  return out;
}

/** The error a worker's read or check of fragment `f.index` stands for, as this thread's own read
 * would have raised it: no file is 'missing'; a read failing as a domain fails (isDomainFailure)
 * marks the domain failed ('unreachable', as DomainSet.call does), except a media error (EIO...)
 * while the domain answers a probe, which is that fragment's (blobReadFailed); bytes that fail a check,
 * and a file its domain says is damaged ('Corrupt': not a blob file), are a FragmentError. */
async function readFailure(ctx: ReadContext, meta: BlobMeta, f: GroupResult['failed'][number]): Promise<Error> {
  if (f.code === 'NotFound') return new ProviderError('NotFound', f.message);
  if (f.code === undefined || !isDomainFailure(new ProviderError(f.code, f.message))) return new FragmentError(f.message);
  const domain = meta.fragments[f.index]!;
  // No descriptor left in the worker's process: the process's condition, not the domain's.
  if (f.descriptors) return descriptorsGone(domain, `read ${nameOf(meta, f.index)}`, new Error(f.message));
  if (f.code === 'Io' && f.media) {
    // One file's media error while the domain answers is that fragment's damage (blobReadFailed).
    const judged = await ctx.domains.blobReadFailed(domain, `read ${nameOf(meta, f.index)} failed`, new ProviderError('Io', f.message));
    return judged.code === 'Corrupt' ? new FragmentError(judged.message) : judged;
  }
  const err = new ProviderError('Unavailable', `domain ${domain}: read ${nameOf(meta, f.index)} failed: ${f.message}`);
  ctx.domains.markFailed(domain, err);
  return err;
}
