/**
 * @module Prometheus metrics: requests by operation and status, bytes in and out, request
 * latency histograms by operation, and engine gauges/counters read at scrape time.
 * Exposition format 0.0.4, written by hand (a handful of families; no dependency).
 */

import { LatencyHistogram } from '../store/latency-histogram.js';

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

export class Metrics {
  readonly #requests = new Map<string, number>();
  readonly #latency = new Map<string, LatencyHistogram>();
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
    if (!h) this.#latency.set(op, (h = new LatencyHistogram()));
    h.observe(seconds);
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
    for (const [op, h] of this.#latency) out.push(...h.lines('strata_request_duration_seconds', `op="${esc(op)}"`));
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

/** One histogram family with a single unlabelled series. */
export function histogramFamily(name: string, help: string, h: LatencyHistogram): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`, ...h.lines(name)];
}
