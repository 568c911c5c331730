/**
 * @module The CPU half of a stripe pass (stripe-pass.ts), for one group of stripes: check each
 * source fragment's framed bytes (header on the first group, every block's CRC32C, trailer on
 * the last), rebuild the target fragments' cells with the codec and frame them.
 *
 * Every fragment of a blob frames its group the same way (same header, block and trailer
 * offsets), so with a rebuild the sources' framed bytes go as they are into a stripe resident
 * in the codec's wasm memory (read there by a worker, or copied once; a worker's reads around
 * the page cache land there with no copy at all, each shard holding an aligned read window),
 * are checked in place, and the codec runs over the whole framed range (when a worker reads
 * every source around the page cache, the sources are streamed instead: each read in turn
 * into one window, checked, and its share added to the targets, see streamFramed; a check
 * only reads them through one window the same way, streamCheck): a target's bytes at
 * its CRC words come out as the same combination of the sources' CRC words, and are then
 * overwritten with the target's own (sealFramed). Nothing is unframed, and a target is copied
 * out once. Without a resident stripe (a check only, or the resident budget spent) sources
 * are unframed into per-index scratch and the copying codec rebuilds from there.
 *
 * Bytes in, bytes out, so that it runs either inline or in a worker thread (pass-pool.ts)
 * while the caller's thread goes on reading the next group; the one I/O is a job's `files`,
 * read synchronously by a worker thread that was given the files instead of their bytes.
 * Everything a job holds is plain data (numbers, strings, byte arrays), so it crosses a worker
 * boundary as it is.
 */
import type { ReedSolomon, Shard } from '../../codec/reed-solomon.js';
import type { ResidentStripe } from '../../codec/resident-stripe.js';
import { takeResidentStripe } from './scratch.js';
import { FragmentError, frameCell, parseHeader, parseTrailer, sealFramed, unframe } from './fragment.js';
import { framedLength, Geometry, HEADER_BYTES, TRAILER_BYTES } from './geometry.js';
import { alignedBuffer, DIRECT_READ_ALIGN, directWindow, readBlobRangeDirectInPlaceSync, readBlobRangeDirectSync, readBlobRangeSync } from '../fs/blob-file.js';
import { ProviderError, type ProviderErrorCode } from '../provider.js';
import { isDescriptorExhaustion, isMediaError } from './domains.js';

export interface GroupJob {
  key: string;
  k: number;
  m: number;
  cellSize: number;
  /** Logical length of the blob. */
  length: number;
  generation: number;
  /** First 16 bytes of SHA-256 of the key (fragment.ts keyHash). */
  keyHash: Uint8Array;
  /** Stripes [s0, s1) of the blob; `first` / `last`: the group holds the header / trailer. */
  s0: number;
  s1: number;
  first: boolean;
  last: boolean;
  /** Framed bytes of this group read from each source fragment. */
  sources: { index: number; bytes: Uint8Array }[];
  /**
   * Sources to read by the thread that runs the job, before checking them (a worker thread,
   * pass-pool.ts; never an event loop): bytes [start, start + length) of the blob in each
   * fs blob file (Provider.blobFilePath). A file that cannot be read whole is reported in
   * `failed` with the read's error code. Joined to `sources`. `direct`: read around the page
   * cache (Provider.directFileReads): straight into aligned windows when every file of the
   * job is direct and covers the group's one span (directLayout), else through
   * readBlobRangeDirectSync's scratch and a copy.
   */
  files?: { index: number; path: string; start: number; length: number; direct?: boolean }[];
  /** Fragment indices to rebuild, and their running CRC folds (fragment.ts foldCrc). */
  targets: number[];
  folds: number[];
  /** Memory the rebuilt cells may be framed into (pass-pool.ts recycles written outputs): a
   * target's output takes the first one large enough, or a fresh array. */
  spare?: ArrayBuffer[];
}

export interface GroupResult {
  /** Sources that failed a check, with why (they must not be used again); `code`: a read of
   * `files` failed with this ProviderError code (absent: the bytes failed a check), and
   * `media` when the system reported a media error of that file under it (isMediaError),
   * `descriptors` when the read found no file descriptor left (isDescriptorExhaustion). */
  failed: { index: number; message: string; code?: ProviderErrorCode; media?: true; descriptors?: true }[];
  /** Per target: its framed cells for this group (absent when fewer than k sources passed). */
  outputs: Uint8Array[];
  /** Per target: the fold after this group. */
  folds: number[];
  /** Sources that passed. */
  good: number;
}

/** Runs `job` (see the module note). Never throws for bad bytes: they are reported in `failed`. */
export function processGroup(job: GroupJob, codec: ReedSolomon): GroupResult {
  const g = new Geometry(job.k, job.cellSize, job.length);
  const per = job.s1 - job.s0;
  const length = groupLength(job, g);
  const rebuild = job.targets.length > 0 && per > 0;
  const win = directLayout(job, length);
  const stripe = rebuild ? takeStripe(codec, length, win) : undefined;
  try {
    if (stripe) {
      const streamed = win && streamable(job) ? streamFramed(job, codec, g, stripe, length, win) : undefined;
      if (streamed && 'outputs' in streamed) return streamed;
      if (!streamed) return runFramed(job, codec, g, stripe, length, win);
      // A file that could not be read is reported as its read failed, and not read again.
      const rest = runFramed({ ...job, files: job.files!.filter((f) => f.index !== streamed.unread.index) }, codec, g, stripe, length, win);
      rest.failed.unshift(streamed.unread);
      return rest;
    }
    if (!rebuild && win && streamable(job)) {
      const one = reusedWindow(0, win.bytes, 1);
      if (one) return streamCheck(job, g, job.files!, one);
    }
    const window = (f: NonNullable<GroupJob['files']>[number]): Placement | undefined => {
      const w = win && reusedWindow(f.index, win.bytes, job.k + job.m);
      return w && { window: w };
    };
    const unread = job.files ? readFiles(job, job.files, window) : [];
    const result = runGroup(job, codec, g, per, rebuild);
    if (unread.length) result.failed.unshift(...unread);
    return result;
  } finally {
    stripe?.release();
  }
}

/** Bytes of the group in every fragment: its framed cells, with the header on the first group
 * and the trailer on the last. */
function groupLength(job: GroupJob, g: Geometry): number {
  let n = (job.first ? HEADER_BYTES : 0) + (job.last ? TRAILER_BYTES : 0);
  for (let s = job.s0; s < job.s1; s++) n += framedLength(g.cellLength(s));
  return n;
}

/**
 * Where every source of `job` is read by this thread around the page cache from the group's
 * span, `length` bytes (stripe-pass.ts gives all files of a group that one span), the layout of
 * the aligned windows they are read straight into, with no copy (fs/blob-file.ts
 * readBlobRangeDirectInPlaceSync): the group's bytes start `offset` bytes into a window of
 * `bytes`. Undefined otherwise (the files are read through a scratch and copied, as before).
 */
function directLayout(job: GroupJob, length: number): { offset: number; bytes: number } | undefined {
  const files = job.files;
  if (!files?.length) return undefined;
  const start = files[0]!.start;
  if (!files.every((f) => f.direct === true && f.start === start && f.length === length)) return undefined;
  return directWindow(start, length);
}

/** A rebuild's resident stripe: shards of `length` bytes, or with `win` (directLayout) shards
 * holding an aligned read window and room for its alignment, which runFramed finds at the
 * same offset of every shard (the stride is a multiple of DIRECT_READ_ALIGN). */
function takeStripe(codec: ReedSolomon, length: number, win: { offset: number; bytes: number } | undefined): ResidentStripe | undefined {
  if (!win) return takeResidentStripe(codec, length);
  const size = win.bytes + DIRECT_READ_ALIGN;
  return takeResidentStripe(codec, size, size);
}

/** Where a window stripe's (takeStripe) read window lies in every shard: `pad` bytes in (to the
 * first aligned byte; the same in every shard, the stride being a multiple of the alignment),
 * and the group's bytes `base` bytes in (the pad, then directLayout's offset). */
function windowPlace(stripe: ResidentStripe, win: { offset: number }): { pad: number; base: number } {
  const pad = (DIRECT_READ_ALIGN - (stripe.shard(0).byteOffset % DIRECT_READ_ALIGN)) % DIRECT_READ_ALIGN;
  return { pad, base: pad + win.offset };
}

/** When every target is a data fragment only the missing data slots are computed: a pass that
 * read just k sources (stripe-pass.ts `needed`) leaves parity slots empty that nobody asked
 * for, and computing them would cost a codec row each. */
function dataOnly(job: GroupJob): boolean {
  return job.targets.every((i) => i < job.k);
}

/** The rebuild over framed bytes resident in `stripe` (see the module note): `length` bytes per
 * source, copied in here, or read there from `job.files` and each checked right after its read
 * (while its bytes are still in the core's cache). With `win` (directLayout) the files are read
 * straight into an aligned window in each shard, the group's bytes `base` bytes into the shard
 * (its alignment, then the window's offset), and every source and the codec use them there. */
function runFramed(job: GroupJob, codec: ReedSolomon, g: Geometry, stripe: ResidentStripe, length: number, win?: { offset: number; bytes: number }): GroupResult {
  const bad: GroupResult['failed'] = [];
  const present: boolean[] = new Array(job.k + job.m).fill(false);
  let good = 0;
  const { pad, base } = win ? windowPlace(stripe, win) : { pad: 0, base: 0 };
  const admit = (src: { index: number; bytes: Uint8Array }) => {
    if (present[src.index]) return; // a source given twice counts once (as the heap path's map does)
    const into = stripe.shard(src.index).subarray(base, base + length);
    try {
      if (src.bytes.buffer !== into.buffer || src.bytes.byteOffset !== into.byteOffset) {
        if (src.bytes.length !== length) throw new FragmentError(`${job.key}: fragment ${src.index} group is ${src.bytes.length} bytes, expected ${length}`);
        into.set(src.bytes);
      }
      checkGroup(job, g, src.index, into.subarray(0, src.bytes.length), null);
      present[src.index] = true;
      good++;
    } catch (err) {
      bad.push({ index: src.index, message: (err as Error)?.message ?? String(err) });
    }
  };
  job.sources.forEach(admit);
  // A file of an index already admitted (given in job.sources) is read aside: never over
  // bytes that were checked.
  const place = (f: NonNullable<GroupJob['files']>[number]): Placement | undefined =>
    present[f.index] ? undefined : win ? { window: stripe.shard(f.index).subarray(pad, pad + win.bytes) } : f.length === length ? { into: stripe.shard(f.index) } : undefined;
  const unread = job.files ? readFiles(job, job.files, place, admit) : [];
  const failed = [...unread, ...bad];
  const folds = [...job.folds];
  if (good < job.k) return { failed, outputs: [], folds, good };
  const from = job.first ? HEADER_BYTES : 0;
  const to = length - (job.last ? TRAILER_BYTES : 0);
  // Only the targets: a pass that read k sources leaves the other absent slots empty, and each
  // slot computed costs a pass over the k sources (a parity target of a missing-only repair
  // would otherwise compute all m parity rows).
  codec.reconstructResident(stripe, present, { offset: base + from, length: to - from, only: job.targets });
  return { failed, outputs: framedOutputs(job, g, stripe, base, from, to, folds), folds, good };
}

/** Each target's rebuilt bytes [base + from, base + to) of its shard, copied out and sealed
 * (its own CRC words and the running folds, which `folds` is updated with). */
function framedOutputs(job: GroupJob, g: Geometry, stripe: ResidentStripe, base: number, from: number, to: number, folds: number[]): Uint8Array[] {
  return job.targets.map((i, j) => {
    const out = outputArray(job, to - from);
    out.set(stripe.shard(i).subarray(base + from, base + to));
    for (let s = job.s0, at = 0; s < job.s1; s++) {
      const fl = framedLength(g.cellLength(s));
      folds[j] = sealFramed(out.subarray(at, at + fl), job.generation, i, g.firstBlock(s), folds[j]!);
      at += fl;
    }
    return out;
  });
}

/**
 * The rebuild of a group read around the page cache (directLayout) with nothing given as
 * bytes, its sources streamed: every file is read in turn into ONE aligned window (the first
 * source's shard), checked there, and the k sources' shares are added to the targets as each
 * arrives (ReedSolomon.reconstructResidentPart), so the group never holds more than one source.
 * Why: on this VM a direct read into the buffer the last one used ran at 2.6-3.3 GiB/s, and
 * reads that move between 14 windows at 2.0-2.3 (2 threads, 2 MiB reads, 10 GiB of (10,4)
 * fragments, interleaved runs); and the codec then reads each source while its check has
 * just brought it into the cache. Files past the first k (a full repair reads every present
 * fragment) are checked and not used. For a job that is streamable (the caller's test) but
 * has fewer than k files or a file of a target: undefined, and the caller runs the group the
 * long way (runFramed). For a file that fails its check: undefined too, and the long way reads
 * every file again and reports which failed. For a file that cannot be read whole: its failure
 * as readFiles reports it (`unread`), and the caller runs the long way without that file,
 * reporting it: a read that failed is reported as it failed, never retried into a pass. Nothing
 * this did is kept when it does not return a result.
 *
 * Measured and not taken: copying, checking and adding each 256 KiB cell in turn (so the check
 * and the codec read it from the core's cache) instead of the whole group saved no CPU (a
 * (10,4) repair of 1 GiB: 6.9-7.6 s of CPU against 6.8-7.5 s, 4 interleaved runs each). The
 * check itself is worth ~12% of such a repair's wall time (runs with it skipped, for the
 * measurement only: 4.0 s against 4.2-4.9 s), the most any cheaper check could give back.
 */
function streamFramed(
  job: GroupJob,
  codec: ReedSolomon,
  g: Geometry,
  stripe: ResidentStripe,
  length: number,
  win: { offset: number; bytes: number }
): GroupResult | { unread: GroupResult['failed'][number] } | undefined {
  const files = [...job.files!].sort((a, b) => a.index - b.index);
  if (files.length < job.k || files.some((f) => job.targets.includes(f.index))) return undefined;
  const sources = files.slice(0, job.k).map((f) => f.index);
  const { pad, base } = windowPlace(stripe, win);
  const from = job.first ? HEADER_BYTES : 0;
  const to = length - (job.last ? TRAILER_BYTES : 0);
  const w = sources[0]!;
  const window = stripe.shard(w).subarray(pad, pad + win.bytes);
  const at = w * stripe.stride + base + from;
  for (const [x, f] of files.entries()) {
    const read = readThrough(job, f, window);
    if ('failed' in read) return { unread: read.failed };
    try {
      checkGroup(job, g, f.index, read.bytes, null);
    } catch {
      return undefined;
    }
    if (x < job.k) codec.reconstructResidentPart(stripe, sources, job.targets, x, at, { offset: base + from, length: to - from }, x === 0);
  }
  const folds = [...job.folds];
  return { failed: [], outputs: framedOutputs(job, g, stripe, base, from, to, folds), folds, good: files.length };
}

/** File `f` read into the shared `window` as readFiles reads it (its failure entry, as the
 * caller reports it), and not kept in job.sources: the window is the next file's too. */
function readThrough(job: GroupJob, f: NonNullable<GroupJob['files']>[number], window: Uint8Array): { bytes: Uint8Array } | { failed: GroupResult['failed'][number] } {
  const failed = readFiles(job, [f], () => ({ window }))[0];
  return failed ? { failed } : { bytes: job.sources.pop()!.bytes };
}

/** Whether `job`'s files may be streamed through one window (streamFramed, streamCheck):
 * nothing given as bytes, every file index a fragment of the blob and given once, every target
 * too. Else the job runs the long way, which reports or tolerates what does not fit. */
function streamable(job: GroupJob): boolean {
  const n = job.k + job.m;
  const ok = (i: number) => Number.isInteger(i) && i >= 0 && i < n;
  const files = job.files ?? [];
  return (
    job.sources.length === 0 &&
    files.every((f) => ok(f.index)) &&
    new Set(files.map((f) => f.index)).size === files.length &&
    job.targets.every(ok) &&
    new Set(job.targets).size === job.targets.length
  );
}

/** A check only of a group read around the page cache (directLayout) with nothing given as
 * bytes: every file read in turn into the one aligned `window` and checked there before the
 * next is read (the reads into one buffer, as in streamFramed); `job.sources` is left empty.
 * Failures as runGroup's: the files that could not be read whole, then those that failed. */
function streamCheck(job: GroupJob, g: Geometry, files: NonNullable<GroupJob['files']>, window: Uint8Array): GroupResult {
  const unread: GroupResult['failed'] = [];
  const bad: GroupResult['failed'] = [];
  let good = 0;
  for (const f of files) {
    const read = readThrough(job, f, window);
    if ('failed' in read) {
      unread.push(read.failed);
      continue;
    }
    try {
      checkGroup(job, g, f.index, read.bytes, null);
      good++;
    } catch (err) {
      bad.push({ index: f.index, message: (err as Error)?.message ?? String(err) });
    }
  }
  return { failed: [...unread, ...bad], outputs: [], folds: [...job.folds], good };
}

/** The rebuild without a resident stripe: sources unframed into per-index scratch, the copying
 * codec; or with `rebuild` false (no targets, or no stripes) a check only. */
function runGroup(job: GroupJob, codec: ReedSolomon, g: Geometry, per: number, rebuild: boolean): GroupResult {
  const failed: GroupResult['failed'] = [];
  const cells = new Map<number, Uint8Array>();
  for (const src of job.sources) {
    // Unframed cells live only while this (synchronous) call runs, in per-index scratch reused
    // from group to group (a fresh array per source and group cost page faults and GC); a
    // check only (no targets) checks the bytes where they are.
    const into = rebuild ? reused(SOURCE_SCRATCH, src.index, Math.max(1, per) * job.cellSize) : null;
    try {
      checkGroup(job, g, src.index, src.bytes, into);
      cells.set(src.index, into ?? src.bytes);
    } catch (err) {
      failed.push({ index: src.index, message: (err as Error)?.message ?? String(err) });
    }
  }
  const folds = [...job.folds];
  const outputs: Uint8Array[] = [];
  if (!rebuild || cells.size < job.k) return { failed, outputs, folds, good: cells.size };
  const n = job.k + job.m;
  const only = dataOnly(job);
  // Each target's framed cells go to one array, span after span.
  const outLength = spans(g, job.s0, job.s1).reduce((n, [a, b]) => n + (b - a) * framedLength(g.cellLength(a)), 0);
  const outs = job.targets.map(() => outputArray(job, outLength));
  let at = 0;
  for (const [a, b] of spans(g, job.s0, job.s1)) {
    const cl = g.cellLength(a);
    const off = (a - job.s0) * job.cellSize;
    const len = (b - a) * cl;
    const shards: Shard[] = new Array(n).fill(null);
    // Every verified source is given: the codec takes k of them and computes only the empty
    // slots (the targets, and fragments missing or failed). Rebuilt slots land in this
    // thread's scratch (framed into fresh buffers below): fresh arrays per group cost about
    // as much in page faults as the arithmetic.
    for (const [i, c] of cells) shards[i] = c.subarray(off, off + len);
    const into = shards.map((sh, i) => (sh ? null : reused(SCRATCH, i, len)));
    if (only) codec.reconstructData(shards, { into });
    else codec.reconstruct(shards, { into });
    const fl = framedLength(cl);
    job.targets.forEach((i, j) => {
      const out = outs[j]!.subarray(at, at + (b - a) * fl);
      for (let s = a; s < b; s++) {
        const cell = shards[i]!.subarray((s - a) * cl, (s - a + 1) * cl);
        folds[j] = frameCell(cell, out.subarray((s - a) * fl, (s - a + 1) * fl), job.generation, i, g.firstBlock(s), folds[j]!);
      }
    });
    at += (b - a) * fl;
  }
  outputs.push(...outs);
  return { failed, outputs, folds, good: cells.size };
}

/** Where readFiles puts a file's bytes: copied `into` an array (from its start), or read
 * straight into an aligned `window` (a direct read; readBlobRangeDirectInPlaceSync). */
type Placement = { into: Uint8Array; window?: undefined } | { window: Uint8Array; into?: undefined };

/**
 * Reads `files` into this thread's per-index read scratch (or where `place` says, when it says)
 * and adds them to `job.sources` (views of the scratch, which live until the next job on this
 * thread, or of what `place` gave: a resident stripe's die when it is released), calling
 * `onRead` with each right after its read. Returns the sources whose file could not be read
 * whole, with the error's code; a short one is a FragmentError's message (no code), as a short
 * ranged read is in stripe-pass.ts.
 */
function readFiles(
  job: GroupJob,
  files: NonNullable<GroupJob['files']>,
  place?: (file: NonNullable<GroupJob['files']>[number]) => Placement | undefined,
  onRead?: (source: { index: number; bytes: Uint8Array }) => void
): GroupResult['failed'] {
  const failed: GroupResult['failed'] = [];
  for (const f of files) {
    try {
      const at = place?.(f) ?? { into: reused(READ_SCRATCH, f.index, f.length) };
      const bytes = at.window
        ? readBlobRangeDirectInPlaceSync(f.path, f.start, f.length, at.window)
        : (f.direct ? readBlobRangeDirectSync : readBlobRangeSync)(f.path, f.start, f.length, at.into);
      if (bytes.length !== f.length) failed.push({ index: f.index, message: `${job.key}: fragment ${f.index} is short (${bytes.length} of ${f.length} bytes at ${f.start})` });
      else {
        job.sources.push({ index: f.index, bytes });
        onRead?.({ index: f.index, bytes });
      }
    } catch (err) {
      failed.push({
        index: f.index,
        message: (err as Error)?.message ?? String(err),
        code: err instanceof ProviderError ? err.code : 'Io',
        ...(isMediaError(err) ? { media: true as const } : {}),
        ...(isDescriptorExhaustion(err) ? { descriptors: true as const } : {}),
      });
    }
  }
  return failed;
}

/** Per fragment index, the reused buffer a job's `files` are read into (readFiles) when they
 * are not read into aligned windows (directLayout) nor into a resident stripe: one group's
 * framed bytes per index, at most k + m groups of a source (stripe-pass.ts groupStripes: 1 MiB
 * or one stripe's framed cell at least). */
const READ_SCRATCH: Uint8Array[] = [];

/** This thread's aligned windows for a job's direct reads when the job has no resident stripe
 * (directLayout; a check only, or the resident budget spent): one page-aligned memory, fragment
 * index i's window `stride` bytes in (a multiple of the alignment). Replaced by a larger one
 * when a job needs more (never shrunk); a job's views of it live until the next job. */
let windows: { mem: Uint8Array; stride: number } | undefined;

/** Fragment `index`'s aligned window of `bytes` (a multiple of DIRECT_READ_ALIGN) among `count`;
 * undefined when no memory can be had for it (the caller reads through a scratch instead). */
function reusedWindow(index: number, bytes: number, count: number): Uint8Array | undefined {
  if (!windows || windows.stride < bytes || windows.mem.length < count * windows.stride) {
    const stride = Math.max(bytes, windows?.stride ?? 0);
    try {
      windows = { mem: alignedBuffer(count * stride), stride };
    } catch {
      return undefined;
    }
  }
  return windows.mem.subarray(index * windows.stride, index * windows.stride + bytes);
}

/** Per fragment index, the reused buffer rebuilt cells go to (processGroup is synchronous, so
 * one thread never has two groups using it at once). At most one group's cells per index:
 * PASS_BYTES / 3 in all (stripe-pass.ts). */
const SCRATCH: Uint8Array[] = [];

/** `len` bytes of `pool`'s buffer for fragment `index`, grown (never shrunk) to fit. */
function reused(pool: Uint8Array[], index: number, len: number): Uint8Array {
  let b = pool[index];
  if (!b || b.length < len) pool[index] = b = new Uint8Array(len);
  return b.subarray(0, len);
}

/** Per fragment index, the reused buffer a source's unframed cells go to (same bound). */
const SOURCE_SCRATCH: Uint8Array[] = [];

/** `length` bytes for a target's output: the first of `job.spare` large enough (taken out of
 * it), else a fresh array. Starts at offset 0 of its buffer, so that it can be transferred. */
function outputArray(job: GroupJob, length: number): Uint8Array {
  const i = job.spare?.findIndex((b) => b.byteLength >= length) ?? -1;
  if (i < 0) return new Uint8Array(length);
  return new Uint8Array(job.spare!.splice(i, 1)[0]!, 0, length);
}

/** [a, b) runs of stripes in [s0, s1) with one cell length each (only the blob's last stripe
 * may be shorter). */
function spans(g: Geometry, s0: number, s1: number): [number, number][] {
  const last = g.stripes - 1;
  if (s1 - 1 === last && g.lastCell !== g.cellSize && s1 - 1 > s0) return [[s0, last], [last, s1]];
  return [[s0, s1]];
}

/**
 * Checks fragment `index`'s header bytes (HEADER_BYTES long) against the blob `job` describes:
 * layout, index, generation, k, m, cell size, length and key hash. Throws FragmentError. (A
 * source that joins a pass after its first group has its header checked with this.)
 */
export function checkHeader(job: Pick<GroupJob, 'key' | 'k' | 'm' | 'cellSize' | 'length' | 'generation' | 'keyHash'>, index: number, bytes: Uint8Array): void {
  const h = parseHeader(bytes.subarray(0, HEADER_BYTES));
  if (h.layout !== 'striped' || h.index !== index || h.generation !== job.generation || h.k !== job.k || h.m !== job.m || h.cellSize !== job.cellSize)
    throw new FragmentError(`${job.key}: fragment ${index} header does not match its name`);
  if (h.length !== undefined && h.length !== job.length) throw new FragmentError(`${job.key}: fragment ${index} header length ${h.length} is not ${job.length}`);
  if (!h.keyHash.every((b, j) => b === job.keyHash[j])) throw new FragmentError(`${job.key}: fragment ${index} belongs to another key`);
}

/** Checks one source's group bytes and unframes its cells into `into` (stripe s at
 * (s - s0) * cellSize), or with `into` null checks them where they are. Throws FragmentError. */
function checkGroup(job: GroupJob, g: Geometry, index: number, bytes: Uint8Array, into: Uint8Array | null): void {
  let o = 0;
  if (job.first) {
    checkHeader(job, index, bytes);
    o = HEADER_BYTES;
  }
  for (let s = job.s0; s < job.s1; s++) {
    const cl = g.cellLength(s);
    const fl = framedLength(cl);
    const at = (s - job.s0) * job.cellSize;
    unframe(bytes.subarray(o, o + fl), into && into.subarray(at, at + cl), job.generation, index, g.firstBlock(s));
    o += fl;
  }
  if (job.last) {
    const t = parseTrailer(bytes.subarray(o, o + TRAILER_BYTES));
    if (t.length !== g.length || t.blockCount !== g.blockCount)
      throw new FragmentError(`${job.key}: fragment ${index} trailer says ${t.length} bytes in ${t.blockCount} blocks`);
    o += TRAILER_BYTES;
  }
  if (o !== bytes.length) throw new FragmentError(`${job.key}: fragment ${index} group is ${bytes.length} bytes, expected ${o}`);
}
