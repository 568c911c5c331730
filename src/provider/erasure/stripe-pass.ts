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
 * one (pass-pool.ts) while this thread reads the next group.
 *
 * A source that fails (read error, bad block, bad header or trailer) is dropped from then on
 * and reported with its state; the rebuilt fragments only ever use verified bytes. With fewer
 * than k verified sources left the targets are failed (nothing partial is kept: FragmentSink
 * aborts the child put) and the blob is reported as it stands.
 */
import { getBytes, ProviderError } from '../provider.js';
import { encodeHeader, encodeTrailer, FragmentError, keyHash } from './fragment.js';
import { framedLength, type Geometry } from './geometry.js';
import { runGroup } from './pass-pool.js';
import type { GroupJob } from './stripe-group.js';
import { nameOf, type BlobMeta } from './lookup.js';
import { geometryOf, type ReadContext } from './read.js';
import type { RebuildResult } from './rebuild.js';
import { FragmentSink } from './sink.js';
import type { FragmentState } from './types.js';

/** Bytes one blob's pass may hold: (read ahead + being read + unframed) per source fragment
 * come to about 3 groups each, so a group is PASS_BYTES / (3 (k + m)), at least one stripe.
 * 16 MiB: a (4,2) pass reads 3 cells of 256 KiB per call, a (10,4) pass one; scrub runs
 * `concurrency` passes at once (8 on a stopped repository: 128 MiB at most). */
export const PASS_BYTES = 16 * 2 ** 20;

export interface PassResult {
  /** State of every fragment index after the pass ('missing' for those not present). */
  states: FragmentState[];
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

/** Stripes per group for `meta` (see PASS_BYTES). */
export function groupStripes(meta: BlobMeta): number {
  const per = Math.floor(PASS_BYTES / (3 * (meta.k + meta.m)));
  return Math.max(1, Math.floor(per / framedLength(meta.cellSize)));
}

/**
 * Verifies every present fragment of striped `meta` and writes fragment `i` to domain `d` for
 * each [i, d] of `targets` (fragments not present; rebuilt from the verified ones). Resolves
 * with every fragment's state and each target's outcome; rejects for an abort, or when a
 * worker thread fails (pass-pool.ts), after failing the targets (nothing is kept). Does not
 * update `meta`.
 */
export async function verifyAndRebuild(
  ctx: ReadContext,
  meta: BlobMeta,
  targets: ReadonlyMap<number, string>,
  signal?: AbortSignal
): Promise<PassResult> {
  const g = geometryOf(meta);
  const n = meta.k + meta.m;
  const states: FragmentState[] = meta.fragments.map((d) => (d === undefined ? 'missing' : 'ok'));
  const sources = new Set<number>();
  meta.fragments.forEach((d, i) => d !== undefined && !targets.has(i) && sources.add(i));
  const targetIdx = [...targets.keys()];
  const sinks = targetIdx.map(
    (i) => new FragmentSink(ctx.domains, targets.get(i)!, nameOf(meta, i), g.fragmentSize, 2 * groupStripes(meta) * framedLength(meta.cellSize))
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
    const per = groupStripes(meta);
    const groups = Math.max(1, Math.ceil(g.stripes / per));
    const read = (grp: number) => readGroup(ctx, meta, g, [...sources], grp, per, groups);
    let ahead = read(0);
    for (let grp = 0; grp < groups; grp++) {
      if (signal?.aborted) throw new ProviderError('Aborted', `${meta.key}: check aborted`);
      const got = await ahead;
      if (grp + 1 < groups) {
        ahead = read(grp + 1);
        ahead.catch(() => undefined);
      }
      const job: GroupJob = {
        key: meta.key, k: meta.k, m: meta.m, cellSize: meta.cellSize, length: g.length, generation: meta.generation, keyHash: hash,
        s0: grp * per, s1: Math.min(g.stripes, (grp + 1) * per), first: grp === 0, last: grp === groups - 1,
        sources: [], targets: targetIdx, folds,
      };
      for (const [i, r] of got) {
        if (!sources.has(i)) continue;
        if (r instanceof Error) fail(i, r);
        else job.sources.push({ index: i, bytes: r });
      }
      const res = await runGroup(job, () => ctx.codec(meta.k, meta.m));
      for (const f of res.failed) fail(f.index, new FragmentError(f.message));
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
  return { states, rebuilt };
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
  const s0 = grp * per;
  const s1 = Math.min(g.stripes, s0 + per);
  const start = grp === 0 ? 0 : g.sectionOffset(s0);
  const end = grp === groups - 1 ? g.fragmentSize : g.sectionOffset(s1);
  const out = new Map<number, Uint8Array | Error>();
  await Promise.all(
    sources.map(async (i) => {
      const child = nameOf(meta, i);
      try {
        const bytes = await ctx.domains.call(meta.fragments[i]!, `read ${child}`, (p) => getBytes(p, child, { start, end: end - 1 }));
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
