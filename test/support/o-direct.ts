/** @module Whether a directory takes O_DIRECT writes, found without Strata's code (for tests). */
import { closeSync, constants, openSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** True when a 4 KiB aligned write (a view of a fresh, page-aligned WebAssembly memory)
 * through an O_DIRECT descriptor succeeds in `dir`. */
export function takesDirect(dir: string): boolean {
  if (constants.O_DIRECT === undefined) return false;
  const path = join(dir, `o-direct-probe-${process.pid}`);
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_DIRECT, 0o644);
    const page = new Uint8Array(new WebAssembly.Memory({ initial: 1 }).buffer, 0, 4096);
    return writeSync(fd, page, 0, 4096, 0) === 4096;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) {
      closeSync(fd);
      unlinkSync(path);
    }
  }
}
