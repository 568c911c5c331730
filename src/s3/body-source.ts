/**
 * @module Reading a request body from Node's IncomingMessage with bounded memory, whatever
 * the client's fragmentation.
 *
 * The request is read in flowing mode: each piece Node's HTTP parser emits costs one call
 * and, if small, one copy — no async round trip per piece (a client sending 1-byte HTTP
 * chunks makes Node emit one piece per byte; through Node's async iterator each reached the
 * consumer on its own, at ~10 µs apiece). Small pieces wake the consumer only after the
 * parser has finished the socket read they came in, so it gets them together. Pieces of at least {@link DIRECT_MIN_BYTES} are
 * passed on as they are when nothing is staged; smaller ones are copied into a staging
 * buffer of {@link STAGING_BYTES}, so no view of a socket buffer and no object per piece is
 * kept. Once {@link HIGH_WATER_BYTES} wait for the consumer the request is paused (Node then
 * stops reading the socket after its own 16 KiB), and resumed when the consumer asks for
 * more. What the source holds — the staging buffer and the waiting pieces — never passes
 * {@link SOURCE_WORKING_BYTES}, charged through `reserve` before the first read.
 *
 * When the consumer stops early the request is left paused with its listeners removed (the
 * server drains or closes it after the response); it is never destroyed here, so the
 * client still receives the error response.
 */
import type { IncomingMessage } from 'node:http';
import type { CutSignalLike } from './body-deadline.js';

/** Staging buffer for small pieces, in bytes: one socket read (Node reads 64 KiB). */
export const STAGING_BYTES = 64 * 1024;
/** Pieces at least this long pass through as they are when nothing is staged. */
export const DIRECT_MIN_BYTES = 16 * 1024;
/** Bytes waiting for the consumer at which the request is paused. */
export const HIGH_WATER_BYTES = 64 * 1024;
/** Largest piece Node's parser emits, in bytes: one socket read. */
const MAX_PIECE_BYTES = 64 * 1024;
/**
 * Most a source holds, in bytes: the staging buffer, plus waiting pieces up to the high
 * water mark and the one piece that crossed it.
 */
export const SOURCE_WORKING_BYTES = STAGING_BYTES + HIGH_WATER_BYTES + MAX_PIECE_BYTES;

export interface BodySourceOptions {
  /**
   * The body's length if the request announced it (Content-Length): the source then holds
   * and reserves no more than twice it (staging sized to it).
   */
  expectedBytes?: number;
  /** Charges the working memory before the first read; returns its release. May throw. */
  reserve?: (bytes: number) => () => void;
  /** When it aborts, a pending or later read throws `cutError()`. */
  signal?: CutSignalLike;
  cutError: () => Error;
  /** The error for a connection that closed or failed before the body ended. */
  closedError: (cause: unknown) => Error;
}

/** Bytes a source for a body of `expected` bytes (undefined: unknown) reserves. */
export function sourceWorkingBytes(expected: number | undefined): number {
  return expected === undefined ? SOURCE_WORKING_BYTES : Math.min(SOURCE_WORKING_BYTES, 2 * expected);
}

/**
 * Whether all `expected` bytes of `req`'s body are parsed and waiting in its buffer: the
 * stream was never set flowing and holds exactly the announced length. (Node's parser
 * never passes on more body than Content-Length, so no byte of it was read yet; its
 * message-complete event may still be to come, since Node runs microtasks after each body
 * piece it parses.) Each piece is a buffer of its own (a copy, not a view of the socket's
 * read buffer), so `read()` returns bytes that nothing else writes.
 */
function wholeBodyBuffered(req: IncomingMessage, expected: number | undefined): boolean {
  return (
    expected !== undefined &&
    expected > 0 &&
    req.readableFlowing === null &&
    !req.readableEnded &&
    !req.destroyed &&
    req.readableLength === expected
  );
}

/**
 * Yields the body of `req` in order, each byte once. The yielded buffers are handed over
 * (never written again). Throws `closedError` if the connection ends before the body does,
 * `cutError` once `signal` aborts, or what `reserve` throws (before reading anything).
 * Iterate once.
 */
export async function* readBodySource(req: IncomingMessage, opts: BodySourceOptions): AsyncGenerator<Uint8Array, void, undefined> {
  const stagingBytes = Math.max(1, Math.min(STAGING_BYTES, opts.expectedBytes ?? STAGING_BYTES));
  const release = opts.reserve?.(sourceWorkingBytes(opts.expectedBytes));
  if (wholeBodyBuffered(req, opts.expectedBytes)) {
    // A small body usually arrives with its headers, and Node has parsed all of it before
    // the handler asks: take it in one synchronous read (no listeners, no staging copy, no
    // wake-up), as the one piece it is. The stream is then let flow with nothing left to
    // read, so it ends when the parser completes the message (what Node's server does with
    // a body nobody reads).
    try {
      if (opts.signal?.aborted) throw opts.cutError();
      const all = req.read() as Buffer;
      req.resume();
      yield all;
      return;
    } finally {
      release?.();
    }
  }
  const queue: Uint8Array[] = [];
  let held = 0; // bytes queued or staged, not yet handed on
  let staging: Uint8Array | undefined;
  let from = 0; // staging[from, to) is staged, not yet handed on
  let to = 0;
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  let later: NodeJS.Immediate | undefined;
  const notify = () => {
    if (later) clearImmediate(later);
    later = undefined;
    const w = wake;
    wake = undefined;
    w?.();
  };
  // Node runs its microtasks after every piece its parser emits, so waking the consumer at
  // once would hand it one 1-byte piece at a time. Small staged bytes wake it only once the
  // parser has finished the current socket read (setImmediate runs after I/O callbacks).
  const notifySoon = () => {
    if (wake && !later) later = setImmediate(notify);
  };
  const onData = (piece: Buffer) => {
    if (from === to && piece.length >= DIRECT_MIN_BYTES) {
      queue.push(piece);
      held += piece.length;
    } else {
      for (let off = 0; off < piece.length; ) {
        if (!staging || to === staging.length) {
          if (staging && to > from) queue.push(staging.subarray(from, to));
          staging = new Uint8Array(stagingBytes);
          from = to = 0;
        }
        const n = Math.min(piece.length - off, staging.length - to);
        staging.set(piece.subarray(off, off + n), to);
        to += n;
        off += n;
        held += n;
      }
    }
    if (held >= HIGH_WATER_BYTES) {
      req.pause();
      notify();
    } else if (queue.length > 0) notify();
    else notifySoon();
  };
  const onEnd = () => {
    ended = true;
    notify();
  };
  const onError = (err: unknown) => {
    failure ??= opts.closedError(err);
    notify();
  };
  const onClose = () => {
    // 'close' means destroyed (or done after 'end'): buffered bytes will not come.
    if (!ended) failure ??= opts.closedError(new Error('the connection closed'));
    notify();
  };
  const onAbort = () => {
    failure ??= opts.cutError();
    notify();
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  req.on('close', onClose);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) onAbort();
  try {
    for (;;) {
      if (failure) throw failure;
      let out: Uint8Array | undefined;
      if (queue.length > 0) out = queue.shift()!;
      else if (to > from) {
        out = staging!.subarray(from, to);
        from = to;
      }
      if (out) {
        held -= out.length;
        yield out;
        continue;
      }
      if (ended) return;
      if (req.readableEnded) {
        // Ended before we listened (an empty body already consumed by Node).
        ended = true;
        return;
      }
      if (req.destroyed) {
        // Closed before we listened (the client left while the request was being
        // authorized): no event will come, and waiting would hold the reservation forever.
        failure = opts.closedError(req.errored ?? new Error('the connection closed'));
        continue;
      }
      req.resume();
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
    req.off('close', onClose);
    opts.signal?.removeEventListener('abort', onAbort);
    if (later) clearImmediate(later);
    if (!ended) req.pause();
    release?.();
  }
}
