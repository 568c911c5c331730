/**
 * @module What the S3 layer needs from the process that runs it, declared here as small
 * interfaces (ports) so that src/s3 never imports src/server: the server supplies these
 * (its Logger, Metrics, expiry worker, internal endpoints) when it builds the ServerDeps;
 * tests supply their own. test/s3/unit/layering.test.ts keeps the direction.
 */
import type { RequestContext } from './context.js';

/** Structured log lines (the server's Logger: one JSON line per call). Never throws. */
export interface RequestLog {
  /** Whether info lines are written at all (a caller may skip building their fields). */
  readonly infoEnabled?: boolean;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Request counters (the server's Metrics). */
export interface RequestMetrics {
  /** Requests being served; the S3 app increments and decrements it. */
  inFlight: number;
  /** Records one finished request: operation, HTTP status, duration, body bytes in and out. */
  observe(op: string, status: number, seconds: number, bytesIn: number, bytesOut: number): void;
}

/** The server's history expiry worker, as the admin API drives it. */
export interface HistoryExpiryControl {
  /** Starts a run now (of one bucket, or all); returns the worker's status. */
  trigger(opts?: { bucket?: string }): unknown;
  /** The last and current run. */
  status(): unknown;
}

/**
 * The process's own endpoints beside S3 (/health, /metrics): answers `r` and returns true
 * when it is addressed to them, else returns false without touching it.
 */
export type InternalEndpoints = (r: RequestContext) => boolean;
