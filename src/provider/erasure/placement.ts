/**
 * @module Fragment placement for the erasure provider: which failure domains the fragments of
 * one blob go to. Pure (no I/O, no clock, no randomness): the same key, domains and policy
 * give the same answer in every process, so no placement table exists to be lost.
 *
 * Rendezvous hashing (highest random weight): every domain gets a weight hash(key, domain id)
 * and the domains are ranked by weight, highest first. Fragment i goes to the i-th domain of
 * that ranking that the policy accepts. Adding or removing one of N domains moves only the
 * placements that domain wins or loses, about 1/N of them, and never reshuffles the rest.
 *
 * The weight is a 32-bit FNV-1a of the key and of the id, each through the murmur3 finalizer,
 * combined and finalized again: a few multiplications per domain, far cheaper than a
 * cryptographic hash on a per-request path, and well mixed (test/provider/erasure-placement
 * checks the spread over 60,000 keys and the 1/N movement). Equal weights (2^-32 per pair)
 * fall back to comparing the ids, so the order is total.
 *
 * Policy: fragments always go to distinct domains; `allow` (if given) limits the eligible
 * domains, `deny` removes some; each spread rule allows at most `max` fragments per value of
 * a label (zone: 1, host: 2). Placement walks the ranking greedily; when spread rules cross
 * (labels that do not nest, e.g. rack and power feed), greedy can miss an arrangement that
 * exists, so a bounded backtracking search in ranking order follows before giving up.
 */
import type { PlacementPolicy, SpreadRule } from './types.js';

/** The part of a domain placement looks at (DomainSpec and Domain both fit). */
export interface PlacementDomain {
  readonly id: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Largest k+m: the GF(256) Reed-Solomon codec cannot build more distinct rows. */
export const MAX_FRAGMENTS = 256;

/** Steps the backtracking search may take before it gives up: far more than any real
 * (laminar) rule set needs (greedy settles those), and a bound on a pathological one. */
const SEARCH_STEP_BUDGET = 20_000;

/** Keys validatePolicy probes crossing spread rules with (nested rules need none: greedy is
 * exact for them). Enough rankings to catch a rule set that only some orders satisfy. */
const VALIDATE_PROBE_KEYS = 64;

/**
 * A placement that cannot be made (code 'Unsatisfiable': too few eligible domains, a spread
 * rule that cannot be met) or a configuration placement cannot work with (code 'Invalid':
 * duplicate or unknown ids, bad k or m). The message says which rule and which numbers.
 */
export class PlacementError extends Error {
  override readonly name = 'PlacementError';
  constructor(
    readonly code: 'Unsatisfiable' | 'Invalid',
    message: string
  ) {
    super(message);
  }
}

// ---- hashing ------------------------------------------------------------------------------

/** murmur3's 32-bit finalizer: every input bit flips each output bit with probability ~1/2. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** FNV-1a over the UTF-16 code units of `s` (both bytes of each), finalized. */
function hashString(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h = Math.imul(h ^ (c & 0xff), 0x01000193);
    h = Math.imul(h ^ (c >>> 8), 0x01000193);
  }
  return fmix32(h ^ s.length);
}

/** Seeds that keep key hashes and id hashes independent (any two distinct odd constants). */
const KEY_SEED = 0x9e3779b9;
const ID_SEED = 0x7f4a7c15;

/** Domain ids hashed so far: ids come from the configuration, so this stays small; cleared
 * past ID_CACHE_MAX entries so that a caller passing ever new ids cannot grow it without end. */
const idHashes = new Map<string, number>();
const ID_CACHE_MAX = 4096;

function idHash(id: string): number {
  let h = idHashes.get(id);
  if (h === undefined) {
    if (idHashes.size >= ID_CACHE_MAX) idHashes.clear();
    h = hashString(id, ID_SEED);
    idHashes.set(id, h);
  }
  return h;
}

/** The rendezvous weight of domain `idHash` for key `keyHash`. */
function weight(keyHash: number, idHash: number): number {
  return fmix32((keyHash ^ Math.imul(idHash, 0x27d4eb2f)) + idHash);
}

/**
 * The ids of `domains` ordered by rendezvous weight for `key`, highest first (ties broken by
 * id). Deterministic across processes and platforms; reads only its arguments.
 */
export function rankDomains(key: string, domains: readonly PlacementDomain[]): string[] {
  const kh = hashString(key, KEY_SEED);
  const scored = domains.map((d) => ({ id: d.id, w: weight(kh, idHash(d.id)) }));
  scored.sort((a, b) => b.w - a.w || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return scored.map((s) => s.id);
}

// ---- placement ----------------------------------------------------------------------------

/** Counts fragments per label value for each spread rule while a placement is built. */
class SpreadCounter {
  readonly #rules: readonly SpreadRule[];
  readonly #counts: Map<string | undefined, number>[];

  constructor(rules: readonly SpreadRule[]) {
    this.#rules = rules;
    this.#counts = rules.map(() => new Map());
  }

  /** Would adding `d` keep every rule? (A domain without the label shares the "no value" group.) */
  fits(d: PlacementDomain): boolean {
    return this.#rules.every(
      (r, i) => (this.#counts[i]!.get(d.labels[r.label]) ?? 0) < r.max
    );
  }

  add(d: PlacementDomain, delta: 1 | -1): void {
    this.#rules.forEach((r, i) => {
      const v = d.labels[r.label];
      this.#counts[i]!.set(v, (this.#counts[i]!.get(v) ?? 0) + delta);
    });
  }
}

/** The domains the policy (and `exclude`) lets fragments go to, and why others are out. */
function eligible(
  domains: readonly PlacementDomain[],
  policy: PlacementPolicy,
  exclude: ReadonlySet<string> | undefined
): { ok: Map<string, PlacementDomain>; excluded: number; denied: number; notAllowed: number } {
  const allow = policy.allow ? new Set(policy.allow) : undefined;
  const deny = new Set(policy.deny ?? []);
  const ok = new Map<string, PlacementDomain>();
  let excluded = 0;
  let denied = 0;
  let notAllowed = 0;
  for (const d of domains) {
    if (allow && !allow.has(d.id)) notAllowed++;
    else if (deny.has(d.id)) denied++;
    else if (exclude?.has(d.id)) excluded++;
    else ok.set(d.id, d);
  }
  return { ok, excluded, denied, notAllowed };
}

/** Greedy walk of `order`; returns the chosen domains (maybe fewer than `count`). */
function greedy(order: readonly PlacementDomain[], rules: readonly SpreadRule[], count: number): PlacementDomain[] {
  const counter = new SpreadCounter(rules);
  const out: PlacementDomain[] = [];
  for (const d of order) {
    if (out.length === count) break;
    if (!counter.fits(d)) continue;
    counter.add(d, 1);
    out.push(d);
  }
  return out;
}

/**
 * Depth-first search over `order` for `count` domains meeting every rule, preferring the
 * ranking's order (the first solution found is the lexicographically earliest). Gives up
 * after SEARCH_STEP_BUDGET steps; undefined when none was found.
 */
function search(order: readonly PlacementDomain[], rules: readonly SpreadRule[], count: number): PlacementDomain[] | undefined {
  const counter = new SpreadCounter(rules);
  const chosen: PlacementDomain[] = [];
  let steps = 0;
  const walk = (from: number): boolean => {
    if (chosen.length === count) return true;
    for (let i = from; i < order.length; i++) {
      if (order.length - i < count - chosen.length) return false;
      if (++steps > SEARCH_STEP_BUDGET) return false;
      const d = order[i]!;
      if (!counter.fits(d)) continue;
      counter.add(d, 1);
      chosen.push(d);
      if (walk(i + 1)) return true;
      chosen.pop();
      counter.add(d, -1);
    }
    return false;
  };
  return walk(0) ? chosen : undefined;
}

/** Most fragments rule `r` lets `domains` hold: the sum over label values of min(max, size). */
function ruleCapacity(domains: Iterable<PlacementDomain>, r: SpreadRule): { cap: number; values: number } {
  const sizes = new Map<string | undefined, number>();
  for (const d of domains) sizes.set(d.labels[r.label], (sizes.get(d.labels[r.label]) ?? 0) + 1);
  let cap = 0;
  for (const n of sizes.values()) cap += Math.min(n, r.max);
  return { cap, values: sizes.size };
}

/** Why `count` fragments do not fit: the first limit that explains it. */
function explain(
  domains: readonly PlacementDomain[],
  policy: PlacementPolicy,
  count: number,
  el: ReturnType<typeof eligible>
): string {
  const out = [
    el.excluded ? `${el.excluded} excluded (failed)` : '',
    el.denied ? `${el.denied} denied` : '',
    el.notAllowed ? `${el.notAllowed} not in the allow list` : '',
  ].filter(Boolean);
  const head = `${count} fragments need ${count} distinct eligible domains, have ${el.ok.size} of ${domains.length}${out.length ? ` (${out.join(', ')})` : ''}`;
  if (el.ok.size < count) return head;
  for (const r of policy.spread ?? []) {
    const { cap, values } = ruleCapacity(el.ok.values(), r);
    if (cap < count) return spreadShortfall(r, count, cap, values);
  }
  const labels = (policy.spread ?? []).map((r) => `${r.label} max ${r.max}`).join(', ');
  return `spread rules ${labels} cannot all be met by ${count} of the ${el.ok.size} eligible domains together`;
}

/** "spread zone max 1 needs 6 zones, have 3", or the capacity when groups are uneven. */
function spreadShortfall(r: SpreadRule, count: number, cap: number, values: number): string {
  const need = Math.ceil(count / r.max);
  if (values < need) return `spread ${r.label} max ${r.max} needs ${need} ${r.label}s, have ${values}`;
  return `spread ${r.label} max ${r.max} places at most ${cap} of ${count} fragments on the eligible domains (${values} ${r.label}s, too few domains in some)`;
}

/** The placement over the domains `el` keeps, or undefined when none is found. */
function placeAmong(key: string, el: Map<string, PlacementDomain>, rules: readonly SpreadRule[], count: number): PlacementDomain[] | undefined {
  if (el.size < count) return undefined;
  const order = rankDomains(key, [...el.values()]).map((id) => el.get(id)!);
  const first = greedy(order, rules, count);
  if (first.length === count) return first;
  return rules.length > 1 ? search(order, rules, count) : undefined;
}

/**
 * Fills the holes (excluded domains) of `base` with the next domains of the ranking that keep
 * every rule, leaving the other fragments where they are; undefined if a hole cannot be filled.
 */
function replaceExcluded(
  key: string,
  base: readonly PlacementDomain[],
  el: Map<string, PlacementDomain>,
  rules: readonly SpreadRule[]
): PlacementDomain[] | undefined {
  const counter = new SpreadCounter(rules);
  const used = new Set(base.map((d) => d.id));
  for (const d of base) if (el.has(d.id)) counter.add(d, 1);
  const spare = rankDomains(key, [...el.values()].filter((d) => !used.has(d.id))).map((id) => el.get(id)!);
  const out: PlacementDomain[] = [];
  for (const d of base) {
    if (el.has(d.id)) {
      out.push(d);
      continue;
    }
    const i = spare.findIndex((s) => counter.fits(s));
    if (i < 0) return undefined;
    const [r] = spare.splice(i, 1);
    counter.add(r!, 1);
    out.push(r!);
  }
  return out;
}

/**
 * The ids of the `count` domains fragments 0..count-1 of `key` go to, in fragment order:
 * rankDomains order, skipping denied ids, ids outside `allow`, and ids that would break a
 * spread rule. Ids in `exclude` (domains that failed) are replaced: each fragment whose placed
 * domain is not excluded keeps it, and each excluded one takes the next eligible domain of the
 * ranking that keeps every rule (only if that cannot be done is the whole placement redone
 * without the excluded ids). Pure. Throws PlacementError 'Unsatisfiable' (its message says
 * which limit) when fewer than `count` domains can be chosen.
 */
export function placeFragments(
  key: string,
  domains: readonly PlacementDomain[],
  policy: PlacementPolicy,
  count: number,
  exclude?: ReadonlySet<string>
): string[] {
  const rules = policy.spread ?? [];
  const el = eligible(domains, policy, exclude);
  if (exclude?.size) {
    const base = placeAmong(key, eligible(domains, policy, undefined).ok, rules, count);
    const kept = base && replaceExcluded(key, base, el.ok, rules);
    if (kept) return kept.map((d) => d.id);
  }
  const found = placeAmong(key, el.ok, rules, count);
  if (found) return found.map((d) => d.id);
  throw new PlacementError('Unsatisfiable', `cannot place ${key}: ${explain(domains, policy, count, el)}`);
}

// ---- start-up check -----------------------------------------------------------------------

function invalid(message: string): never {
  throw new PlacementError('Invalid', message);
}

/**
 * The start-up check of an erasure set-up: throws PlacementError naming the rule and the
 * numbers, e.g. "spread zone max 1 needs 6 zones, have 3". Refuses ('Invalid') k < 1, m < 0,
 * k+m > 256, empty or duplicate domain ids, allow/deny ids that name no domain, an id both
 * allowed and denied, spread rules with an empty label, a max below 1 or the same label twice,
 * and an eligible domain missing a spread label; refuses ('Unsatisfiable') fewer eligible
 * domains than k+m and spread rules the eligible domains cannot meet. Pure.
 */
export function validatePolicy(
  domains: readonly PlacementDomain[],
  policy: PlacementPolicy,
  k: number,
  m: number
): void {
  if (!Number.isInteger(k) || k < 1) invalid(`k must be an integer of at least 1 (got ${k})`);
  if (!Number.isInteger(m) || m < 0) invalid(`m must be an integer of at least 0 (got ${m})`);
  const n = k + m;
  if (n > MAX_FRAGMENTS) invalid(`k+m = ${n} is more than ${MAX_FRAGMENTS} fragments (the Reed-Solomon limit)`);
  const ids = new Set<string>();
  for (const d of domains) {
    if (typeof d.id !== 'string' || d.id === '') invalid('a domain has an empty id');
    if (ids.has(d.id)) invalid(`domain id ${d.id} is given twice`);
    ids.add(d.id);
  }
  for (const [name, list] of [['allow', policy.allow], ['deny', policy.deny]] as const) {
    for (const id of list ?? []) if (!ids.has(id)) invalid(`policy ${name} names ${id}, which is not a configured domain`);
  }
  const deny = new Set(policy.deny ?? []);
  for (const id of policy.allow ?? []) if (deny.has(id)) invalid(`domain ${id} is both allowed and denied`);
  const labels = new Set<string>();
  for (const r of policy.spread ?? []) {
    if (typeof r.label !== 'string' || r.label === '') invalid('a spread rule has an empty label');
    if (!Number.isInteger(r.max) || r.max < 1) invalid(`spread ${r.label} max must be an integer of at least 1 (got ${r.max})`);
    if (labels.has(r.label)) invalid(`spread ${r.label} is given twice`);
    labels.add(r.label);
  }
  const el = eligible(domains, policy, undefined);
  for (const r of policy.spread ?? []) {
    for (const d of el.ok.values()) {
      if (d.labels[r.label] === undefined) invalid(`spread ${r.label}: domain ${d.id} has no ${r.label} label`);
    }
  }
  if (el.ok.size < n) {
    throw new PlacementError('Unsatisfiable', `erasure ${k}+${m}: ${explain(domains, policy, n, el)}`);
  }
  for (const r of policy.spread ?? []) {
    const { cap, values } = ruleCapacity(el.ok.values(), r);
    if (cap < n) throw new PlacementError('Unsatisfiable', `erasure ${k}+${m}: ${spreadShortfall(r, n, cap, values)}`);
  }
  if ((policy.spread ?? []).length > 1) {
    // Crossing rules: make sure real rankings can be met (nested ones always can; see module doc).
    for (let i = 0; i < VALIDATE_PROBE_KEYS; i++) {
      try {
        placeFragments(`strata-placement-probe-${i}`, domains, policy, n);
      } catch (err) {
        if (!(err instanceof PlacementError)) throw err;
        throw new PlacementError('Unsatisfiable', `erasure ${k}+${m}: ${explain(domains, policy, n, el)}`);
      }
    }
  }
}
