/**
 * @module Policy wildcards: `*` (any run of characters, `/` included) and `?` (exactly one
 * character), as IAM uses them in Action, Resource and the StringLike condition operators.
 *
 * Matching is greedy over the literal segments between stars (the first anchored at the
 * start, the last at the end, each middle one at its leftmost place), which is exact for
 * these two wildcards and never backtracks. A segment without `?` is found with the native
 * string search; one with `?` with a bit-parallel scan (Shift-And: one bit per segment
 * character, so a step costs one word operation per 32 characters, whatever the text), so
 * a hostile pattern cannot make a match quadratic in the text. `?` counts code points, not
 * UTF-16 units, so it matches one emoji the way it matches one letter.
 */

/** A segment with `?`, ready for the bit-parallel scan. */
interface Segment {
  /** Code points; -1 is `?` (any one). */
  readonly points: Int32Array;
  /** Words per mask (32 segment positions each). */
  readonly words: number;
  /**
   * Masks, `words` each: row 0 holds the positions `?` fills (what a character absent from the
   * segment matches), row r the positions character r can fill (r from `ascii` / `other`).
   */
  readonly table: Uint32Array;
  /** ASCII code point -> row (0: absent). */
  readonly ascii: Uint16Array;
  readonly other: ReadonlyMap<number, number>;
}

const QUESTION = 0x3f;

/** Code points of `s`. */
function codePoints(s: string): Int32Array {
  const out = new Int32Array(s.length);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const cp = s.codePointAt(i)!;
    out[n++] = cp;
    if (cp > 0xffff) i++;
  }
  return out.subarray(0, n);
}

/** The ASCII row table of segments made only of `?` (no character has a row). */
const NO_ROWS = new Uint16Array(128);

function compileSegment(part: string): Segment {
  const points = codePoints(part).map((c) => (c === QUESTION ? -1 : c));
  const words = Math.max(1, Math.ceil(points.length / 32));
  const ascii = points.some((c) => c >= 0 && c < 128) ? new Uint16Array(128) : NO_ROWS;
  const other = new Map<number, number>();
  const rowOf = new Map<number, number>();
  for (const c of points) if (c >= 0 && !rowOf.has(c)) rowOf.set(c, rowOf.size + 1);
  const table = new Uint32Array((rowOf.size + 1) * words);
  points.forEach((c, i) => {
    if (c >= 0) return;
    for (let row = 0; row <= rowOf.size; row++) table[row * words + (i >> 5)]! |= 1 << (i & 31);
  });
  points.forEach((c, i) => {
    if (c < 0) return;
    table[rowOf.get(c)! * words + (i >> 5)]! |= 1 << (i & 31);
  });
  for (const [c, row] of rowOf) {
    if (c < 128) ascii[c] = row;
    else other.set(c, row);
  }
  return { points, words, table, ascii, other };
}

/** A compiled pattern. */
export interface Glob {
  readonly source: string;
  /** Literal segments between stars (one segment: no star at all). */
  readonly parts: readonly string[];
  /** Some segment holds `?` (then matching works on code points). */
  readonly hasQuestion: boolean;
  /** With `?`: the segments, compiled once here. */
  readonly segments: readonly Segment[];
  readonly ignoreCase: boolean;
}

/**
 * Work allowed to the matches of one policy evaluation, in text characters scanned (a
 * Shift-And step over a long segment counts once per 32 segment characters): about 2 ms of
 * one core here. Ordinary policies use a few thousand; 20 KB of hostile patterns against a
 * 1 KiB key (or a long header in a condition) could otherwise take tens of milliseconds per
 * request. Spent: the evaluation fails closed.
 */
export const MAX_MATCH_STEPS = 250_000;

/** Thrown when a match would exceed the budget of the running evaluation. */
export class MatchBudgetExceeded extends Error {
  override readonly name = 'MatchBudgetExceeded';
}

let budget = Infinity;

/** Runs `fn` with a fresh budget of `steps`; MatchBudgetExceeded propagates. */
export function withMatchBudget<T>(steps: number, fn: () => T): T {
  const saved = budget;
  budget = steps;
  try {
    return fn();
  } finally {
    budget = saved;
  }
}

function spend(steps: number): void {
  budget -= steps;
  if (budget < 0) throw new MatchBudgetExceeded('policy matching exceeded its budget');
}

/** Compiles `pattern`; with `ignoreCase` both sides are lower-cased (actions). Pure. */
export function compileGlob(pattern: string, ignoreCase = false): Glob {
  const source = ignoreCase ? pattern.toLowerCase() : pattern;
  const parts = source.split('*');
  const hasQuestion = source.includes('?');
  return { source, parts, hasQuestion, segments: hasQuestion ? parts.map(compileSegment) : [], ignoreCase };
}

function eqAt(text: Int32Array, at: number, seg: Int32Array): boolean {
  if (at + seg.length > text.length) return false;
  for (let i = 0; i < seg.length; i++) if (seg[i] !== -1 && seg[i] !== text[at + i]) return false;
  return true;
}

/**
 * The leftmost start >= `from` where `seg` occurs wholly before `limit`, or -1: Shift-And
 * over the text, `state` bit i set when the segment's first i+1 characters end here.
 */
function findFrom(text: Int32Array, from: number, limit: number, seg: Segment): number {
  const m = seg.points.length;
  if (m === 0) return from <= limit ? from : -1;
  const { words, table, ascii, other } = seg;
  const lastWord = (m - 1) >> 5;
  const lastBit = 1 << ((m - 1) & 31);
  spend(Math.max(0, limit - from) * words);
  if (words === 1) {
    let state = 0;
    for (let j = from; j < limit; j++) {
      const c = text[j]!;
      const row = c < 128 ? ascii[c]! : other.get(c) ?? 0;
      state = ((state << 1) | 1) & table[row]!;
      if (state & lastBit) return j - m + 1;
    }
    return -1;
  }
  const state = new Uint32Array(words);
  for (let j = from; j < limit; j++) {
    const c = text[j]!;
    const base = (c < 128 ? ascii[c]! : other.get(c) ?? 0) * words;
    let carry = 1;
    for (let w = 0; w < words; w++) {
      const v = state[w]!;
      state[w] = ((v << 1) | carry) & table[base + w]!;
      carry = v >>> 31;
    }
    if (state[lastWord]! & lastBit) return j - m + 1;
  }
  return -1;
}

/**
 * The text as code points. One request matches one text against many patterns, so the last
 * conversion is kept.
 */
let lastText = '';
let lastPoints: Int32Array = new Int32Array(0);
function pointsOf(s: string): Int32Array {
  if (s !== lastText) {
    lastPoints = codePoints(s);
    lastText = s;
  }
  return lastPoints;
}

/** Matching over code points (patterns with `?`). */
function matchPoints(segs: readonly Segment[], s: string): boolean {
  spend(s.length);
  const text = pointsOf(s);
  if (segs.length === 1) return segs[0]!.points.length === text.length && eqAt(text, 0, segs[0]!.points);
  const first = segs[0]!.points;
  const last = segs[segs.length - 1]!.points;
  if (first.length + last.length > text.length) return false;
  if (!eqAt(text, 0, first) || !eqAt(text, text.length - last.length, last)) return false;
  let pos = first.length;
  const end = text.length - last.length;
  for (let i = 1; i < segs.length - 1; i++) {
    const at = findFrom(text, pos, end, segs[i]!);
    if (at < 0) return false;
    pos = at + segs[i]!.points.length;
  }
  return true;
}

/** Matching over UTF-16 strings (patterns with stars only: native search). */
function matchUnits(parts: readonly string[], text: string): boolean {
  spend(1);
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
    // The native search is near-linear: charge the characters it may scan.
    spend(Math.max(1, end - pos + 1));
    const at = text.indexOf(seg, pos);
    if (at < 0 || at + seg.length > end) return false;
    pos = at + seg.length;
  }
  return true;
}

/** Whether `text` matches `g` as a whole. Pure. */
export function globMatch(g: Glob, text: string): boolean {
  const t = g.ignoreCase ? text.toLowerCase() : text;
  return g.hasQuestion ? matchPoints(g.segments, t) : matchUnits(g.parts, t);
}

/**
 * Whether some string starting with `prefix` matches `g` (so a Resource pattern can name
 * something inside a bucket). An NFA walk over the pattern (runs of stars collapsed) keeping
 * the list of live positions: `prefix` is short (a bucket name and a slash), so the cost is
 * at most its length times the live positions. Pure.
 */
export function globCanStartWith(g: Glob, prefix: string): boolean {
  const STAR = 0x2a;
  const raw = codePoints(g.source);
  const p = raw.filter((c, i) => c !== STAR || raw[i - 1] !== STAR);
  const text = codePoints(g.ignoreCase ? prefix.toLowerCase() : prefix);
  const stamp = new Int32Array(p.length + 1).fill(-1);
  // Adds `state` (and, a star matching nothing, the state after it) to `list` once per step.
  const add = (list: number[], state: number, step: number) => {
    for (let s = state; s <= p.length && stamp[s] !== step; s++) {
      stamp[s] = step;
      list.push(s);
      if (p[s] !== STAR) break;
    }
  };
  let live: number[] = [];
  add(live, 0, 0);
  for (let k = 0; k < text.length; k++) {
    const ch = text[k]!;
    const next: number[] = [];
    for (const s of live) {
      if (s >= p.length) continue;
      if (p[s] === STAR) add(next, s, k + 1);
      else if (p[s] === QUESTION || p[s] === ch) add(next, s + 1, k + 1);
    }
    if (next.length === 0) return false;
    live = next;
  }
  return true;
}
