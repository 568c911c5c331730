/**
 * @module Choosing replacement domains for some fragments of a blob whose other fragments
 * stay where they are (a write that lost a domain, a repair).
 *
 * placeFragments with the unusable domains excluded keeps every usable placed domain and
 * gives each excluded position the next eligible domain that keeps the policy; fragment i
 * goes there unless that domain already holds another fragment of the blob (fragments moved
 * earlier). Then, and when the policy cannot be met at all, the next domain in rendezvous
 * order that holds nothing of the blob and is not excluded is taken: with too few domains
 * left, redundancy comes before the spread rule, and the next scrub (repair) moves it back.
 */
import type { WriteContext } from './write.js';

/**
 * Targets for fragments `indices` of `key` (n fragments in all). `holding`: domains with a good
 * fragment of the blob; `exclude`: failed or unusable domains. Returns index → domain for the
 * indices that could be given one (maybe fewer than asked).
 */
export function replacementTargets(
  ctx: WriteContext,
  key: string,
  n: number,
  indices: readonly number[],
  holding: ReadonlySet<string>,
  exclude: ReadonlySet<string>
): Map<number, string> {
  let full: string[] | undefined;
  try {
    full = ctx.place(key, n, exclude);
  } catch {
    full = undefined;
  }
  const out = new Map<number, string>();
  const chosen = new Set<string>();
  const free = (d: string | undefined): d is string => !!d && !holding.has(d) && !chosen.has(d) && !exclude.has(d);
  for (const i of indices) {
    let d: string | undefined = full?.[i];
    if (!free(d)) d = ctx.rank(key).find(free);
    if (d === undefined) continue;
    out.set(i, d);
    chosen.add(d);
  }
  return out;
}
