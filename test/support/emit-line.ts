/**
 * @module One JSON line on stdout, written synchronously, for the worker processes that kill
 * tests and the soak test spawn: a line is whole on the pipe before the next statement runs, so
 * a SIGKILL can cut between lines but never inside one, and the parent sees every event that
 * happened before the kill.
 */
import { writeSync } from 'node:fs';

/** Writes `line` as JSON plus a newline to fd 1, retrying while a full pipe answers EAGAIN. */
export function emit(line: Record<string, unknown>): void {
  const buf = Buffer.from(`${JSON.stringify(line)}\n`);
  for (let off = 0; off < buf.length; ) {
    try {
      off += writeSync(1, buf, off);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}
