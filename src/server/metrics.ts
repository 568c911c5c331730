/**
 * @module Prometheus metrics: requests by operation and status, bytes in and out, request
 * latency histograms by operation, and engine gauges/counters read at scrape time.
 * Exposition format 0.0.4, written by hand (a handful of families; no dependency).
 */

/** Latency buckets, seconds: 0.25 ms .. 30 s (small GETs are sub-millisecond). */
const BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface Histogram {
  counts: number[];
  sum: number;
  count: number;
}

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

export class Metrics {
  readonly #requests = new Map<string, number>();
  readonly #latency = new Map<string, Histogram>();
  bytesIn = 0;
  bytesOut = 0;
  inFlight = 0;
  readonly started = Date.now();
  /** performance.now() when the last request ended (observe). */
  #lastEnd = -Infinity;
  /** Extra families computed at scrape time (engine counters). */
  readonly #collectors: (() => string[])[] = [];

  /** Records one finished request. */
  observe(op: string, status: number, seconds: number, bytesIn: number, bytesOut: number): void {
    const k = `${op}\u0000${status}`;
    this.#requests.set(k, (this.#requests.get(k) ?? 0) + 1);
    let h = this.#latency.get(op);
    if (!h) this.#latency.set(op, (h = { counts: new Array(BUCKETS.length).fill(0), sum: 0, count: 0 }));
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]!) h.counts[i]!++;
    h.sum += seconds;
    h.count++;
    this.bytesIn += bytesIn;
    this.bytesOut += bytesOut;
    this.#lastEnd = performance.now();
  }

  /** Is a request being served, or did one end less than `quietMs` ago? */
  busy(quietMs: number): boolean {
    return this.inFlight > 0 || performance.now() - this.#lastEnd < quietMs;
  }

  /** Adds a collector returning exposition lines (with their own # HELP/# TYPE). */
  collect(fn: () => string[]): void {
    this.#collectors.push(fn);
  }

  render(): string {
    const out: string[] = [
      '# HELP strata_requests_total S3 requests by operation and HTTP status.',
      '# TYPE strata_requests_total counter',
    ];
    for (const [k, v] of this.#requests) {
      const [op, status] = k.split('\u0000');
      out.push(`strata_requests_total{op="${esc(op!)}",status="${status}"} ${v}`);
    }
    out.push('# HELP strata_request_duration_seconds Request latency by operation.', '# TYPE strata_request_duration_seconds histogram');
    for (const [op, h] of this.#latency) {
      BUCKETS.forEach((b, i) => out.push(`strata_request_duration_seconds_bucket{op="${esc(op)}",le="${b}"} ${h.counts[i]}`));
      out.push(`strata_request_duration_seconds_bucket{op="${esc(op)}",le="+Inf"} ${h.count}`);
      out.push(`strata_request_duration_seconds_sum{op="${esc(op)}"} ${h.sum}`);
      out.push(`strata_request_duration_seconds_count{op="${esc(op)}"} ${h.count}`);
    }
    out.push(
      '# HELP strata_bytes_in_total Request body bytes received.',
      '# TYPE strata_bytes_in_total counter',
      `strata_bytes_in_total ${this.bytesIn}`,
      '# HELP strata_bytes_out_total Response body bytes sent.',
      '# TYPE strata_bytes_out_total counter',
      `strata_bytes_out_total ${this.bytesOut}`,
      '# HELP strata_requests_in_flight Requests being served.',
      '# TYPE strata_requests_in_flight gauge',
      `strata_requests_in_flight ${this.inFlight}`,
      '# HELP strata_uptime_seconds Seconds since the server started.',
      '# TYPE strata_uptime_seconds gauge',
      `strata_uptime_seconds ${(Date.now() - this.started) / 1000}`
    );
    for (const c of this.#collectors) out.push(...c());
    return `${out.join('\n')}\n`;
  }
}

/** One counter or gauge family with a single unlabelled sample. */
export function family(name: string, type: 'counter' | 'gauge', help: string, value: number): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value}`];
}
