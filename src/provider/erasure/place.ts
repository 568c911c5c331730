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

export function placeFragments(
  key: string,
  domains: readonly Labelled[],
  policy: PlacementPolicy,
  count: number,
  exclude?: ReadonlySet<string>
): string[] {
  const byId = new Map(domains.map((d) => [d.id, d]));
  const allow = policy.allow ? new Set(policy.allow) : undefined;
  const deny = new Set(policy.deny ?? []);
  const used = new Map<string, number>();
  const out: string[] = [];
  for (const id of rankDomains(key, domains)) {
    if (out.length === count) break;
    if (exclude?.has(id) || deny.has(id) || (allow && !allow.has(id))) continue;
    const d = byId.get(id)!;
    const ok = (policy.spread ?? []).every(
      (r) => (used.get(`${r.label}=${d.labels[r.label] ?? ''}`) ?? 0) < r.max
    );
    if (!ok) continue;
    for (const r of policy.spread ?? []) {
      const slot = `${r.label}=${d.labels[r.label] ?? ''}`;
      used.set(slot, (used.get(slot) ?? 0) + 1);
    }
    out.push(id);
  }
  if (out.length < count)
    throw new PlacementError(`only ${out.length} of ${count} eligible domains for ${key}`);
  return out;
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
