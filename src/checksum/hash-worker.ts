/**
 * @module The body-hashing worker thread (started by hash-pool.ts; never imported by the
 * main thread). It keeps one set of streaming hashers per job (one job = one request
 * body) and answers, for each slice of a job, the CRC32C of every span it names, after
 * absorbing those spans, in order, into the job's hashers. A slice's ArrayBuffer is
 * transferred here and back with the answer (shared memory is read in place), so nothing
 * is copied between threads and no reference to it outlives the answer.
 *
 * Protocol (main -> worker, each answered in order per job):
 *   { op: 'open', job, algorithms }           no answer
 *   { op: 'data', job, bytes, spans, crcs? }  -> { op: 'crcs', job, crcs, bytes }
 *                                             (crcs: false asks for none: crcs is then [])
 *   { op: 'finish', job }                     -> { op: 'digests', job, digests }
 *   { op: 'drop', job }                       no answer (the job is forgotten)
 * A failure inside a job answers { op: 'error', job, message } and forgets the job. A
 * message naming an unknown job (dropped meanwhile) is ignored.
 */
import { parentPort } from 'node:worker_threads';
import { createFastHasher } from './native.js';
import { crc32c } from './crc.js';
import type { Hasher } from './hasher.js';
import { isChecksumAlgorithm, type ChecksumAlgorithm } from './algorithms.js';

/** A message from the main thread (hash-pool.ts builds them). */
export type ToWorker =
  | { op: 'open'; job: number; algorithms: readonly ChecksumAlgorithm[] }
  | { op: 'data'; job: number; bytes: Uint8Array; spans: readonly number[]; crcs?: boolean }
  | { op: 'finish'; job: number }
  | { op: 'drop'; job: number };

/** A message to the main thread. */
export type FromWorker =
  | { op: 'crcs'; job: number; crcs: number[]; bytes: Uint8Array }
  | { op: 'digests'; job: number; digests: Partial<Record<ChecksumAlgorithm, Uint8Array>> }
  | { op: 'error'; job: number; message: string };

const jobs = new Map<number, Map<ChecksumAlgorithm, Hasher>>();

/** Handles one message; returns the answer, if any. Throws on a malformed message. */
function handle(m: ToWorker): FromWorker | undefined {
  switch (m.op) {
    case 'open': {
      const hashers = new Map<ChecksumAlgorithm, Hasher>();
      for (const a of m.algorithms) {
        if (!isChecksumAlgorithm(a)) throw new Error(`unknown algorithm ${String(a)}`);
        hashers.set(a, createFastHasher(a));
      }
      jobs.set(m.job, hashers);
      return undefined;
    }
    case 'data': {
      const hashers = jobs.get(m.job);
      if (!hashers) return undefined;
      const crcs: number[] = [];
      for (let i = 0; i + 1 < m.spans.length; i += 2) {
        const span = m.bytes.subarray(m.spans[i]!, m.spans[i]! + m.spans[i + 1]!);
        if (span.length !== m.spans[i + 1]) throw new Error('span outside the slice');
        for (const h of hashers.values()) h.update(span);
        if (m.crcs !== false) crcs.push(crc32c(span));
      }
      return { op: 'crcs', job: m.job, crcs, bytes: m.bytes };
    }
    case 'finish': {
      const hashers = jobs.get(m.job);
      if (!hashers) return undefined;
      jobs.delete(m.job);
      const digests: Partial<Record<ChecksumAlgorithm, Uint8Array>> = {};
      for (const [a, h] of hashers) digests[a] = h.digest();
      return { op: 'digests', job: m.job, digests };
    }
    case 'drop':
      jobs.delete(m.job);
      return undefined;
  }
}

parentPort?.on('message', (m: ToWorker) => {
  let out: FromWorker | undefined;
  try {
    out = handle(m);
  } catch (err) {
    jobs.delete(m.job);
    out = { op: 'error', job: m.job, message: String((err as Error)?.message ?? err) };
  }
  // A transferred slice goes back with its answer (the main thread writes it out next).
  if (out?.op === 'crcs' && !(out.bytes.buffer instanceof SharedArrayBuffer)) parentPort!.postMessage(out, [out.bytes.buffer]);
  else if (out) parentPort!.postMessage(out);
});
