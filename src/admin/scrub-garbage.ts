/**
 * @module Telling a scrub's lost blobs from garbage: a blob with fewer than k fragments (no
 * readable copy) that the repository never committed is the leftover of an interrupted write
 * (a put killed before its fragments landed), not damage.
 *
 * The rule is `strata verify`'s (store/verify.ts): only chunk blobs and GC packs can be
 * garbage — both are written before the commit that names them, so a torn one may be named by
 * nothing — and only when the GC mark (store/gc-mark.ts: every blob the durable repository
 * reaches from its anchor) does not reach it. Roots, commit blobs, runs and anything the mark
 * reaches stay lost. When the mark itself fails (the repository is damaged elsewhere), nothing
 * is called garbage. Scrub only reports garbage; GC deletes it.
 */
import type { Provider } from '../provider/provider.js';
import { markRepository } from '../store/gc-mark.js';

/** Prefixes of the blobs written before the commit that names them (verify's rule). */
export const UNCOMMITTED_PREFIXES = ['chunks/', 'packs/'] as const;

/**
 * A classifier for runScrub's `isGarbage`: resolves true for a lost `key` that is an uncommitted
 * write's leftover. Marks the repository once, at the first candidate (a pass with no lost
 * chunk or pack never marks), and reuses that mark for the rest of the pass. Never rejects.
 */
export function garbageClassifier(provider: Provider): (key: string) => Promise<boolean> {
  let mark: Promise<Set<string> | undefined> | undefined;
  return async (key) => {
    if (!UNCOMMITTED_PREFIXES.some((p) => key.startsWith(p))) return false;
    mark ??= markRepository(provider).then(
      (m) => m.live,
      () => undefined
    );
    const live = await mark;
    return live !== undefined && !live.has(key);
  };
}
