/**
 * @module Small files the server creates once and must not lose: the master key beside a local
 * repository, and the credentials generated on first start. Each is created exclusively, its
 * bytes fsynced and then its directory's entry, so the file survives a power loss from the
 * moment the call returns: data sealed under a master key that a crash took back could never
 * be read again.
 */
import { closeSync, fsyncSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Creates `file` (it must not exist: flag 'wx') with `text` and permission `mode`, and makes
 * it durable, file and directory entry, before returning. On a failure after the create, the
 * partial file is removed (best effort) so that the next start does not find a torn one; the
 * error is rethrown.
 */
export function createFileDurably(file: string, text: string, mode: number): void {
  const fd = openSync(file, 'wx', mode);
  try {
    try {
      const bytes = Buffer.from(text, 'utf8');
      for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    syncDirectory(dirname(file));
  } catch (err) {
    try {
      unlinkSync(file);
    } catch {
      // left for the operator: the next start reports it as malformed
    }
    throw err;
  }
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
