/**
 * @module Checking one blob fragment by fragment, and repairing it (scrub's unit of work).
 *
 * Every fragment (copy) of the current write is read and checked: header against its name,
 * every block's CRC32C, trailer; striped fragments stripe by stripe, so memory stays at one
 * cell. With `repair`, missing and corrupt fragments are rebuilt onto healthy eligible
 * domains (placement with the domains already holding good fragments, and failed ones,
 * excluded: a corrupt fragment on a healthy domain is usually rewritten in place), fragments
 * left on other domains are deleted, and leftovers of older writes are removed. A lost blob
 * (fewer than k good fragments, no good copy) is never written to.
 */
import { getBytes, ProviderError } from '../provider.js';
import type { FragmentCheck, BlobCheck, ErasureConfig, ErasureStats, FragmentState } from './types.js';
import { parseHeader, parseTrailer } from './fragment.js';
import { HEADER_BYTES, TRAILER_BYTES } from './geometry.js';
import { lookupBlob, nameOf, type BlobMeta } from './lookup.js';
import { geometryOf, readBlocks, trailerLength } from './read.js';
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

/** Reads and checks fragment `index` of striped `meta` on `domain` (or the copy, replicated). */
async function checkFragment(ctx: WriteContext, meta: BlobMeta, index: number, domain: string, signal?: AbortSignal): Promise<FragmentState> {
  try {
    if (meta.layout === 'replicated') {
      await readCopy(ctx, meta, domain);
      return 'ok';
    }
    const g = geometryOf(meta);
    const child = nameOf(meta, index);
    const head = await ctx.domains.call(domain, `read ${child}`, (p) => getBytes(p, child, { start: 0, end: HEADER_BYTES - 1 }));
    const h = parseHeader(head);
    if (h.index !== index || h.generation !== meta.generation || h.k !== meta.k || h.m !== meta.m || h.cellSize !== meta.cellSize)
      return 'corrupt';
    const tail = await ctx.domains.call(domain, `read ${child}`, (p) =>
      getBytes(p, child, { start: g.trailerOffset, end: g.trailerOffset + TRAILER_BYTES - 1 })
    );
    const t = parseTrailer(tail);
    if (t.length !== g.length || t.blockCount !== g.blockCount) return 'corrupt';
    for (let s = 0; s < g.stripes; s++) {
      if (signal?.aborted) throw new ProviderError('Aborted', `${meta.key}: check aborted`);
      await readBlocks(ctx, meta, g, index, domain, s, 0, g.cellLength(s));
    }
    return 'ok';
  } catch (err) {
    return stateOf(err);
  }
}

/**
 * Checks (and with `repair`, repairs) `key`. Counts into `stats`. Throws ProviderError
 * 'NotFound' when no domain holds a fragment of it.
 */
export async function checkBlob(
  ctx: WriteContext,
  key: string,
  config: ErasureConfig,
  stats: ErasureStats,
  options: { repair?: boolean; signal?: AbortSignal }
): Promise<CheckOutcome> {
  const found = await lookupBlob(ctx.domains, key);
  const meta = found.meta;
  if (!meta) {
    if (found.names.length === 0) throw new ProviderError('NotFound', `${key}: no such blob`);
    // Newest write's names: present ones as found (not verified: too few to matter), the rest
    // missing on the domain placement gives them, so damage is reported by domain.
    const newest = found.names.reduce((a, b) => (b.name.generation > a.name.generation ? b : a));
    const n = newest.name;
    const mine = found.names.filter((f) => f.name.generation === n.generation);
    const count = n.layout === 'striped' ? n.k + n.m : config.m + 1;
    let placed: string[] = [];
    try {
      placed = ctx.place(key, count);
    } catch {
      // unsatisfiable with these domains: missing fragments are reported without a domain
    }
    const fragments: FragmentCheck[] = [];
    for (let i = 0; i < count; i++) {
      const f = n.layout === 'striped' ? mine.find((x) => x.name.index === i) : mine[i];
      fragments.push(f ? { index: i, domain: f.domain, state: 'ok' } : { index: i, domain: placed[i] ?? '?', state: 'missing' });
    }
    stats.fragmentsDamaged += fragments.filter((f) => f.state !== 'ok').length;
    return {
      check: {
        key,
        layout: n.layout,
        size: n.length ?? 0,
        fragments,
        repaired: 0,
        repairBytes: 0,
        lost: true,
      },
      meta: undefined,
      clean: false,
    };
  }
  if (meta.length === undefined) meta.length = await trailerLength(ctx, meta);
  const fragments: FragmentCheck[] = [];
  if (meta.layout === 'striped') {
    const states = await Promise.all(
      meta.fragments.map((d, i) => (d === undefined ? Promise.resolve<FragmentState>('missing') : checkFragment(ctx, meta, i, d, options.signal)))
    );
    let placed: string[] = [];
    try {
      placed = ctx.place(key, meta.k + meta.m);
    } catch {
      // the policy cannot be met with these domains: report missing fragments without one
    }
    states.forEach((state, i) => fragments.push({ index: i, domain: meta.fragments[i] ?? placed[i] ?? '?', state }));
  } else {
    const states = await Promise.all(meta.copies.map((d) => checkFragment(ctx, meta, 0, d, options.signal)));
    states.forEach((state, i) => fragments.push({ index: i, domain: meta.copies[i]!, state }));
    // Missing copies are reported on the domains placement gives them ('?' only when the
    // policy cannot be met with these domains).
    let placed: string[] = [];
    try {
      placed = ctx.place(key, config.m + 1);
    } catch {
      // reported as '?'
    }
    const spare = placed.filter((d) => !meta.copies.includes(d));
    for (let i = meta.copies.length; i < config.m + 1; i++) fragments.push({ index: i, domain: spare.shift() ?? '?', state: 'missing' });
  }
  const good = fragments.filter((f) => f.state === 'ok').length;
  const bad = fragments.length - good;
  stats.fragmentsVerified += good;
  stats.fragmentsDamaged += bad;
  const lost = meta.layout === 'striped' ? good < meta.k : good === 0;
  const check: BlobCheck = { key, layout: meta.layout, size: meta.length, fragments, repaired: 0, repairBytes: 0, lost };
  if (!options.repair || lost) return { check, meta: lost ? undefined : meta, clean: found.stale.length === 0 };

  const holding = new Set(fragments.filter((f) => f.state === 'ok').map((f) => f.domain));
  if (bad > 0 && meta.layout === 'striped') {
    const badIdx = fragments.filter((f) => f.state !== 'ok').map((f) => f.index);
    const unusable = new Set([
      ...ctx.domains.failedIds(),
      ...fragments.filter((f) => f.state === 'unreachable').map((f) => f.domain),
    ]);
    const chosen = replacementTargets(ctx, key, meta.k + meta.m, badIdx, holding, unusable);
    const old = badIdx.map((i) => meta.fragments[i]);
    badIdx.forEach((i) => (meta.fragments[i] = undefined));
    const idx = [...chosen.keys()];
    const results = idx.length ? await rebuildFragments(ctx, meta, idx, idx.map((i) => chosen.get(i)!)) : [];
    for (const r of results) {
      if (!r.ok) continue;
      meta.fragments[r.index] = r.domain;
      check.repaired++;
      check.repairBytes += r.bytes;
      const was = old[badIdx.indexOf(r.index)];
      if (was !== undefined && was !== r.domain) await dropName(ctx, was, nameOf(meta, r.index));
    }
    badIdx.forEach((i, j) => (meta.fragments[i] ??= old[j] === undefined || ctx.domains.isFailed(old[j]!) ? undefined : old[j]));
  } else if (bad > 0) {
    const source = meta.copies.find((d, i) => fragments[i]!.state === 'ok')!;
    const copy = await readCopy(ctx, meta, source);
    const corrupt = fragments.filter((f) => f.state !== 'ok' && f.state !== 'missing' && f.domain !== '?').map((f) => f.domain);
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
    for (const t of targets) {
      try {
        await ctx.domains.call(t, `put ${child}`, (p, { signal }) => p.put(child, copy, { contentLength: copy.length, signal }));
        okCopies.push(t);
        check.repaired++;
        check.repairBytes += copy.length;
      } catch {
        // counted as not repaired
      }
    }
    for (const d of corrupt) if (!okCopies.includes(d)) await dropName(ctx, d, child);
    meta.copies = okCopies;
  }
  stats.fragmentsRepaired += check.repaired;
  stats.repairBytes += check.repairBytes;
  for (const s of found.stale) {
    const name = found.names.find((n) => n.child === s.childKey && n.domain === s.domain);
    if (name && name.name.generation < meta.generation) await dropName(ctx, s.domain, s.childKey);
  }
  return { check, meta, clean: true };
}

async function dropName(ctx: WriteContext, domain: string, child: string): Promise<void> {
  await ctx.domains.call(domain, `delete ${child}`, (p) => p.delete(child)).catch(() => undefined);
}
