/**
 * @module Where a stripe pass's CPU work runs: a small pool of worker threads, so that checking
 * CRCs, rebuilding with the codec and framing (stripe-group.ts) use the machine's other cores
 * while the pass's own thread reads the next groups, or inline when there is no worker to use.
 *
 * The pool is made on first use with min(PASS_WORKERS, cores - 1) workers (none on one core);
 * a worker is referenced only while it has jobs, so an idle pool never keeps a process alive. Jobs go to the
 * worker with the fewest in flight; source bytes are transferred to it (not copied) and the
 * rebuilt cells transferred back. Jobs below MIN_WORKER_BYTES run inline: posting them costs
 * more than the work. A job may instead name the files its sources are in (GroupJob.files):
 * the worker reads them itself, and such a job never runs inline (its reads block their
 * thread) and is bounded in time (runGroup). When the worker script is not beside this module (tests run the
 * TypeScript sources, where only the .ts exists), every job runs inline. A worker that dies
 * fails its jobs with ProviderError 'Io' and is replaced on the next job.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ReedSolomon } from '../../codec/reed-solomon.js';
import { ProviderError } from '../provider.js';
import { processGroup, type GroupJob, type GroupResult } from './stripe-group.js';

/** Most worker threads: the passes' CPU work spread over two more cores at most (a background
 * scrub must leave the server's request path its own core). */
export const PASS_WORKERS = 2;
/** Jobs with fewer source bytes than this run inline (a message round trip costs ~50 µs). */
export const MIN_WORKER_BYTES = 256 * 1024;

const SCRIPT = new URL('./pass-worker.js', import.meta.url);

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve: (r: GroupResult) => void; reject: (e: unknown) => void }>;
  /** Fails every pending job and takes the slot out of the pool. */
  fail(err: unknown): void;
}

let slots: Slot[] | undefined;
let nextId = 0;
/** Workers asked for by usePassWorkers (undefined: the server's default, see workerCount). */
let wanted: number | undefined;

/** Whether the worker script is beside this module (looked up once: asked on every job, and a
 * stat per job cost a repair's thread ~1% of its time). */
let scriptPresent: boolean | undefined;

function workerCount(): number {
  scriptPresent ??= SCRIPT.pathname.endsWith('.js') && existsSync(fileURLToPath(SCRIPT));
  if (!scriptPresent) return 0;
  if (wanted !== undefined) return Math.min(wanted, 2 * availableParallelism());
  return Math.min(PASS_WORKERS, Math.max(0, availableParallelism() - 1));
}

/**
 * Sets how many worker threads the pool uses from the next job on (at most twice the machine's
 * cores; 0: every job inline). For a process with no request path to leave a core to: `strata
 * scrub` on a stopped repository, whose own thread mostly waits on reads, so one worker per
 * core (profile of a repair of a wiped (4,2) domain on 2 cores with one worker: the worker
 * busy throughout, the main thread idle 45% of the run; on the loaded shared machine no
 * wall-time gain could be told from the noise), and two per core when the workers read around
 * the page cache (Provider.directFileReads): each then waits on the device for every read,
 * and a second worker computes meanwhile (a (10,4) repair of a wiped domain, every fragment
 * read from the device: 6.5-6.8 s with 4 workers on 2 cores, 7.9 s with 2; with the sources
 * streamed through one window, stripe-group.ts, 4 runs each interleaved: 5.2-6.3 s with 4,
 * 4.4-7.9 with 3 and 4.7-8.1 with 2, no faster and less steady). Throws RangeError for a
 * count that is not a small whole number.
 */
export function usePassWorkers(n: number): void {
  if (!Number.isInteger(n) || n < 0 || n > 64) throw new RangeError(`pass workers must be 0..64, not ${n}`);
  wanted = n;
}

/**
 * Starts the workers the pool lacks (a job does too, before it is posted), idle and
 * unreferenced (they keep no process alive). Called ahead of the first job: a worker takes
 * 150-250 ms on this machine to load its modules and the codec, which a caller about to open a
 * repository and list it (`strata scrub`) then spends meanwhile instead of before its first
 * group. Returns how many workers the pool holds.
 */
export function warmPassWorkers(): number {
  const want = workerCount();
  if (!slots) slots = [];
  while (slots.length < want) slots.push(spawn());
  return slots.length;
}

function spawn(): Slot {
  const slot: Slot = { worker: new Worker(SCRIPT), pending: new Map(), fail: (err) => die(err) };
  slot.worker.on('message', (msg: { id: number; result?: GroupResult; error?: string }) => {
    const p = slot.pending.get(msg.id);
    if (!p) return;
    slot.pending.delete(msg.id);
    if (slot.pending.size === 0) slot.worker.unref();
    if (msg.result) p.resolve(msg.result);
    else p.reject(new ProviderError('Io', `stripe pass worker: ${msg.error}`));
  });
  const die = (err: unknown) => {
    for (const p of slot.pending.values()) p.reject(new ProviderError('Io', `stripe pass worker died: ${(err as Error)?.message ?? err}`));
    slot.pending.clear();
    if (slots) slots = slots.filter((s) => s !== slot);
  };
  slot.worker.on('error', die);
  slot.worker.on('exit', (code) => die(new Error(`exit ${code}`)));
  // After the listeners: adding a 'message' listener refs the worker's port again.
  slot.worker.unref();
  return slot;
}

/** The transferable buffer of `b`, copied first when `b` is a view of a larger buffer. */
function own(b: Uint8Array): Uint8Array {
  return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer ? b : b.slice();
}

/**
 * Whether there is a worker to read a group's sources (a GroupJob with `files`). Whatever the
 * group's size, one message to a worker costs the pass's own thread less than an asynchronous
 * read per source (a thread-pool round trip and a fresh buffer each, which the worker's reused
 * scratch does not need).
 */
export function workerCanRead(): boolean {
  return workerCount() > 0;
}

/** Why a job with `files` was not answered: no worker, or the worker did not answer within the
 * bound (a read hanging on a dead disk) and was given up. The caller reads the group itself. */
export class WorkerReadFailed extends ProviderError {
  constructor(message: string) {
    super('Unavailable', message);
  }
}

/**
 * Runs `job` in a worker when there is one (and the job is big enough), else inline with
 * `codec`. The job's source bytes are detached when it goes to a worker. Rejects with
 * ProviderError 'Io' when a worker fails.
 *
 * A job with `files` runs only on a worker (its reads block their thread) and within
 * `readTimeoutMs`: it rejects with WorkerReadFailed when there is no worker, or when the worker
 * has not answered in time; that worker is then given up (its other jobs fail with 'Io') and
 * replaced on the next job.
 */
export function runGroup(job: GroupJob, codec: () => ReedSolomon, readTimeoutMs = Infinity): Promise<GroupResult> {
  const files = job.files !== undefined && job.files.length > 0;
  if (job.targets.length > 0) job.spare = takeSpare(job.targets.length);
  const bytes = job.sources.reduce((n, s) => n + s.bytes.length, 0);
  if (!files && bytes < MIN_WORKER_BYTES) return Promise.resolve(processGroup(job, codec()));
  if (warmPassWorkers() === 0 || !slots) {
    if (files) return Promise.reject(new WorkerReadFailed(`${job.key}: no worker thread to read its fragments`));
    return Promise.resolve(processGroup(job, codec()));
  }
  const slot = slots.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
  const id = ++nextId;
  job.sources = job.sources.map((s) => ({ index: s.index, bytes: own(s.bytes) }));
  return new Promise<GroupResult>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    if (files && Number.isFinite(readTimeoutMs)) {
      timer = setTimeout(() => {
        slot.pending.delete(id);
        reject(new WorkerReadFailed(`${job.key}: a worker reading its fragments did not answer within ${readTimeoutMs} ms`));
        giveUp(slot, new Error(`a read did not answer within ${readTimeoutMs} ms`));
      }, readTimeoutMs);
    }
    // Referenced while it has jobs (the caller awaits them), unreferenced when idle.
    if (slot.pending.size === 0) slot.worker.ref();
    slot.pending.set(id, {
      resolve: (r) => (clearTimeout(timer), resolve(r)),
      reject: (e) => (clearTimeout(timer), reject(e)),
    });
    slot.worker.postMessage({ id, job }, [...job.sources.map((s) => s.bytes.buffer as ArrayBuffer), ...(job.spare ?? [])]);
  });
}

/** Outputs smaller than this are not kept for reuse (headers and trailers pass through too). */
const SPARE_MIN_BYTES = 64 * 1024;
/** Most output memory kept for reuse: a few passes' groups. */
export const SPARE_MAX_BYTES = 32 * 2 ** 20;
const spares: ArrayBuffer[] = [];
let spareBytes = 0;

/**
 * Keeps the memory of `chunk`, a job's output the caller is done with (a fragment sink's
 * PutOptions.released: the child wrote it), for the outputs of the next jobs. Received from a
 * worker, every output is memory new to this thread, and at a repair's pace that allocation
 * drove this thread's garbage collector (a mark-compact every ~40 MiB of outputs, a quarter of
 * its busy time in a (4,2) repair). Ignores what cannot be reused: small, a view into a larger
 * buffer, detached, already kept, or beyond SPARE_MAX_BYTES.
 */
export function recycle(chunk: Uint8Array): void {
  const b = chunk.buffer;
  if (!(b instanceof ArrayBuffer) || chunk.byteOffset !== 0 || b.byteLength < SPARE_MIN_BYTES) return;
  if (spareBytes + b.byteLength > SPARE_MAX_BYTES || spares.includes(b)) return;
  spares.push(b);
  spareBytes += b.byteLength;
}

function takeSpare(n: number): ArrayBuffer[] {
  const out = spares.splice(0, n);
  for (const b of out) spareBytes -= b.byteLength;
  return out;
}

/** Output memory kept for reuse, bytes (tests). */
export function spareSize(): number {
  return spareBytes;
}

/** Stops using `slot` (a worker stuck in a read): its jobs fail, and it is terminated and
 * unreferenced, so a thread that never returns from a system call keeps nothing waiting. */
function giveUp(slot: Slot, why: Error): void {
  slot.fail(why);
  slot.worker.unref();
  void slot.worker.terminate().catch(() => undefined);
}

/** Worker threads the pool holds now (0 before first use or when jobs run inline). */
export function poolSize(): number {
  return slots?.length ?? 0;
}
