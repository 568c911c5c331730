/**
 * @module Admission and deadlines per connection, below the S3 application:
 *
 *   connection cap   past `maxConnections` open connections, a new connection's request is
 *                    answered `503 SlowDown` (S3 XML, Retry-After) and the connection is
 *                    closed; the application never sees it. Nothing is dropped silently.
 *   header deadline  a request whose header block is not complete `headerTimeoutMs` after
 *                    its first byte (after the connection opened, for the first request)
 *                    is answered `400 RequestTimeout` and closed. Node measures it
 *                    (headersTimeout, checked every `connectionsCheckingInterval`); the
 *                    guard only answers in S3's words.
 *   body min rate    while the server waits for a request body, fewer than `bodyMinBytes`
 *                    bytes arriving in `bodyWindowMs` cuts the request: its body reader
 *                    fails at once with `RequestTimeout` (s3/body-deadline.ts), which
 *                    releases what it holds, the answer is `400 RequestTimeout`, and the
 *                    connection closes. Time in which the server is not reading (body bytes
 *                    wait unread, the socket is paused) never counts against the client,
 *                    and there is no total request deadline: an upload progressing at the
 *                    minimum rate or better may take as long as it needs. A request that
 *                    asked for `100 Continue` is watched from when it is sent. Under
 *                    pressure (`pressure()`: writes are queued for room the stalled ones
 *                    hold: the erasure write gate's places) the same rate is also checked
 *                    over PRESSURE_WINDOW_MS, and a body that brought nothing at all for that
 *                    long (counted from the pressure's start at the earliest) is cut, so a
 *                    client that stopped sending lets go within seconds, sooner than a queued
 *                    write gives up (10 s), instead of after a full window: without it a few
 *                    stalled uploads held every place of the gate for 20 s and more, and the
 *                    writes behind them were refused.
 *
 *   idle close       a keep-alive connection with no request for `idleTimeoutMs` is closed
 *                    (Node's keepAliveTimeout, announced in `Keep-Alive: timeout=`). Node's
 *                    5 s default is shorter than the idle time of most S3 clients' pools
 *                    (the AWS SDKs and botocore keep sockets without an idle limit), and a
 *                    client that reuses a socket just as the server closes it gets
 *                    ECONNRESET; the longer default makes that race rare. Idle connections
 *                    still count against the cap.
 *
 * Node's own `requestTimeout` stays 0 for that reason.
 */
import { STATUS_CODES, type IncomingMessage, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import { renderError, S3Error } from '../s3/errors.js';
import { cutBody } from '../s3/body-deadline.js';

export interface ConnectionLimits {
  /** Most open connections; 0: no cap. */
  maxConnections: number;
  /** Longest wait for a complete header block, ms; 0: none. */
  headerTimeoutMs: number;
  /** Window of the minimum body rate, ms; 0: no minimum rate. */
  bodyWindowMs: number;
  /** Fewest body bytes a waiting request must receive per window. */
  bodyMinBytes: number;
  /** How long a keep-alive connection may sit idle between requests, ms (> 0). */
  idleTimeoutMs: number;
}

/**
 * Defaults. 1024 connections: each costs Node ~100 KiB at worst (a 64 KiB socket read,
 * the 16 KiB request stream buffer, the header block), ~100 MiB in all, and 1024 is the
 * usual per-process file limit. 20 s for headers: a header block is one packet for any
 * real client. 16 KiB per 20 s (~0.8 KiB/s): far below any working link, so only a client
 * that has stopped sending is cut, yet a stalled one holds its budget 20 s at most. 60 s
 * idle: longer than a burst's gaps for the common clients, short enough that abandoned
 * pools let go of their connections within a minute.
 */
export const CONNECTION_DEFAULTS: Readonly<ConnectionLimits> = {
  maxConnections: 1024,
  headerTimeoutMs: 20_000,
  bodyWindowMs: 20_000,
  bodyMinBytes: 16 * 1024,
  idleTimeoutMs: 60_000,
};

/**
 * The connection cap to run with under an open-files limit of `openFiles`: at most half of it,
 * so that a client holding the most connections leaves the other half of the descriptors to the
 * store (blob and directory handles, log segments, temporary files; fd-budget.ts gives their
 * caches a quarter). A configured cap above that is lowered, and `warning` says so; 0 (no cap)
 * is kept as asked, with a warning.
 */
export function connectionCap(configured: number, openFiles: number): { cap: number; warning?: string } {
  const most = Number.isFinite(openFiles) ? Math.max(1, Math.floor(openFiles / 2)) : Infinity;
  if (configured === 0) {
    return Number.isFinite(most)
      ? { cap: 0, warning: `max-connections 0 (no cap) with an open-files limit of ${openFiles}: a client holding that many connections leaves the store no file descriptor; raise the limit (LimitNOFILE) or set a cap` }
      : { cap: 0 };
  }
  if (configured <= most) return { cap: configured };
  return {
    cap: most,
    warning: `max-connections ${configured} lowered to ${most}, half the open-files limit of ${openFiles}, so that the store keeps descriptors for its files; raise the limit (LimitNOFILE) to allow more`,
  };
}

/** The body-rate window while writes wait for room (ConnectionGuard.pressure), ms: well under
 * the erasure write gate's 10 s wait, so a queued write outlasts a stalled holder. Never longer
 * than the configured window. */
export const PRESSURE_WINDOW_MS = 4_000;

/** What a refused connection is told to wait, seconds (as the pending budget says). */
const REFUSED_RETRY_AFTER_SECONDS = 1;
/** After cutting a body: how long the handler has to answer before the socket is closed, ms. */
const CUT_GRACE_MS = 2_000;
/** Body-rate checks run this often relative to the window, within these bounds, ms. */
const TICKS_PER_WINDOW = 4;
const MIN_TICK_MS = 25;
const MAX_TICK_MS = 1_000;

/** A body-rate window: when it began (performance.now()) and socket.bytesRead then. */
interface RateWindow {
  start: number;
  mark: number;
}

/** Starts `win` again at `now`, with `read` bytes read so far. */
function restart(win: RateWindow, now: number, read: number): void {
  win.start = now;
  win.mark = read;
}

/** Whether `win` has run `ms` with fewer than `min` bytes; one that has run its length starts
 * again (a tumbling window). */
function windowShort(win: RateWindow, now: number, read: number, ms: number, min: number): boolean {
  if (now - win.start < ms) return false;
  const short = read - win.mark < min;
  restart(win, now, read);
  return short;
}

interface BodyWatch {
  req: IncomingMessage;
  res: ServerResponse;
  /** The window of the configured minimum rate. */
  window: RateWindow;
  /** The shorter window checked under pressure; while there is none, restarted at every
   * check, so a pressure window starts at most a check before the pressure does. */
  pressureWindow: RateWindow;
  /** socket.bytesRead at the last check, and when a check last saw it grow. */
  lastRead: number;
  lastProgress: number;
}

/** One S3 error as a complete raw HTTP/1.1 response that closes the connection. */
function rawError(code: 'RequestTimeout' | 'SlowDown', extra: Record<string, string> = {}): string {
  const err = new S3Error(code);
  const id = randomBytes(8).toString('hex').toUpperCase();
  const body = renderError(err, id, '/');
  const headers: Record<string, string> = {
    'Content-Type': 'application/xml',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
    'x-amz-request-id': id,
    'x-amz-id-2': id,
    Server: 'Strata',
    ...extra,
  };
  let head = `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status]}\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  return `${head}\r\n${body}`;
}

/** Node's own answers to malformed requests, kept once a 'clientError' listener exists. */
function nodeDefaultResponse(code: string | undefined): string {
  const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW' ? 413 : 400;
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`;
}

export class ConnectionGuard {
  readonly limits: Readonly<ConnectionLimits>;
  /** Admitted connections now open. */
  open = 0;
  /** Connections refused by the cap, since start. */
  refused = 0;
  /** Requests cut for an incomplete header block, since start. */
  headerTimeouts = 0;
  /** Requests cut for a body below the minimum rate, since start. */
  bodyTimeouts = 0;
  /** Requests cut under pressure that the full window would not have cut yet, since start. */
  pressureTimeouts = 0;
  /**
   * Whether writes are waiting for room that in-flight requests hold (set by the server once
   * the store is open); while true, body rates are checked over {@link PRESSURE_WINDOW_MS}.
   */
  pressure: () => boolean = () => false;
  /** When pressure() was first seen true since it was last false (performance.now()). */
  #pressureSince: number | undefined;
  readonly #overCap = new WeakSet<Socket>();
  readonly #bodies = new Map<Socket, BodyWatch>();
  #timer: NodeJS.Timeout | undefined;

  /** Throws RangeError for a negative or non-finite limit. */
  constructor(limits: Partial<ConnectionLimits> = {}) {
    const l = { ...CONNECTION_DEFAULTS, ...limits };
    for (const [name, v] of Object.entries(l)) {
      if (!Number.isFinite(v) || v < 0) throw new RangeError(`${name} must be a non-negative number`);
    }
    if (l.idleTimeoutMs === 0) throw new RangeError('idleTimeoutMs must be positive (0 would keep idle connections forever)');
    this.limits = l;
  }

  /** Options for http.createServer that make Node measure the header deadline and the idle limit. */
  serverOptions(): ServerOptions {
    const headers = Math.round(this.limits.headerTimeoutMs);
    const opts: ServerOptions = { requestTimeout: 0, keepAliveTimeout: Math.round(this.limits.idleTimeoutMs) };
    if (headers > 0) {
      opts.headersTimeout = headers;
      opts.connectionsCheckingInterval = Math.min(MAX_TICK_MS, Math.max(MIN_TICK_MS, Math.round(headers / TICKS_PER_WINDOW)));
    } else {
      opts.headersTimeout = 0;
    }
    return opts;
  }

  /**
   * Wraps the application's request listener: a request on a connection past the cap is
   * answered 503 SlowDown here; every other request is watched for its body rate, then
   * handed to `listener`.
   */
  wrap(listener: RequestListener): RequestListener {
    return (req, res) => {
      const socket = req.socket;
      if (this.#overCap.has(socket)) {
        this.#refuse(req, res);
        return;
      }
      if (this.limits.bodyWindowMs > 0 && !req.complete) {
        const watch = () => {
          const now = performance.now();
          const read = socket.bytesRead;
          this.#bodies.set(socket, { req, res, window: { start: now, mark: read }, pressureWindow: { start: now, mark: read }, lastRead: read, lastProgress: now });
        };
        // The client sends nothing before 100 Continue (sent after authorization, if at all):
        // the watch starts then.
        if (/100-continue/i.test(req.headers.expect ?? '')) {
          const writeContinue = res.writeContinue.bind(res);
          res.writeContinue = (cb?: () => void) => {
            if (!socket.destroyed && !req.complete) watch();
            writeContinue(cb);
          };
        } else {
          watch();
        }
      }
      listener(req, res);
    };
  }

  /**
   * Starts guarding `server` (created with {@link serverOptions} and {@link wrap}): counts
   * its connections against the cap, answers header timeouts, and checks body rates.
   * Adds listeners and one unref'd timer; {@link stop} removes the timer.
   */
  attach(server: Server): void {
    const event = server instanceof TlsServer ? 'secureConnection' : 'connection';
    server.on(event, (socket: Socket) => {
      if (this.limits.maxConnections > 0 && this.open >= this.limits.maxConnections) {
        this.#overCap.add(socket);
        this.refused++;
        return;
      }
      this.open++;
      socket.once('close', () => {
        this.open--;
        this.#bodies.delete(socket);
      });
    });
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => this.#clientError(err, socket));
    if (this.limits.bodyWindowMs > 0) {
      const tick = Math.min(MAX_TICK_MS, Math.max(MIN_TICK_MS, this.limits.bodyWindowMs / TICKS_PER_WINDOW));
      this.#timer = setInterval(() => this.#checkBodies(), tick);
      this.#timer.unref();
    }
  }

  /** Stops the body-rate timer (the server is closing). */
  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #refuse(req: IncomingMessage, res: ServerResponse): void {
    const err = new S3Error('SlowDown', 'Too many connections; reduce your request rate.');
    const id = randomBytes(8).toString('hex').toUpperCase();
    const body = Buffer.from(renderError(err, id, '/'));
    res.shouldKeepAlive = false;
    res.writeHead(err.status, {
      'content-type': 'application/xml',
      'content-length': body.length,
      'retry-after': String(REFUSED_RETRY_AFTER_SECONDS),
      connection: 'close',
      'x-amz-request-id': id,
      'x-amz-id-2': id,
      server: 'Strata',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  /** Node reports a parse error or the header deadline; answer as Node would, or as S3 does. */
  #clientError(err: NodeJS.ErrnoException, socket: Socket): void {
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    const canAnswer = socket.writable && (!inFlight || !inFlight.headersSent);
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      this.headerTimeouts++;
      if (canAnswer) socket.write(rawError('RequestTimeout'));
      socket.destroySoon();
      setTimeout(() => socket.destroy(), CUT_GRACE_MS).unref();
      return;
    }
    if (canAnswer) socket.write(nodeDefaultResponse(err.code));
    socket.destroy(err);
  }

  #checkBodies(): void {
    const now = performance.now();
    const { bodyWindowMs, bodyMinBytes } = this.limits;
    const pressed = this.#bodies.size > 0 && bodyWindowMs > PRESSURE_WINDOW_MS && this.pressure();
    if (!pressed) this.#pressureSince = undefined;
    else this.#pressureSince ??= now;
    const pressureSince = this.#pressureSince ?? now;
    // The same minimum rate over the shorter window.
    const pressureMinBytes = Math.max(1, Math.ceil((bodyMinBytes * PRESSURE_WINDOW_MS) / bodyWindowMs));
    for (const [socket, w] of this.#bodies) {
      if (socket.destroyed || w.req.complete) {
        this.#bodies.delete(socket);
        continue;
      }
      const read = socket.bytesRead;
      if (read !== w.lastRead) {
        w.lastRead = read;
        w.lastProgress = now;
      }
      // Bytes wait unread: the server is the slow side, the client is not to blame.
      if (w.req.readableLength > 0) {
        restart(w.window, now, read);
        restart(w.pressureWindow, now, read);
        w.lastProgress = now;
        continue;
      }
      // Nothing at all for a whole window is cut at once (bytes that came early in the
      // current window would otherwise let it run almost two).
      let stalled = now - w.lastProgress >= bodyWindowMs || windowShort(w.window, now, read, bodyWindowMs, bodyMinBytes);
      let underPressure = false;
      if (!pressed) restart(w.pressureWindow, now, read);
      else if (
        !stalled &&
        // Nothing at all for the window (the client stopped sending), or too little.
        (now - Math.max(w.lastProgress, pressureSince) >= PRESSURE_WINDOW_MS || windowShort(w.pressureWindow, now, read, PRESSURE_WINDOW_MS, pressureMinBytes))
      ) {
        stalled = underPressure = true;
      }
      if (!stalled) continue;
      this.#bodies.delete(socket);
      if (underPressure) this.pressureTimeouts++;
      this.#cut(socket, w);
    }
  }

  /**
   * Cuts a stalled body: its reader fails with RequestTimeout and the handler answers it
   * (Connection: close); if no answer has started within CUT_GRACE_MS (nobody was reading),
   * the guard answers itself. The socket is closed either way.
   */
  #cut(socket: Socket, w: BodyWatch): void {
    this.bodyTimeouts++;
    if (w.res.headersSent) {
      socket.destroy();
      return;
    }
    w.res.shouldKeepAlive = false;
    cutBody(w.req);
    const timer = setTimeout(() => {
      if (socket.destroyed) return;
      if (!w.res.headersSent && socket.writable) socket.write(rawError('RequestTimeout'));
      socket.destroySoon();
      setTimeout(() => socket.destroy(), CUT_GRACE_MS).unref();
    }, CUT_GRACE_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  }
}
