/**
 * @module Policy wildcards: `*` (any run of characters, `/` included) and `?` (exactly one
 * character), as IAM uses them in Action, Resource and the StringLike condition operators.
 *
 * Matching is greedy over the literal segments between stars (the first anchored at the
 * start, the last at the end, each middle one at its leftmost place), which is exact for
 * these two wildcards and never backtracks: the cost is bounded by the text length times
 * the pattern length, and the patterns are bounded by the policy's size limit. `?` counts
 * code points, not UTF-16 units, so it matches one emoji the way it matches one letter.
 */

/** A compiled pattern. */
export interface Glob {
  readonly source: string;
  /** Literal segments between stars (one segment: no star at all). */
  readonly parts: readonly string[];
  /** Some segment holds `?` (then matching works on code points). */
  readonly hasQuestion: boolean;
  readonly ignoreCase: boolean;
}

/** Compiles `pattern`; with `ignoreCase` both sides are lower-cased (actions). Pure. */
export function compileGlob(pattern: string, ignoreCase = false): Glob {
  const source = ignoreCase ? pattern.toLowerCase() : pattern;
  return { source, parts: source.split('*'), hasQuestion: source.includes('?'), ignoreCase };
}

/** Whether `pattern` holds a wildcard at all. */
export const hasWildcard = (pattern: string): boolean => /[*?]/.test(pattern);

function eqAt(text: readonly string[], at: number, seg: readonly string[]): boolean {
  if (at + seg.length > text.length) return false;
  for (let i = 0; i < seg.length; i++) if (seg[i] !== '?' && seg[i] !== text[at + i]) return false;
  return true;
}

function findFrom(text: readonly string[], from: number, limit: number, seg: readonly string[]): number {
  for (let at = from; at + seg.length <= limit; at++) if (eqAt(text, at, seg)) return at;
  return -1;
}

/** Matching over arrays of code points (patterns with `?`). */
function matchPoints(parts: readonly string[], s: string): boolean {
  const text = Array.from(s);
  const segs = parts.map((p) => Array.from(p));
  if (segs.length === 1) return segs[0]!.length === text.length && eqAt(text, 0, segs[0]!);
  const first = segs[0]!;
  const last = segs[segs.length - 1]!;
  if (first.length + last.length > text.length) return false;
  if (!eqAt(text, 0, first) || !eqAt(text, text.length - last.length, last)) return false;
  let pos = first.length;
  const end = text.length - last.length;
  for (let i = 1; i < segs.length - 1; i++) {
    const at = findFrom(text, pos, end, segs[i]!);
    if (at < 0) return false;
    pos = at + segs[i]!.length;
  }
  return true;
}

/** Matching over UTF-16 strings (patterns with stars only: native search). */
function matchUnits(parts: readonly string[], text: string): boolean {
  if (parts.length === 1) return parts[0] === text;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (first.length + last.length > text.length) return false;
  if (!text.startsWith(first) || !text.endsWith(last)) return false;
  let pos = first.length;
  const end = text.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const seg = parts[i]!;
    if (seg === '') continue;
    const at = text.indexOf(seg, pos);
    if (at < 0 || at + seg.length > end) return false;
    pos = at + seg.length;
  }
  return true;
}

/** Whether `text` matches `g` as a whole. Pure. */
export function globMatch(g: Glob, text: string): boolean {
  const t = g.ignoreCase ? text.toLowerCase() : text;
  return g.hasQuestion ? matchPoints(g.parts, t) : matchUnits(g.parts, t);
}

/**
 * Whether some string starting with `prefix` matches `g` (so a Resource pattern can name
 * something inside a bucket). A small NFA walk over the pattern; `prefix` is short (a bucket
 * name and a slash). Pure.
 */
export function globCanStartWith(g: Glob, prefix: string): boolean {
  const p = Array.from(g.source);
  const text = Array.from(g.ignoreCase ? prefix.toLowerCase() : prefix);
  // States: positions in the pattern; a star state absorbs any character.
  let states = closure(p, new Set([0]));
  for (const ch of text) {
    const next = new Set<number>();
    for (const s of states) {
      if (s >= p.length) continue;
      if (p[s] === '*') next.add(s);
      else if (p[s] === '?' || p[s] === ch) next.add(s + 1);
    }
    states = closure(p, next);
    if (states.size === 0) return false;
  }
  return states.size > 0;
}

/** Adds the states reachable by skipping stars (a star may match nothing). */
function closure(p: readonly string[], states: Set<number>): Set<number> {
  for (const s of states) if (s < p.length && p[s] === '*') states.add(s + 1);
  return states;
}
