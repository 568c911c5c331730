/**
 * LatencyHistogram: fixed buckets, exposed cumulatively in the Prometheus text format, as the
 * request latencies and the commit log's append latencies are (/metrics).
 */
import { describe, expect, it } from 'vitest';
import { LATENCY_BUCKETS, LatencyHistogram } from '../../src/store/latency-histogram.js';

/** The value of series `line` prefix in `lines` (exactly one such line). */
function value(lines: string[], prefix: string): number {
  const found = lines.filter((l) => l.startsWith(`${prefix} `));
  expect(found, prefix).toHaveLength(1);
  return Number(found[0]!.slice(prefix.length + 1));
}

describe('LatencyHistogram', () => {
  it('counts each observation in every bucket whose bound it does not exceed, a bound itself included', () => {
    const h = new LatencyHistogram();
    for (const s of [0.0001, 0.001, 0.0011, 0.02, 100]) h.observe(s);
    const bound = (b: number) => h.counts[LATENCY_BUCKETS.indexOf(b)];
    expect(bound(0.00025)).toBe(1);
    expect(bound(0.0005)).toBe(1);
    expect(bound(0.001), '1 ms lands in le="0.001"').toBe(2);
    expect(bound(0.0025)).toBe(3);
    expect(bound(0.025)).toBe(4);
    expect(bound(30), '100 s is past every bound').toBe(4);
    expect(h.count).toBe(5);
    expect(h.sum).toBeCloseTo(100.0222, 10);
  });

  it('counts a negative or non-finite duration as zero, so the sum never goes down', () => {
    const h = new LatencyHistogram();
    h.observe(-5);
    h.observe(Number.NaN);
    h.observe(Number.POSITIVE_INFINITY);
    expect(h.count).toBe(3);
    expect(h.sum).toBe(0);
    expect(h.counts.every((c) => c === 3)).toBe(true);
  });

  it('writes cumulative _bucket series ending in +Inf = _count, then _sum and _count, with or without labels', () => {
    const h = new LatencyHistogram();
    h.observe(0.003);
    h.observe(0.2);
    const plain = h.lines('x_seconds');
    expect(plain).toHaveLength(LATENCY_BUCKETS.length + 3);
    expect(value(plain, 'x_seconds_bucket{le="0.0025"}')).toBe(0);
    expect(value(plain, 'x_seconds_bucket{le="0.005"}')).toBe(1);
    expect(value(plain, 'x_seconds_bucket{le="0.25"}')).toBe(2);
    expect(value(plain, 'x_seconds_bucket{le="+Inf"}')).toBe(2);
    expect(value(plain, 'x_seconds_count')).toBe(2);
    expect(value(plain, 'x_seconds_sum')).toBeCloseTo(0.203, 10);
    const counts = plain.filter((l) => l.includes('_bucket{')).map((l) => Number(l.split(' ')[1]));
    expect(counts, 'cumulative').toEqual([...counts].sort((a, b) => a - b));
    const labelled = h.lines('x_seconds', 'op="GetObject"');
    expect(value(labelled, 'x_seconds_bucket{op="GetObject",le="0.005"}')).toBe(1);
    expect(value(labelled, 'x_seconds_sum{op="GetObject"}')).toBeCloseTo(0.203, 10);
    expect(value(labelled, 'x_seconds_count{op="GetObject"}')).toBe(2);
  });
});
