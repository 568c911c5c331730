/**
 * @module Worker thread of the stripe-pass pool (pass-pool.ts): runs processGroup (stripe-group.ts)
 * on the jobs it is posted and posts the results back, the rebuilt cells' buffers transferred.
 * One codec per (k, m), made on first use. A job that throws is answered with its message.
 */
import { parentPort } from 'node:worker_threads';
import { createEncoder, type ReedSolomon } from '../../codec/reed-solomon.js';
import { processGroup, type GroupJob } from './stripe-group.js';

const codecs = new Map<string, ReedSolomon>();

parentPort?.on('message', (msg: { id: number; job: GroupJob }) => {
  try {
    const id = `${msg.job.k}+${msg.job.m}`;
    let codec = codecs.get(id);
    if (!codec) codecs.set(id, (codec = createEncoder(msg.job.k, msg.job.m)));
    const result = processGroup(msg.job, codec);
    parentPort!.postMessage({ id: msg.id, result }, result.outputs.map((o) => o.buffer as ArrayBuffer));
  } catch (err) {
    parentPort!.postMessage({ id: msg.id, error: String((err as Error)?.message ?? err) });
  }
});
