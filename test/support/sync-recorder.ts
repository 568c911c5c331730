/**
 * Records which paths are fsynced while it is installed, through node:fs/promises (`open` is
 * wrapped to remember each handle's path, FileHandle's `sync` and `datasync` to note it) and
 * through node:fs's synchronous calls (`openSync` remembers each descriptor's path,
 * `fsyncSync` and `fdatasyncSync` note it). Code under test imports these as ES modules;
 * `syncBuiltinESMExports` makes those live bindings follow the patched CommonJS exports, and
 * restoring does the same in reverse. Only syncs of files opened while installed are seen.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import type { FileHandle } from 'node:fs/promises';
import { resolve } from 'node:path';

const require = createRequire(import.meta.url);

export interface SyncRecorder {
  /** Absolute paths synced (sync or datasync), in order, repeats kept. */
  readonly synced: string[];
  /** Puts node:fs/promises back as it was. */
  restore(): void;
}

/** `before` runs ahead of each recorded sync of a handle opened through node:fs/promises, with
 * its path and the handle: a test may delay it (a slow disk) or throw (a failed sync).
 * `afterOpen` runs after each open through node:fs/promises has opened its file, before the
 * caller gets the handle: a test may delay it (an open answered late). */
export async function recordSyncs(
  before?: (path: string, handle: FileHandle) => Promise<void> | void,
  afterOpen?: (path: string) => Promise<void> | void
): Promise<SyncRecorder> {
  const fsp = require('node:fs/promises') as typeof import('node:fs/promises');
  const fs = require('node:fs') as typeof import('node:fs');
  const orig = { openSync: fs.openSync, fsyncSync: fs.fsyncSync, fdatasyncSync: fs.fdatasyncSync };
  const fdPaths = new Map<number, string>();
  const origOpen = fsp.open;
  // FileHandle is not exported: take its prototype from a handle.
  const probe = await origOpen(resolve('.'), 'r');
  const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void>; datasync: () => Promise<void> };
  await probe.close();
  const origSync = proto.sync;
  const origDatasync = proto.datasync;
  const paths = new WeakMap<object, string>();
  const synced: string[] = [];
  const patchedOpen = async (...args: Parameters<typeof fsp.open>) => {
    const h = await origOpen(...args);
    paths.set(h, resolve(String(args[0])));
    await afterOpen?.(resolve(String(args[0])));
    return h;
  };
  fsp.open = patchedOpen as typeof fsp.open;
  proto.sync = async function (this: object) {
    const p = paths.get(this);
    if (p !== undefined) {
      synced.push(p);
      await before?.(p, this as FileHandle);
    }
    return origSync.call(this);
  };
  proto.datasync = function (this: object) {
    const p = paths.get(this);
    if (p !== undefined) synced.push(p);
    return origDatasync.call(this);
  };
  fs.openSync = ((...args: Parameters<typeof fs.openSync>) => {
    const fd = orig.openSync(...args);
    fdPaths.set(fd, resolve(String(args[0])));
    return fd;
  }) as typeof fs.openSync;
  const noteFd = (fd: number) => {
    const p = fdPaths.get(fd);
    if (p !== undefined) synced.push(p);
  };
  fs.fsyncSync = (fd: number) => {
    noteFd(fd);
    orig.fsyncSync(fd);
  };
  fs.fdatasyncSync = (fd: number) => {
    noteFd(fd);
    orig.fdatasyncSync(fd);
  };
  syncBuiltinESMExports();
  return {
    synced,
    restore() {
      fsp.open = origOpen;
      proto.sync = origSync;
      proto.datasync = origDatasync;
      Object.assign(fs, orig);
      syncBuiltinESMExports();
    },
  };
}
