/**
 * @module `node dist/bench/http-large-floors.js`: the floor of each stage of an 8 MiB PUT and
 * GET on this machine, measured alone, so the large-body targets (8 MiB PUT >= 400 MiB/s,
 * GET >= 1,000 MiB/s at one connection) can be judged against what the machine allows:
 *
 *   - loopback TCP, one connection, node to node (a child process sends, this one receives
 *     and the reverse), in 8 MiB messages: the ceiling of any HTTP server here;
 *   - MD5, CRC64NVME and CRC32C of 8 MiB (createFastHasher: what the hash worker runs);
 *   - write + fdatasync of 8 MiB to a new file (the PUT's durable write), each half apart,
 *     and 8 MiB written as 1 MiB writes, each followed by fdatasync of the range so far;
 *   - memcpy of 8 MiB into a reused and into a fresh buffer (what page faults cost);
 *   - pread of 8 MiB warm (page cache), as one read and as 1 MiB reads.
 *
 * Each figure is the median of `--reps` (default 15) in MiB/s. Prints a markdown table and the
 * load average. Flags: --reps=N --dir=PATH (where the file floors write; default the OS temp).
 */
import { fork } from 'node:child_process';
import { createServer, connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFastHasher } from '../src/checksum/native.js';
import type { ChecksumAlgorithm } from '../src/checksum/algorithms.js';

const SIZE = 8 * 2 ** 20;
/** A loopback run moves this many bytes per direction: long enough to smooth scheduling. */
const LOOPBACK_BYTES = 512 * 2 ** 20;

const args = process.argv.slice(2);
const arg = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

/** Child role: connect to the port and either send LOOPBACK_BYTES or read them. */
if (process.argv[2] === '--child') {
  const [, , , port, role] = process.argv;
  const sock = connect(Number(port), '127.0.0.1', () => {
    if (role === 'send') {
      const chunk = Buffer.alloc(SIZE, 1);
      let left = LOOPBACK_BYTES / SIZE;
      const pump = () => {
        while (left > 0) {
          left--;
          if (!sock.write(chunk)) return void sock.once('drain', pump);
        }
        sock.end();
      };
      pump();
    } else {
      sock.on('data', () => undefined);
      sock.on('end', () => sock.end());
    }
  });
} else {
  await main();
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

/** MiB/s of `fn` (moving `bytes` per call), median of `reps` timed calls after one warm-up. */
async function rate(bytes: number, reps: number, fn: () => unknown): Promise<number> {
  await fn();
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await fn();
    xs.push(bytes / 2 ** 20 / ((performance.now() - t0) / 1000));
  }
  return median(xs);
}

/** MiB/s of LOOPBACK_BYTES over one TCP connection; `receive`: this process is the receiver. */
async function loopback(receive: boolean): Promise<number> {
  const here = fileURLToPath(import.meta.url);
  return new Promise((resolve, reject) => {
    const server = createServer((sock: Socket) => {
      const t0 = performance.now();
      const done = () => {
        server.close();
        resolve(LOOPBACK_BYTES / 2 ** 20 / ((performance.now() - t0) / 1000));
      };
      if (receive) {
        let got = 0;
        sock.on('data', (d: Buffer) => (got += d.length));
        sock.on('end', () => (got === LOOPBACK_BYTES ? done() : reject(new Error(`got ${got} bytes`))));
      } else {
        const chunk = Buffer.alloc(SIZE, 2);
        let left = LOOPBACK_BYTES / SIZE;
        const pump = () => {
          while (left > 0) {
            left--;
            if (!sock.write(chunk)) return void sock.once('drain', pump);
          }
          sock.end();
        };
        sock.on('close', done);
        sock.on('data', () => undefined);
        pump();
      }
    });
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      fork(here, ['--child', String(port), receive ? 'send' : 'read']).on('error', reject);
    });
  });
}

async function main(): Promise<void> {
  const reps = Number(arg('reps') ?? 15);
  const dir = mkdtempSync(join(arg('dir') ?? tmpdir(), 'large-floors-'));
  const body = Buffer.alloc(SIZE);
  for (let i = 0; i < SIZE; i += 4) body.writeUInt32LE((i * 2654435761) >>> 0, i);
  const rows: [string, number][] = [];
  try {
    rows.push(['loopback TCP, node receives (1 conn)', await loopback(true)]);
    rows.push(['loopback TCP, node sends (1 conn)', await loopback(false)]);
    for (const a of ['md5', 'crc64nvme', 'crc32c', 'crc32', 'sha256'] as ChecksumAlgorithm[]) {
      rows.push([`${a} of 8 MiB (createFastHasher)`, await rate(SIZE, reps, () => createFastHasher(a).update(body).digest())]);
    }
    const reused = Buffer.allocUnsafeSlow(SIZE);
    rows.push(['memcpy 8 MiB into a reused buffer', await rate(SIZE, reps, () => reused.set(body))]);
    rows.push(['memcpy 8 MiB into a fresh buffer (page faults)', await rate(SIZE, reps, () => Buffer.allocUnsafeSlow(SIZE).set(body))]);
    let n = 0;
    const writeSync = async (pieces: number) => {
      const h = await open(join(dir, `w${n++}`), 'wx');
      try {
        const step = SIZE / pieces;
        for (let off = 0; off < SIZE; off += step) {
          await h.write(body, off, step, off);
          if (pieces > 1) await h.datasync();
        }
        await h.sync();
      } finally {
        await h.close();
      }
    };
    rows.push(['write 8 MiB + fsync (new file)', await rate(SIZE, reps, () => writeSync(1))]);
    // The two halves apart: the write (into the page cache) and the flush of what it wrote.
    const halves = { write: [] as number[], sync: [] as number[] };
    for (let i = 0; i <= reps; i++) {
      const h = await open(join(dir, `h${i}`), 'wx');
      try {
        const t0 = performance.now();
        await h.write(body, 0, SIZE, 0);
        const t1 = performance.now();
        await h.datasync();
        const t2 = performance.now();
        if (i > 0) halves.write.push(SIZE / 2 ** 20 / ((t1 - t0) / 1000));
        if (i > 0) halves.sync.push(SIZE / 2 ** 20 / ((t2 - t1) / 1000));
      } finally {
        await h.close();
      }
    }
    rows.push(['write 8 MiB to a new file (page cache only)', median(halves.write)]);
    rows.push(['fdatasync of those 8 MiB', median(halves.sync)]);
    rows.push(['8 x (write 1 MiB + fdatasync) + fsync', await rate(SIZE, reps, () => writeSync(8))]);
    const h = await open(join(dir, 'r'), 'w+');
    try {
      await h.write(body, 0, SIZE, 0);
      const out = Buffer.allocUnsafe(SIZE);
      const pread = async (pieces: number) => {
        const step = SIZE / pieces;
        for (let off = 0; off < SIZE; off += step) await h.read(out, off, step, off);
      };
      rows.push(['pread 8 MiB warm (one read)', await rate(SIZE, reps, () => pread(1))]);
      rows.push(['pread 8 MiB warm (1 MiB reads)', await rate(SIZE, reps, () => pread(8))]);
    } finally {
      await h.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`load average: ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n\n| stage (alone) | MiB/s |\n|---|--:|\n`);
  for (const [name, v] of rows) process.stdout.write(`| ${name} | ${Math.round(v)} |\n`);
}
