/**
 * @module Batched writes of log lines to stdout: lines appended during one event-loop turn
 * go out in one write(2) at the next turn (setImmediate), instead of one write per line.
 * A request line per request made stdout writes about a tenth of a small GET's server CPU.
 *
 * Lines are delayed by at most one turn; a batch past {@link FLUSH_BYTES} is written at
 * once, so memory stays bounded under any request rate. At process exit whatever is pending
 * is written synchronously, so a normal exit (or an uncaught exception) loses nothing; only
 * a SIGKILL can lose the lines of the last turn.
 */
import { writeSync } from 'node:fs';

/** A pending batch this large (UTF-16 code units, ~bytes for log text) is written at once: bounds memory. */
export const FLUSH_BYTES = 64 * 1024;

let pending = '';
let scheduled = false;
let exitHooked = false;

function flushSoon(): void {
  scheduled = false;
  flushStdoutLines();
}

/** Writes whatever is pending to process.stdout now. Mutates the module's pending batch. */
export function flushStdoutLines(): void {
  if (pending === '') return;
  const text = pending;
  pending = '';
  process.stdout.write(text);
}

function flushAtExit(): void {
  if (pending === '') return;
  const text = pending;
  pending = '';
  try {
    writeSync(1, text);
  } catch {
    // stdout closed: nothing left to tell
  }
}

/**
 * Appends `line` (which must end with a newline) to stdout's pending batch and schedules its
 * write at the next event-loop turn; writes at once when the batch reaches FLUSH_BYTES.
 * Never throws.
 */
export function writeStdoutLine(line: string): void {
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', flushAtExit);
  }
  pending += line;
  if (pending.length >= FLUSH_BYTES) flushStdoutLines();
  else if (!scheduled) {
    scheduled = true;
    setImmediate(flushSoon).unref();
  }
}
