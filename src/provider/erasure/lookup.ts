/**
 * @module Finding a blob's fragments: what the domains hold under a key, and which write
 * (generation) of it is current.
 *
 * A lookup lists the key's fragment prefix on every domain at once (each bounded by the
 * domain timeout) and groups the names by generation. The current write is the newest one
 * that can be read: for a striped blob at least k distinct fragment indices, for a
 * replicated one at least one copy. Names of older writes are returned as `stale` (leftovers
 * of an overwrite that did not finish cleaning up), to be deleted by the next write, delete
 * or repair. The result is cached by the provider (BlobMeta), so warm reads skip this.
 */
import { ProviderError } from '../provider.js';
import { childKey, fragmentPrefix, parseChildKey, type FragmentName, type Layout } from './child-key.js';
import type { DomainSet } from './domains.js';
import { Geometry } from './geometry.js';

/** Everything a read needs to know about the current write of a blob. */
export interface BlobMeta {
  key: string;
  layout: Layout;
  k: number;
  m: number;
  cellSize: number;
  /** Logical length; undefined until the trailer was read (stream of unknown length). */
  length: number | undefined;
  generation: number;
  lastModified: Date;
  /** Striped: the domain holding fragment i, or undefined when none was found. Replicated:
   * unused (see copies). */
  fragments: (string | undefined)[];
  /** Replicated and log: the domains holding a copy. */
  copies: string[];
  /** Bytes of one fragment as listed (to find the trailer of an unsized write). */
  fragmentBytes: number;
  /** The fragment names carry the length (false: written from a stream of unknown length). */
  sized: boolean;
}

export interface StaleName {
  domain: string;
  childKey: string;
}

export interface LookupResult {
  meta: BlobMeta | undefined;
  stale: StaleName[];
  /** Domains that did not answer. */
  unreachable: string[];
  /** Every fragment name found, of every generation. */
  names: FoundName[];
}

/** The child key of fragment/copy `index` of `meta`. */
export function nameOf(meta: BlobMeta, index: number): string {
  // Names are built once per description: a small read is otherwise dominated by escaping
  // the key and formatting numbers again.
  let names = NAMES.get(meta);
  if (!names) NAMES.set(meta, (names = []));
  const i = meta.layout === 'striped' ? index : 0;
  return (names[i] ??= childKey({ ...meta, length: meta.sized ? meta.length : undefined, index: i }));
}

/** nameOf's memo; a description's name fields never change once it exists. */
const NAMES = new WeakMap<BlobMeta, string[]>();

/** The etag of a write: its generation and length (unique per write, see index.ts). */
export function etagOf(name: { generation: number; length: number | undefined; layout: Layout }): string {
  return `${name.layout === 'striped' ? 's' : name.layout === 'log' ? 'l' : 'r'}${name.generation.toString(36)}-${name.length?.toString(36) ?? '_'}`;
}

export interface FoundName {
  domain: string;
  name: FragmentName;
  child: string;
  size: number;
  lastModified: Date;
}

/**
 * Lists `key`'s fragments on every domain. Never throws for a missing key (meta undefined)
 * or for unreachable domains (listed in `unreachable`); throws ProviderError for an invalid
 * key or an abort.
 */
export async function lookupBlob(domains: DomainSet, key: string): Promise<LookupResult> {
  const prefix = fragmentPrefix(key);
  const unreachable: string[] = [];
  const all: FoundName[] = [];
  await Promise.all(
    domains.domains.map(async (d) => {
      try {
        let next: string | undefined;
        do {
          const page = await domains.call(d.id, `list ${prefix}`, (p, { signal }) =>
            p.list({ prefix, startAfter: next, limit: 1000, signal, etags: false })
          );
          for (const item of page.items) {
            const name = parseChildKey(item.key);
            if (name && name.key === key)
              all.push({ domain: d.id, name, child: item.key, size: item.size, lastModified: item.lastModified });
          }
          next = page.next;
        } while (next);
      } catch (err) {
        if (err instanceof ProviderError && err.code === 'InvalidKey') throw err;
        unreachable.push(d.id);
      }
    })
  );
  return resolveNames(key, all, unreachable);
}

/**
 * The size every fragment (copy) of a write should have: what the geometry gives when the name
 * carries the length, else the size most of its fragments are listed with (ties: the first
 * listed), so that one file extended or cut short cannot set where every fragment's trailer is
 * looked for.
 */
function fragmentBytesOf(n: FragmentName, fs: readonly FoundName[]): number {
  if (n.length !== undefined) return new Geometry(n.layout === 'striped' ? n.k : 1, n.cellSize, n.length).fragmentSize;
  const counts = new Map<number, number>();
  for (const f of fs) counts.set(f.size, (counts.get(f.size) ?? 0) + 1);
  let best = fs[0]!.size;
  for (const [size, c] of counts) if (c > counts.get(best)!) best = size;
  return best;
}

/**
 * Groups the fragment names found for `key` (by a lookup, or by a scrub's census of every
 * domain) into the current write and stale leftovers (see the module doc). Pure.
 */
export function resolveNames(key: string, all: FoundName[], unreachable: string[]): LookupResult {
  const byGen = new Map<number, FoundName[]>();
  for (const f of all) {
    const list = byGen.get(f.name.generation) ?? [];
    list.push(f);
    byGen.set(f.name.generation, list);
  }
  const gens = [...byGen.keys()].sort((a, b) => b - a);
  let chosen: number | undefined;
  for (const g of gens) {
    const fs = byGen.get(g)!;
    const first = fs[0]!.name;
    const usable =
      first.layout !== 'striped' ? fs.length >= 1 : new Set(fs.map((f) => f.name.index)).size >= first.k;
    if (usable) {
      chosen = g;
      break;
    }
  }
  const stale: StaleName[] = [];
  for (const g of gens) if (g !== chosen) for (const f of byGen.get(g)!) stale.push({ domain: f.domain, childKey: f.child });
  if (chosen === undefined) return { meta: undefined, stale, unreachable, names: all };
  const fs = byGen.get(chosen)!;
  const n = fs[0]!.name;
  const meta: BlobMeta = {
    key,
    layout: n.layout,
    k: n.k,
    m: n.m,
    cellSize: n.cellSize,
    length: n.length,
    generation: n.generation,
    lastModified: new Date(Math.max(...fs.map((f) => f.lastModified.getTime()))),
    fragments: n.layout === 'striped' ? new Array<string | undefined>(n.k + n.m).fill(undefined) : [],
    copies: [],
    fragmentBytes: fragmentBytesOf(n, fs),
    sized: n.length !== undefined,
  };
  for (const f of fs) {
    // A striped name must agree with the others of its write; a stray one is not trusted.
    if (f.name.layout !== n.layout || f.name.k !== n.k || f.name.m !== n.m || f.name.cellSize !== n.cellSize) continue;
    if (n.layout === 'striped') meta.fragments[f.name.index] ??= f.domain;
    else if (!meta.copies.includes(f.domain)) meta.copies.push(f.domain);
  }
  return { meta, stale, unreachable, names: all };
}
