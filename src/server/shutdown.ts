/**
 * @module Graceful shutdown of the HTTP side: stop accepting, let requests in flight finish,
 * and say what is being waited for while it lasts (an upload of several GiB may take a
 * while). After the grace period the remaining connections are cut: their requests were
 * never acknowledged, so nothing acknowledged is lost, and clients retry.
 */
import type { IncomingMessage, Server } from 'node:http';

/** Interval between "still waiting" lines, ms: often enough to see progress, rarely enough
 * not to flood a log during a long upload. */
export const SHUTDOWN_PROGRESS_MS = 5000;

/** Requests named in one progress line; the rest are counted. */
const MAX_LISTED = 5;

interface InFlight {
  method: string;
  /** Path only: query strings can hold presigned signatures. */
  path: string;
  started: number;
  req: IncomingMessage;
}

export interface RequestTracker {
  /** Requests whose response has not finished, oldest first. */
  inFlight(): readonly InFlight[];
}

/** Counts requests on `server` from now on (adds one 'request' listener; mutates nothing else). */
export function trackRequests(server: Server): RequestTracker {
  const live = new Set<InFlight>();
  server.on('request', (req: IncomingMessage, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const entry: InFlight = {
      method: req.method ?? '?',
      path: (q < 0 ? url : url.slice(0, q)).slice(0, 256),
      started: Date.now(),
      req,
    };
    live.add(entry);
    res.once('close', () => live.delete(entry));
  });
  return { inFlight: () => [...live] };
}

function describe(list: readonly InFlight[], now: number): string {
  const shown = list.slice(0, MAX_LISTED).map((r) => {
    const mib = (r.req.socket?.bytesRead ?? 0) / 2 ** 20;
    return `${r.method} ${r.path} (${((now - r.started) / 1000).toFixed(0)} s, ${mib.toFixed(1)} MiB read)`;
  });
  if (list.length > MAX_LISTED) shown.push(`and ${list.length - MAX_LISTED} more`);
  return shown.join('; ');
}

export interface DrainOptions {
  /** How long requests in flight may take before their connections are cut, ms. */
  graceMs: number;
  /** Progress lines: `waiting` while requests run, `cut` when the grace period ends. */
  report: (event: 'waiting' | 'cut' | 'drained', fields: Record<string, unknown>) => void;
  progressMs?: number;
}

/**
 * Stops `server` accepting, closes idle keep-alive connections, waits for requests in flight
 * (reporting them every `progressMs`), and after `graceMs` destroys what is left. Resolves
 * once the server is closed. Mutates only `server` and its sockets.
 */
export async function drainServer(
  server: Server,
  tracker: RequestTracker,
  opts: DrainOptions
): Promise<void> {
  const started = Date.now();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // A keep-alive connection that finishes its request must not take another one.
  const idleSweep = setInterval(() => server.closeIdleConnections(), 250);
  const progress = () => {
    const list = tracker.inFlight();
    if (list.length)
      opts.report('waiting', {
        requests: list.length,
        waitedMs: Date.now() - started,
        what: describe(list, Date.now()),
      });
  };
  progress();
  const ticker = setInterval(progress, opts.progressMs ?? SHUTDOWN_PROGRESS_MS);
  const cut = setTimeout(() => {
    const list = tracker.inFlight();
    if (list.length)
      opts.report('cut', {
        requests: list.length,
        afterMs: opts.graceMs,
        what: describe(list, Date.now()),
      });
    server.closeAllConnections();
  }, opts.graceMs);
  try {
    await closed;
  } finally {
    clearInterval(idleSweep);
    clearInterval(ticker);
    clearTimeout(cut);
  }
  opts.report('drained', { ms: Date.now() - started });
}
