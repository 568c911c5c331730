/**
 * @module Node-only: hashing large request bodies on worker threads, so that receiving a
 * body (main thread) and hashing it (MD5, CRCs: a core's worth of work at a few hundred
 * MB/s) run side by side. The main thread copies each slice of the body into a buffer of
 * its own once (it must copy it out of the socket's buffers anyway), transfers it to the
 * worker, and gets it back with the CRC32C of each span it names (the carrier's
 * per-segment CRCs); the job's digests come at the end. Nothing is copied between threads,
 * and no thread keeps a reference to a slice after its answer (a SharedArrayBuffer posted
 * instead would live until the worker's next garbage collection, which an idle-heap worker
 * may not run for a long time).
 *
 * Bounded: at most `maxJobs` jobs are open at once (open() returns undefined beyond it:
 * the caller hashes on its own thread, as for small bodies), and a job has at most
 * `maxSlicesPerJob` slices in flight; the slices' memory is the caller's, charged to its
 * budget. A job ends with digest(), abort(), or the death of its thread; each frees its
 * slot at once. A worker that crashes or exits fails every job it held with
 * {@link HashWorkerError}; the next job gets a new thread.
 */
import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { ChecksumAlgorithm } from './algorithms.js';
import type { FromWorker, ToWorker } from './hash-worker.js';

/** A job failed because its worker thread died, failed, or the pool closed. */
export class HashWorkerError extends Error {
  readonly code = 'ERR_HASH_WORKER';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'HashWorkerError';
  }
}

export interface HashPoolOptions {
  /** Worker threads, started on demand. Default: cores - 1, at least 1, at most 4. */
  threads?: number;
  /** Jobs open at once across the pool; open() refuses beyond. Default {@link DEFAULT_MAX_JOBS}. */
  maxJobs?: number;
  /** Slices of one job awaiting their answer; hash() refuses beyond. Default 4. */
  maxSlicesPerJob?: number;
  /** The worker's entry module. Default: the compiled hash-worker.js (see {@link workerScript}). */
  script?: URL;
}

/**
 * Jobs open at once by default: each is one upload holding its own budgeted slices, so
 * this bounds the worker's per-job state and queue, not the bytes (the budget does).
 */
export const DEFAULT_MAX_JOBS = 256;
const DEFAULT_SLICES_PER_JOB = 4;

/**
 * The compiled worker module: beside this file when running from dist/, else (running the
 * TypeScript sources, as the tests do) the one `npm run build:js` put in dist/. Undefined
 * when neither exists: the pool then opens no job and callers hash inline.
 */
export function workerScript(): URL | undefined {
  for (const rel of ['./hash-worker.js', '../../dist/src/checksum/hash-worker.js']) {
    const url = new URL(rel, import.meta.url);
    if (existsSync(fileURLToPath(url))) return url;
  }
  return undefined;
}

interface Thread {
  worker: Worker;
  jobs: Map<number, RemoteHasher>;
}

let nextJob = 1;

export class HashPool {
  readonly #threads: Thread[] = [];
  readonly #maxThreads: number;
  readonly #maxJobs: number;
  readonly #maxSlices: number;
  readonly #script: URL | undefined;
  #open = 0;
  #closed = false;

  /** Validates `options`; starts no thread yet. Throws RangeError for a bad count. */
  constructor(options: HashPoolOptions = {}) {
    const threads = options.threads ?? Math.max(1, Math.min(4, availableParallelism() - 1));
    const maxJobs = options.maxJobs ?? DEFAULT_MAX_JOBS;
    const maxSlices = options.maxSlicesPerJob ?? DEFAULT_SLICES_PER_JOB;
    for (const [name, v] of [['threads', threads], ['maxJobs', maxJobs], ['maxSlicesPerJob', maxSlices]] as const) {
      if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${name} must be a positive integer, got ${v}`);
    }
    this.#maxThreads = threads;
    this.#maxJobs = maxJobs;
    this.#maxSlices = maxSlices;
    this.#script = options.script ?? workerScript();
  }

  /** Jobs open now (opened, not yet finished, aborted or failed). */
  get openJobs(): number {
    return this.#open;
  }

  /** Worker threads alive now. */
  get threads(): number {
    return this.#threads.length;
  }

  /**
   * A new job hashing with `algorithms` on the least busy thread (started if needed), or
   * undefined when the pool is closed, full (`maxJobs`), or has no worker module. Never
   * throws for capacity: the caller then hashes on its own thread.
   */
  open(algorithms: readonly ChecksumAlgorithm[]): RemoteHasher | undefined {
    if (this.#closed || !this.#script || this.#open >= this.#maxJobs) return undefined;
    let t = this.#threads.reduce<Thread | undefined>((a, b) => (a && a.jobs.size <= b.jobs.size ? a : b), undefined);
    if (!t || (t.jobs.size > 0 && this.#threads.length < this.#maxThreads)) t = this.#spawn(this.#script);
    const job = nextJob++;
    const h = new RemoteHasher(job, this.#maxSlices, (m, transfer) => t.worker.postMessage(m, transfer), () => this.#release(t, job));
    t.jobs.set(job, h);
    this.#open++;
    t.worker.ref(); // a job in flight keeps the process alive until it answers
    t.worker.postMessage({ op: 'open', job, algorithms } satisfies ToWorker);
    return h;
  }

  /** Fails every open job with HashWorkerError and stops the threads. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    const threads = this.#threads.splice(0);
    for (const t of threads) this.#fail(t, new HashWorkerError('the hash pool closed'));
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }

  #spawn(script: URL): Thread {
    const worker = new Worker(script);
    const t: Thread = { worker, jobs: new Map() };
    worker.unref();
    worker.on('message', (m: FromWorker) => t.jobs.get(m.job)?.answer(m));
    // A thread that fails or exits takes its jobs with it; the next job gets a new one.
    const died = (why: string, cause?: unknown) => {
      const i = this.#threads.indexOf(t);
      if (i >= 0) this.#threads.splice(i, 1);
      this.#fail(t, new HashWorkerError(`hash worker ${why}`, { cause }));
      void worker.terminate();
    };
    worker.on('error', (err) => died(`failed: ${String((err as Error)?.message ?? err)}`, err));
    worker.on('exit', (code) => died(`exited (code ${code})`));
    this.#threads.push(t);
    return t;
  }

  #fail(t: Thread, err: HashWorkerError): void {
    for (const h of [...t.jobs.values()]) h.fail(err);
  }

  #release(t: Thread, job: number): void {
    if (!t.jobs.delete(job)) return;
    this.#open--;
    if (t.jobs.size === 0) t.worker.unref();
  }
}

interface Waiter {
  resolve: (m: FromWorker) => void;
  reject: (err: Error) => void;
}

/** One body being hashed on a worker thread. Not reusable; methods may not overlap digest(). */
export class RemoteHasher {
  readonly #job: number;
  readonly #maxSlices: number;
  readonly #post: (m: ToWorker, transfer?: ArrayBuffer[]) => void;
  readonly #release: () => void;
  readonly #waiting: Waiter[] = [];
  #failure: Error | undefined;
  #ended = false;

  /** Made by HashPool.open only. */
  constructor(job: number, maxSlices: number, post: (m: ToWorker, transfer?: ArrayBuffer[]) => void, release: () => void) {
    this.#job = job;
    this.#maxSlices = maxSlices;
    this.#post = post;
    this.#release = release;
  }

  /**
   * Absorbs the spans of `bytes` named by `spans` (offset, length pairs within `bytes`, in
   * order) into the job's hashers and resolves with the CRC32C of each span (none with
   * `crcs: false`: the caller stores other bytes than these) and the slice itself. A slice
   * over an ArrayBuffer is transferred: the whole buffer is unusable
   * (detached) here until the answer hands it back as `bytes` (a view at the same offset);
   * a slice of shared memory is read in place and must not be written until the answer.
   * Slices are absorbed in call order. Rejects with HashWorkerError if the worker dies (a
   * transferred slice is then lost), or with the job's first failure; throws Error if the
   * job ended or more than `maxSlicesPerJob` slices are in flight, RangeError for a span
   * outside `bytes`.
   */
  hash(bytes: Uint8Array, spans: readonly number[], opts: { crcs?: boolean } = {}): Promise<{ crcs: number[]; bytes: Uint8Array }> {
    if (this.#ended) throw new Error('RemoteHasher: job already ended');
    if (this.#waiting.length >= this.#maxSlices) throw new Error(`RemoteHasher: more than ${this.#maxSlices} slices in flight`);
    for (let i = 0; i + 1 < spans.length; i += 2) {
      if (!(spans[i]! >= 0 && spans[i + 1]! >= 0 && spans[i]! + spans[i + 1]! <= bytes.length)) throw new RangeError('RemoteHasher: span outside the slice');
    }
    if (this.#failure) return Promise.reject(this.#failure);
    const shared = bytes.buffer instanceof SharedArrayBuffer;
    const length = bytes.length;
    const wantCrcs = opts.crcs !== false;
    const answer = this.#ask({ op: 'data', job: this.#job, bytes, spans, crcs: wantCrcs }, shared ? [] : [bytes.buffer as ArrayBuffer]);
    return answer.then((m) => {
      if (m.op !== 'crcs' || m.crcs.length * 2 !== (wantCrcs ? spans.length : 0) || !(m.bytes instanceof Uint8Array) || m.bytes.length !== length) {
        throw new HashWorkerError(`hash worker answered ${m.op} to a slice, not its CRCs and the slice`);
      }
      return { crcs: m.crcs, bytes: m.bytes };
    });
  }

  /**
   * The digests of everything absorbed, by algorithm (hashes as bytes, CRCs big-endian),
   * after every slice was answered. Ends the job (frees its slot) whatever the outcome.
   * Rejects as hash().
   */
  async digest(): Promise<Partial<Record<ChecksumAlgorithm, Uint8Array>>> {
    if (this.#ended) throw new Error('RemoteHasher: job already ended');
    if (this.#failure) {
      this.abort();
      throw this.#failure;
    }
    const answer = this.#ask({ op: 'finish', job: this.#job });
    this.#ended = true;
    try {
      const m = await answer;
      if (m.op !== 'digests') throw new HashWorkerError(`hash worker answered ${m.op} to finish`);
      return m.digests;
    } finally {
      this.#release();
    }
  }

  /** Ends the job now: the worker forgets it, pending slices reject, its slot is free. Idempotent. */
  abort(): void {
    if (this.#ended && this.#waiting.length === 0) return;
    this.#ended = true;
    this.#post({ op: 'drop', job: this.#job });
    this.fail(new HashWorkerError('hash job aborted'));
  }

  /** Pool side: the next answer of this job arrived. */
  answer(m: FromWorker): void {
    const w = this.#waiting.shift();
    if (!w) return;
    if (m.op === 'error') {
      this.fail(new HashWorkerError(`hash worker: ${m.message}`));
      w.reject(this.#failure!);
      return;
    }
    w.resolve(m);
  }

  /** Pool side: the job cannot go on (its thread died, or it was aborted). */
  fail(err: Error): void {
    this.#failure ??= err;
    for (const w of this.#waiting.splice(0)) w.reject(this.#failure);
    this.#release();
  }

  #ask(m: ToWorker, transfer: ArrayBuffer[] = []): Promise<FromWorker> {
    return new Promise<FromWorker>((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
      this.#post(m, transfer);
    });
  }
}

let shared: HashPool | undefined;

/**
 * The process's pool, made on first use: default options, or STRATA_HASH_THREADS threads
 * when that is set (0: no pool, every body is hashed on the main thread — for comparing
 * both paths on one machine). Its threads do not keep the process alive while idle.
 */
export function sharedHashPool(): HashPool | undefined {
  const env = process.env.STRATA_HASH_THREADS;
  if (env !== undefined && /^\d+$/.test(env)) {
    if (Number(env) === 0) return undefined;
    return (shared ??= new HashPool({ threads: Number(env) }));
  }
  return (shared ??= new HashPool());
}
