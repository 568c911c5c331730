/**
 * @module A latency histogram with fixed buckets, for durations the server exposes in the
 * Prometheus exposition format (cumulative `_bucket` series, `_sum`, `_count`): request
 * latency by operation (server/metrics.ts) and the commit log's appends (commit-loop.ts).
 */

/** Upper bounds of the buckets, seconds: 0.25 ms .. 30 s (a small GET, or an append of a group
 * commit to a local disk, is sub-millisecond to a few ms; a hung domain is seconds). */
export const LATENCY_BUCKETS: readonly number[] = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class LatencyHistogram {
  /** Observations at or below each bound of LATENCY_BUCKETS (cumulative, as exposed). */
  readonly counts: number[] = new Array<number>(LATENCY_BUCKETS.length).fill(0);
  /** Sum of the observations, seconds. */
  sum = 0;
  count = 0;

  /** Records one duration; a negative or non-finite one (a clock gone wrong) counts as 0. */
  observe(seconds: number): void {
    const s = Number.isFinite(seconds) && seconds > 0 ? seconds : 0;
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) if (s <= LATENCY_BUCKETS[i]!) this.counts[i]!++;
    this.sum += s;
    this.count++;
  }

  /** The series of metric `name` (`labels`: `key="value"` pairs, already escaped, or ''). */
  lines(name: string, labels = ''): string[] {
    const sep = labels ? ',' : '';
    const braces = labels ? `{${labels}}` : '';
    return [
      ...LATENCY_BUCKETS.map((b, i) => `${name}_bucket{${labels}${sep}le="${b}"} ${this.counts[i]}`),
      `${name}_bucket{${labels}${sep}le="+Inf"} ${this.count}`,
      `${name}_sum${braces} ${this.sum}`,
      `${name}_count${braces} ${this.count}`,
    ];
  }
}
