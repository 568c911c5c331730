/**
 * @module The disk floor of a repair, for bench:erasure: the wall time this machine's disk
 * needs to move the bytes a `strata scrub --repair` of one domain moved, with no checksum, no
 * codec and no bookkeeping. Measured in the same run, right after each repair, so the repair
 * row can be judged against what the disk allowed at that moment (it swings by a third from one
 * minute to the next on this shared VM).
 *
 * What it does, all with O_DIRECT (as the repair reads and writes) and synchronous calls on
 * worker threads:
 *   - READERS threads read `readBytes` from the given fragment files (whole files, taken in
 *     turn across the domains, the last one cut short), READ_BYTES per call, each thread into
 *     the one reused buffer a repair's reads on that thread use (fs/blob-file.ts
 *     directReadScratch: on huge pages when the process has them, as the repair's does);
 *   - at the same time one thread writes `writeBytes` to a new file in `writeDir`, in
 *     READ_BYTES calls from one page-aligned WebAssembly memory (as the repair's writes are
 *     staged), then fdatasync, close and unlink.
 * The repair holds k sources of a group at once in distinct buffers, checks every block and
 * runs the codec; the floor does none of that, so it is a floor, not equal work.
 */
import { closeSync, constants, fdatasyncSync, openSync, readdirSync, readSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { DIRECT_GROUP_BYTES } from '../src/provider/erasure/stripe-pass.js';
import { alignedBuffer, directReadScratch } from '../src/provider/fs/blob-file.js';

/** Bytes per read or write call: the repair's direct group per source. */
const READ_BYTES = DIRECT_GROUP_BYTES;
/** Reading threads: two ran 2 MiB direct reads of these fragments fastest in most of the
 * interleaved runs here (1-4 tried; four was faster once, the disk's best count moves). */
const READERS = 2;
/** Files under this size are skipped (replicated small blobs, log segments' tails): the
 * repair's bytes are the large blobs' fragments. */
const MIN_FILE_BYTES = 1024 * 1024;

export interface FloorRun {
  seconds: number;
  readBytes: number;
  writeBytes: number;
}

type Job = { role: 'read'; files: [path: string, bytes: number][] } | { role: 'write'; path: string; bytes: number };

function runJob(job: Job): number {
  let moved = 0;
  if (job.role === 'write') {
    const buf = alignedBuffer(READ_BYTES);
    const fd = openSync(job.path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DIRECT, 0o600);
    try {
      while (moved < job.bytes) moved += writeSync(fd, buf, 0, READ_BYTES, moved);
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
      unlinkSync(job.path);
    }
    return moved;
  }
  for (const [path, bytes] of job.files) {
    const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECT);
    try {
      const buf = directReadScratch(fd, READ_BYTES);
      for (let at = 0; at < bytes; ) {
        // A direct read is whole 4 KiB blocks: a budget cut inside the file reads to the next one.
        const want = Math.min(READ_BYTES, bytes - at);
        const n = readSync(fd, buf, 0, Math.ceil(want / 4096) * 4096, at);
        if (n === 0) break;
        moved += Math.min(n, want);
        at += n;
      }
    } finally {
      closeSync(fd);
    }
  }
  return moved;
}

if (!isMainThread && workerData?.diskFloor) parentPort!.postMessage(runJob(workerData.job as Job));

/** Every file under `dir`, recursively, with its size, in directory order (none when `dir`
 * does not exist); files and directories removed while it walks are skipped. */
export function treeFiles(dir: string): [path: string, bytes: number][] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: [string, number][] = [];
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...treeFiles(p));
    else if (e.isFile()) {
      const size = statSync(p, { throwIfNoEntry: false })?.size;
      if (size !== undefined) out.push([p, size]);
    }
  }
  return out;
}

/** Files of at least MIN_FILE_BYTES under `dir`, with their sizes. */
const largeFiles = (dir: string) => treeFiles(dir).filter(([, size]) => size >= MIN_FILE_BYTES);

/**
 * The files a floor read of `readBytes` covers: the large files of each of `dirs`, taken in
 * turn (one of each domain, then the next of each), the last cut to the budget; dealt to
 * READERS lists in the same turn. Throws when the directories hold fewer bytes.
 */
export function floorReads(dirs: readonly string[], readBytes: number): [string, number][][] {
  const perDir = dirs.map(largeFiles);
  const lists: [string, number][][] = Array.from({ length: READERS }, () => []);
  let left = readBytes;
  let dealt = 0;
  for (let i = 0; left > 0; i++) {
    if (perDir.every((files) => i >= files.length)) throw new Error(`disk floor: ${readBytes} bytes asked, the domains hold ${readBytes - left} in files of 1 MiB and more`);
    for (const files of perDir) {
      const f = files[i];
      if (!f || left <= 0) continue;
      const take = Math.min(f[1], left);
      lists[dealt++ % READERS]!.push([f[0], take]);
      left -= take;
    }
  }
  return lists;
}

function inWorker(job: Job): Promise<number> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: { diskFloor: true, job } });
    w.once('message', resolve);
    w.once('error', reject);
    w.once('exit', (code) => reject(new Error(`disk floor worker exited with ${code}`)));
  });
}

/** Reads `readBytes` from the large files under `readDirs` and writes `writeBytes` to a
 * temporary file in `writeDir` (removed after), at once; the wall time of both. */
export async function diskFloor(readDirs: readonly string[], readBytes: number, writeDir: string, writeBytes: number): Promise<FloorRun> {
  const lists = floorReads(readDirs, readBytes);
  const write = Math.ceil(writeBytes / READ_BYTES) * READ_BYTES;
  const t0 = performance.now();
  const moved = await Promise.all([
    ...lists.map((files) => inWorker({ role: 'read', files })),
    inWorker({ role: 'write', path: join(writeDir, `.disk-floor-${process.pid}`), bytes: write }),
  ]);
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, readBytes: moved.slice(0, -1).reduce((a, n) => a + n, 0), writeBytes: moved.at(-1)! };
}
