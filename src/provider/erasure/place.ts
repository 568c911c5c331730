/**
 * @module The erasure provider's one seam to placement: which domains a blob's fragments go
 * to. Temporary stand-in with the contract's signatures until placement.ts (ec-place) lands
 * on main; then this file re-exports it.
 */
import { createHash } from 'node:crypto';
import type { PlacementPolicy } from './types.js';

interface Labelled {
  id: string;
  labels: Readonly<Record<string, string>>;
}

export class PlacementError extends Error {
  readonly code = 'Unsatisfiable';
  constructor(message: string) {
    super(message);
    this.name = 'PlacementError';
  }
}

function weight(key: string, id: string): bigint {
  const h = createHash('sha256').update(key).update('\0').update(id).digest();
  return h.readBigUInt64BE(0);
}

export function rankDomains(key: string, domains: readonly Labelled[]): string[] {
  return domains
    .map((d) => ({ id: d.id, w: weight(key, d.id) }))
    .sort((a, b) => (a.w === b.w ? (a.id < b.id ? -1 : 1) : a.w > b.w ? -1 : 1))
    .map((d) => d.id);
}

function placeAmong(
  key: string,
  domains: readonly Labelled[],
  policy: PlacementPolicy,
  count: number,
  skip: ReadonlySet<string>,
  fixed: (string | undefined)[]
): string[] | undefined {
  const byId = new Map(domains.map((d) => [d.id, d]));
  const allow = policy.allow ? new Set(policy.allow) : undefined;
  const deny = new Set(policy.deny ?? []);
  const used = new Map<string, number>();
  const take = (id: string): boolean => {
    const d = byId.get(id)!;
    const ok = (policy.spread ?? []).every((r) => (used.get(`${r.label}=${d.labels[r.label] ?? ''}`) ?? 0) < r.max);
    if (!ok) return false;
    for (const r of policy.spread ?? []) {
      const slot = `${r.label}=${d.labels[r.label] ?? ''}`;
      used.set(slot, (used.get(slot) ?? 0) + 1);
    }
    return true;
  };
  const out = [...fixed];
  const chosen = new Set(fixed.filter((d): d is string => !!d));
  for (const id of chosen) take(id);
  let i = 0;
  for (const id of rankDomains(key, domains)) {
    while (i < count && out[i] !== undefined) i++;
    if (i >= count) break;
    if (skip.has(id) || chosen.has(id) || deny.has(id) || (allow && !allow.has(id))) continue;
    if (!take(id)) continue;
    out[i] = id;
    chosen.add(id);
  }
  while (i < count && out[i] !== undefined) i++;
  return i >= count ? (out.slice(0, count) as string[]) : undefined;
}

export function placeFragments(
  key: string,
  domains: readonly Labelled[],
  policy: PlacementPolicy,
  count: number,
  exclude?: ReadonlySet<string>
): string[] {
  if (exclude?.size) {
    const base = placeAmong(key, domains, policy, count, new Set(), new Array(count).fill(undefined));
    if (base) {
      const kept = placeAmong(key, domains, policy, count, exclude, base.map((d) => (exclude.has(d) ? undefined : d)));
      if (kept) return kept;
    }
  }
  const found = placeAmong(key, domains, policy, count, exclude ?? new Set(), new Array(count).fill(undefined));
  if (!found) throw new PlacementError(`cannot place ${count} fragments of ${key}`);
  return found;
}

export function validatePolicy(
  domains: readonly Labelled[],
  policy: PlacementPolicy,
  k: number,
  m: number
): void {
  if (!(k >= 1) || !(m >= 0) || k + m > 256) throw new PlacementError(`bad k=${k} m=${m}`);
  if (new Set(domains.map((d) => d.id)).size !== domains.length)
    throw new PlacementError('duplicate domain ids');
  placeFragments('validate', domains, policy, k + m);
}
