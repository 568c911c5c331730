/** @module Small statistics helpers shared by every benchmark. */

/** Sorted copy of `xs`, ascending. */
export function sorted(xs: readonly number[]): number[] {
  return [...xs].sort((a, b) => a - b);
}

/** The p-th percentile (0..100) by nearest rank; NaN for an empty list. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = sorted(xs);
  const rank = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[rank]!;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = sorted(xs);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Formats a number with thousands separators and `digits` decimals. */
export function fmt(x: number, digits = 0): string {
  if (!Number.isFinite(x)) return 'n/a';
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** "median (min–max)" of a list of samples. */
export function medianRange(xs: readonly number[], digits = 0): string {
  if (xs.length === 0) return 'n/a';
  const s = sorted(xs);
  return `${fmt(median(s), digits)} (${fmt(s[0]!, digits)}–${fmt(s[s.length - 1]!, digits)})`;
}

/**
 * values[i] / base[i] for each i both have: figures measured one right after the other (the
 * lanes of one round) pair up, so each ratio compares two moments of the machine seconds apart,
 * where a ratio of medians may compare one lane's quiet sample with the other's busy one. A
 * pair whose base is 0 (nothing completed) gives nothing.
 */
export function pairedRatios(values: readonly number[], base: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.min(values.length, base.length); i++) {
    const r = values[i]! / base[i]!;
    if (Number.isFinite(r)) out.push(r);
  }
  return out;
}
