/**
 * @module Targets of `bench:engine` (issue 3) and the rs3 reference figures they are set
 * against (shared/reference/seeds/rs3-performance-evidence.txt: "Small-write budgets" and
 * "Local scale and path-length costs"). Every reported figure is checked here, so a
 * target is stated once.
 */

export interface Target {
  /** What is measured, as the tables name it. */
  name: string;
  /** The figure must be at most this (all our targets are ceilings). */
  max: number;
  unit: string;
  /** rs3's figure for the same workload, as text (it may be a range or carry a verdict). */
  rs3: string;
}

export const TARGETS = {
  ampSequential512: { name: 'sequential 512 B writes', max: 3.0, unit: 'x', rs3: '3.92x (FAIL)' },
  amp4KiBBatch: { name: '4 KiB objects, batches of 64', max: 1.1, unit: 'x', rs3: '1.032x' },
  amp256KiBBatch: { name: '256 KiB objects, batches of 64', max: 1.01, unit: 'x', rs3: '1.0007x' },
  emptyBatch: { name: 'empty objects, batches of 64', max: 128, unit: 'B/object', rs3: '105.7 B/object' },
  scalePeakRss: { name: '1M writer peak RSS', max: 400, unit: 'MiB', rs3: '918-1,148 MiB (fs writer)' },
  reopen: { name: 'reopen (Store.open to ready)', max: 3000, unit: 'ms', rs3: '3,153-3,496 ms' },
  listPageP50: { name: 'LIST page of 1000, p50', max: 5, unit: 'ms', rs3: 'n/a' },
  coldReadGets: { name: 'cold GET of a packed object', max: 1, unit: 'provider gets', rs3: 'n/a' },
} satisfies Record<string, Target>;

/** 'PASS' when `value` is within the target's ceiling, 'MISS' otherwise (or not measured). */
export function verdict(target: Target, value: number): 'PASS' | 'MISS' {
  return Number.isFinite(value) && value <= target.max ? 'PASS' : 'MISS';
}

/** "≤ 3.0x" for a target. */
export function ceiling(target: Target, digits = 2): string {
  return `≤ ${target.max.toFixed(digits)}${target.unit === 'x' ? 'x' : ` ${target.unit}`}`;
}
