/**
 * @module Checking one blob fragment by fragment, and repairing it (scrub's unit of work).
 *
 * Every fragment (copy) of the current write is read and checked: header against its name,
 * every block's CRC32C, trailer. Striped blobs go through one streaming pass (stripe-pass.ts)
 * that reads each present fragment once, in groups of stripes, and with `repair` rebuilds the
 * fragments missing by name from the verified cells in the same pass. With `repair`, what is
 * still missing or corrupt after it is rebuilt onto healthy eligible
 * domains (placement with the domains already holding good fragments, and failed ones,
 * excluded: a corrupt fragment on a healthy domain is usually rewritten in place), fragments
 * left on other domains are deleted, and leftovers of older writes are removed. A lost blob
 * (fewer than k good fragments, no good copy) is never written to.
 *
 * A missing-only repair (CheckOptions.missingOnly) reads nothing of a blob none of whose
 * fragments is missing by name, and of the others only the k fragments rebuilding needs (a
 * replicated blob missing a copy is checked whole, as it is small); the fragments it did not
 * verify are listed in BlobCheck.unchecked and left out of `fragments`.
 */
import { ProviderError } from '../provider.js';
import type { FragmentCheck, BlobCheck, ErasureConfig, ErasureStats, FragmentState } from './types.js';
import { lookupBlob, nameOf, type BlobMeta, type LookupResult } from './lookup.js';
import { verifyAndRebuild } from './stripe-pass.js';
import { geometryOf, trailerLength } from './read.js';
import { rebuildFragments, readCopy } from './rebuild.js';
import type { WriteContext } from './write.js';
import { replacementTargets } from './replace.js';

export interface CheckOutcome {
  check: BlobCheck;
  /** The blob's description after the check (and repair), when it is readable. */
  meta: BlobMeta | undefined;
  /** No leftovers of other writes remain. */
  clean: boolean;
}

function stateOf(err: unknown): FragmentState {
  if (err instanceof ProviderError) {
    if (err.code === 'NotFound') return 'missing';
    if (err.code === 'Unavailable') return 'unreachable';
    if (err.code === 'Aborted') throw err;
  }
  return 'corrupt';
}

/** Reads and checks one replicated copy on `domain` (striped blobs: stripe-pass.ts). */
async function checkCopy(ctx: WriteContext, meta: BlobMeta, domain: string): Promise<FragmentState> {
  try {
    await readCopy(ctx, meta, domain);
    return 'ok';
  } catch (err) {
    return stateOf(err);
  }
}

/** Options of one check: `found` is what a scrub's census already knows of the blob's names
 * (census.ts), so that the check needs no lookup of its own. */
export interface CheckOptions {
  repair?: boolean;
  signal?: AbortSignal;
  found?: LookupResult;
  /** With `repair`: rebuild only fragments (copies) missing by name, reading only what that
   * needs (striped: k verified sources; stripe-pass.ts `needed`), and nothing of a blob none of
   * whose fragments is missing. Fragments not verified are listed in BlobCheck.unchecked,
   * never in `fragments`. Corrupt fragments not read stay undetected: a full scrub finds them. */
  missingOnly?: boolean;
}

/**
 * Checks (and with `repair`, repairs) `key`. Counts into `stats`. Throws ProviderError
 * 'NotFound' when no domain holds a fragment of it. With `options.found` (a census taken
 * earlier), a blob found lost, or a fragment the census listed and a read no longer finds (the
 * blob was deleted or replaced since), is checked again from a fresh lookup, so that a stale
 * census never reports damage that is not there.
 */
export async function checkBlob(
  ctx: WriteContext,
  key: string,
  config: ErasureConfig,
  stats: ErasureStats,
  options: CheckOptions
): Promise<CheckOutcome> {
  if (!options.found) return checkOnce(ctx, key, config, stats, options, await lookupBlob(ctx.domains, key));
  const scratch: ErasureStats = { ...stats, fragmentsVerified: 0, fragmentsDamaged: 0, fragmentsRepaired: 0, repairBytes: 0 };
  const first = await checkOnce(ctx, key, config, scratch, options, options.found);
  stats.fragmentsRepaired += scratch.fragmentsRepaired;
  stats.repairBytes += scratch.repairBytes;
  if (!first.stale) {
    stats.fragmentsVerified += scratch.fragmentsVerified;
    stats.fragmentsDamaged += scratch.fragmentsDamaged;
    return first;
  }
  // From a fresh lookup: not a census's view any more, so nothing in it is stale.
  const { found: _census, ...fresh } = options;
  const again = await checkOnce(ctx, key, config, stats, fresh, await lookupBlob(ctx.domains, key));
  again.check.repaired += first.check.repaired;
  again.check.repairBytes += first.check.repairBytes;
  return again;
}

/**
 * The domain a fragment (copy) that is not present is reported on: where placement puts it,
 * else (the policy cannot be met with these domains, or its place holds another fragment of
 * the blob) the next domain in rendezvous order holding nothing of the blob.
 */
function reportDomains(ctx: WriteContext, key: string, count: number, holding: readonly (string | undefined)[]): (i: number) => string {
  let placed: string[] = [];
  try {
    placed = ctx.place(key, count);
  } catch {
    // unsatisfiable with these domains: rendezvous order below
  }
  const taken = new Set(holding.filter((d): d is string => d !== undefined));
  const spare = [...placed, ...ctx.rank(key)].filter((d, i, all) => all.indexOf(d) === i && !taken.has(d));
  const given = new Map<number, string>();
  return (i) => {
    let d = given.get(i);
    if (d === undefined) {
      const want = placed[i];
      d = want !== undefined && !taken.has(want) && spare.includes(want) ? want : spare[0] ?? ctx.rank(key)[0]!;
      spare.splice(spare.indexOf(d), 1);
      taken.add(d);
      given.set(i, d);
    }
    return d;
  };
}

/**
 * Marks corrupt the striped fragments that verified but whose file, as listed, is not the size
 * the blob's geometry gives: bytes past the trailer (a file extended, a write misdirected into
 * it) are read by nothing, so only the listed size shows them. (A replicated copy is read whole,
 * so its verification already refuses a wrong size.) Rebuilt fragments and those not listed
 * (looked up before a rebuild) are left as they are. Returns the indices it marked: their cells
 * verified, so they still count towards reading the blob and can serve as repair sources.
 */
function flagWrongSizes(meta: BlobMeta, found: LookupResult, fragments: FragmentCheck[]): number[] {
  if (meta.layout !== 'striped') return [];
  const expected = geometryOf(meta).fragmentSize;
  const marked: number[] = [];
  for (const f of fragments) {
    if (f.state !== 'ok') continue;
    const listed = found.names.find((n) => n.domain === f.domain && n.name.generation === meta.generation && n.name.index === f.index);
    if (listed && listed.size !== expected) {
      f.state = 'corrupt';
      marked.push(f.index);
    }
  }
  return marked;
}

async function checkOnce(
  ctx: WriteContext,
  key: string,
  config: ErasureConfig,
  stats: ErasureStats,
  options: CheckOptions,
  found: LookupResult
): Promise<CheckOutcome & { stale?: boolean }> {
  const meta = found.meta;
  if (!meta) {
    if (found.names.length === 0) throw new ProviderError('NotFound', `${key}: no such blob`);
    // Newest write's names: present ones as found (not verified: too few to matter), the rest
    // missing on the domain placement gives them, so damage is reported by domain.
    const newest = found.names.reduce((a, b) => (b.name.generation > a.name.generation ? b : a));
    const n = newest.name;
    const mine = found.names.filter((f) => f.name.generation === n.generation);
    const count = n.layout === 'striped' ? n.k + n.m : config.m + 1;
    const at = (i: number) => (n.layout === 'striped' ? mine.find((x) => x.name.index === i) : mine[i]);
    const where = reportDomains(ctx, key, count, Array.from({ length: count }, (_, i) => at(i)?.domain));
    const fragments: FragmentCheck[] = [];
    for (let i = 0; i < count; i++) {
      const f = at(i);
      fragments.push(f ? { index: i, domain: f.domain, state: 'ok' } : { index: i, domain: where(i), state: 'missing' });
    }
    stats.fragmentsDamaged += fragments.filter((f) => f.state !== 'ok').length;
    return {
      check: { key, layout: n.layout, size: n.length ?? 0, fragments, repaired: 0, repairBytes: 0, lost: true },
      meta: undefined,
      clean: false,
      stale: options.found !== undefined,
    };
  }
  if (meta.length === undefined) meta.length = await trailerLength(ctx, meta);
  const fragments: FragmentCheck[] = [];
  let repaired = 0;
  let repairBytes = 0;
  let stale = false;
  /** Fragment indices the pass rebuilt. */
  const fixed = new Set<number>();
  /** Fragment (copy) indices present but not verified (missingOnly). */
  let unchecked: number[] = [];
  const missingOnly = options.repair === true && options.missingOnly === true;
  const complete = meta.layout === 'striped' ? meta.fragments.every((d) => d !== undefined) : meta.copies.length >= config.m + 1;
  if (missingOnly && complete) {
    // Nothing missing by name: nothing to rebuild, nothing read.
    const all = meta.layout === 'striped' ? meta.fragments.map((_, i) => i) : meta.copies.map((_, i) => i);
    return { check: { key, layout: meta.layout, size: meta.length, fragments: [], repaired: 0, repairBytes: 0, lost: false, unchecked: all }, meta, clean: found.stale.length === 0 };
  }
  if (meta.layout === 'striped') {
    const n = meta.k + meta.m;
    const where = reportDomains(ctx, key, n, meta.fragments);
    const present = meta.fragments.filter((d) => d !== undefined).length;
    // Missing by name: rebuilt in the same pass that verifies the others (stripe-pass.ts).
    let targets = new Map<number, string>();
    if (options.repair && present >= meta.k && present < n) {
      const missing = meta.fragments.flatMap((d, i) => (d === undefined ? [i] : []));
      const holding = new Set(meta.fragments.filter((d): d is string => d !== undefined));
      const unusable = new Set([...ctx.domains.failedIds(), ...found.unreachable]);
      targets = replacementTargets(ctx, key, n, missing, holding, unusable);
    }
    const pass = await verifyAndRebuild(ctx, meta, targets, { ...(options.signal ? { signal: options.signal } : {}), needed: missingOnly });
    unchecked = pass.unchecked;
    pass.states.forEach((state, i) => {
      if (state === 'missing' && meta.fragments[i] !== undefined && options.found) stale = true;
      if (!unchecked.includes(i)) fragments.push({ index: i, domain: meta.fragments[i] ?? where(i), state });
    });
    for (const r of pass.rebuilt) {
      if (!r.ok) continue;
      fixed.add(r.index);
      meta.fragments[r.index] = r.domain;
      repaired++;
      repairBytes += r.bytes;
    }
  } else {
    const states = await Promise.all(meta.copies.map((d) => checkCopy(ctx, meta, d)));
    states.forEach((state, i) => {
      if (state === 'missing' && options.found) stale = true;
      fragments.push({ index: i, domain: meta.copies[i]!, state });
    });
    // Missing copies are reported on the domains placement gives them.
    const where = reportDomains(ctx, key, config.m + 1, meta.copies);
    for (let i = meta.copies.length; i < config.m + 1; i++) fragments.push({ index: i, domain: where(i), state: 'missing' });
  }
  // Sizes as listed: a census's may predate a rewrite since, so a check that finds any wrong
  // size is done again from a fresh lookup before anything is reported or repaired. A
  // missing-only repair verifies sources, not sizes.
  const oversized = missingOnly ? [] : flagWrongSizes(meta, found, fragments);
  if (oversized.length > 0 && options.found) stale = true;
  const good = fragments.filter((f) => f.state === 'ok').length;
  const bad = fragments.length - good;
  stats.fragmentsVerified += good;
  stats.fragmentsDamaged += bad;
  // Fragments not verified (missingOnly) are not damage found: they count as present.
  const lost = meta.layout === 'striped' ? good + oversized.length + unchecked.length < meta.k : good === 0;
  const check: BlobCheck = { key, layout: meta.layout, size: meta.length, fragments, repaired, repairBytes, lost, ...(unchecked.length ? { unchecked } : {}) };
  stats.fragmentsRepaired += repaired;
  stats.repairBytes += repairBytes;
  if (stale || !options.repair || lost) return { check, meta: lost ? undefined : meta, clean: found.stale.length === 0, stale };

  const holding = new Set(fragments.filter((f) => f.state === 'ok').map((f) => f.domain));
  // Striped: what the pass could not rebuild (found corrupt or unreadable in it, or its
  // target failed) is rebuilt now from the fragments that are good. Fragments wrong only in
  // size are rewritten as far as k sources remain without them (the rest stay sources, and
  // the next pass rewrites them).
  const leftIdx =
    meta.layout === 'striped'
      ? [
          ...fragments.filter((f) => f.state !== 'ok' && !fixed.has(f.index) && !oversized.includes(f.index)).map((f) => f.index),
          ...oversized.slice(0, Math.max(0, good + oversized.length - meta.k)),
        ]
      : [];
  if (leftIdx.length) {
    const keep = new Set(meta.fragments.filter((d, i): d is string => d !== undefined && !leftIdx.includes(i)));
    const unusable = new Set([
      ...ctx.domains.failedIds(),
      ...fragments.filter((f) => f.state === 'unreachable').map((f) => f.domain),
    ]);
    const chosen = replacementTargets(ctx, key, meta.k + meta.m, leftIdx, keep, unusable);
    const old = leftIdx.map((i) => meta.fragments[i]);
    leftIdx.forEach((i) => (meta.fragments[i] = undefined));
    const idx = [...chosen.keys()];
    const results = idx.length ? await rebuildFragments(ctx, meta, idx, idx.map((i) => chosen.get(i)!)) : [];
    for (const r of results) {
      if (!r.ok) continue;
      meta.fragments[r.index] = r.domain;
      check.repaired++;
      check.repairBytes += r.bytes;
      stats.fragmentsRepaired++;
      stats.repairBytes += r.bytes;
      const was = old[leftIdx.indexOf(r.index)];
      if (was !== undefined && was !== r.domain) await dropName(ctx, was, nameOf(meta, r.index));
    }
    leftIdx.forEach((i, j) => (meta.fragments[i] ??= old[j] === undefined || ctx.domains.isFailed(old[j]!) ? undefined : old[j]));
  } else if (meta.layout === 'replicated' && bad > 0) {
    const source = meta.copies.find((d, i) => fragments[i]!.state === 'ok')!;
    const copy = await readCopy(ctx, meta, source);
    const corrupt = fragments.filter((f) => f.state !== 'ok' && f.state !== 'missing').map((f) => f.domain);
    // The policy's placement of m + 1 copies with unusable domains replaced; copies already
    // good stay; a corrupt copy on a healthy domain is rewritten in place.
    const unusable = new Set([...ctx.domains.failedIds(), ...fragments.filter((f) => f.state === 'unreachable').map((f) => f.domain)]);
    let planned: string[] = [];
    try {
      planned = ctx.place(key, config.m + 1, unusable);
    } catch {
      // the policy cannot be met: fall back to rendezvous order below
    }
    const targets = [...planned, ...ctx.rank(key)]
      .filter((d, i, all) => all.indexOf(d) === i && !holding.has(d) && !unusable.has(d))
      .slice(0, Math.min(bad, config.m + 1 - holding.size));
    const child = nameOf(meta, 0);
    const okCopies = meta.copies.filter((_, i) => fragments[i]!.state === 'ok');
    await Promise.all(
      targets.map(async (t) => {
        try {
          await ctx.domains.call(t, `put ${child}`, (p, { signal }) => p.put(child, copy, { contentLength: copy.length, signal }));
          okCopies.push(t);
          check.repaired++;
          check.repairBytes += copy.length;
          stats.fragmentsRepaired++;
          stats.repairBytes += copy.length;
        } catch {
          // counted as not repaired
        }
      })
    );
    for (const d of corrupt) if (!okCopies.includes(d)) await dropName(ctx, d, child);
    meta.copies = okCopies;
  }
  for (const s of found.stale) {
    const name = found.names.find((n) => n.child === s.childKey && n.domain === s.domain);
    if (name && name.name.generation < meta.generation) await dropName(ctx, s.domain, s.childKey);
  }
  return { check, meta, clean: true };
}

async function dropName(ctx: WriteContext, domain: string, child: string): Promise<void> {
  await ctx.domains.call(domain, `delete ${child}`, (p) => p.delete(child)).catch(() => undefined);
}
