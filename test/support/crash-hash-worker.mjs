// A hash worker that dies: it speaks the protocol of src/checksum/hash-worker.ts until its
// `data` message number $CRASH_HASH_AFTER (read when the thread starts; default 1), then exits with
// code 3 without answering, as a worker killed by a native fault or an OOM would. With
// CRASH_HASH_MODE=lie it never exits but answers slices without handing the slice back.
import { parentPort } from 'node:worker_threads';

const crashAfter = Number(process.env.CRASH_HASH_AFTER ?? 1);
let slices = 0;
parentPort.on('message', (m) => {
  if (m.op === 'data') {
    slices++;
    if (process.env.CRASH_HASH_MODE === 'lie') {
      parentPort.postMessage({ op: 'crcs', job: m.job, crcs: new Array(m.spans.length / 2).fill(0) });
      return;
    }
    if (slices >= crashAfter) process.exit(3);
    const out = { op: 'crcs', job: m.job, crcs: m.crcs === false ? [] : new Array(m.spans.length / 2).fill(0), bytes: m.bytes };
    parentPort.postMessage(out, m.bytes.buffer instanceof SharedArrayBuffer ? [] : [m.bytes.buffer]);
  } else if (m.op === 'finish') {
    parentPort.postMessage({ op: 'digests', job: m.job, digests: {} });
  }
});
