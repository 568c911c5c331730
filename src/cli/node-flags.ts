/**
 * @module The V8 flags every `strata` process runs with. The command's shebang carries them
 * (main.ts: `#!/usr/bin/env -S node ...`, checked against this list by a test), `npm start`
 * passes them, and the benchmarks start the server with them, so what is measured is what
 * the command runs.
 *
 * The command also sets {@link NODE_ENV} (glibc's malloc tunables) for the same reason.
 *
 * `--initial-old-space-size=64`: with V8's default a fresh server's old generation starts
 * at a ~16 MiB live heap with ~24 MiB of slack, and a large upload moves ~8 MiB of
 * ArrayBuffers (socket reads, 1 MiB slabs to and from the hash worker) per 8 MiB body
 * through it. Measured here, in about a third of server processes that tipped V8 into a
 * full collection started after every 8 MiB PUT (50-80 Mark-Compacts in 3 s instead of 2),
 * which cost ~14 ms of CPU per PUT (the main thread plus V8's marking threads) and a
 * quarter of the throughput (8 MiB PUT at 1 connection: 220-265 MiB/s against 300-345
 * without the storm). A 64 MiB floor under the old generation's limit ended it (16 of 16
 * processes; 20 s runs stay at 3 collections); a server whose live heap is larger than that
 * never had it. `v8.setFlagsFromString` at run time comes too late (the heap is configured
 * when the isolate starts), hence the command line.
 */
import { HEAP_HUGE_TUNABLE } from '../provider/fs/blob-file.js';

/** The flags, in the order the shebang lists them. */
export const NODE_FLAGS: readonly string[] = ['--initial-old-space-size=64'];

/**
 * The flags of {@link NODE_FLAGS} missing from node's command line `execArgv` (node refuses
 * them in NODE_OPTIONS, so that is the only place they can be). Pure.
 */
export function missingNodeFlags(execArgv: readonly string[]): string[] {
  return NODE_FLAGS.filter((f) => !execArgv.includes(f));
}

/**
 * Environment the command runs node with (the shebang's `env -S NAME=VALUE node ...`, and
 * `npm start`): glibc's malloc keeps up to 64 MiB of freed memory instead of returning it to
 * the system as soon as 128 KiB sit free at the top of the heap, and serves allocations up to
 * 4 MiB from the heap instead of a fresh mmap each. Every page handed back is a page fault
 * when it is used again, and in this nested VM a fault costs ~11 µs: a 32 KiB Buffer of a
 * listing page, or the socket reads of an upload, landed on returned pages request after
 * request. Measured here on one server build, with against without: a LIST page of 1,000
 * keys 2.60-2.67 against 4.20-4.40 ms of server CPU; an 8 MiB PUT 14-15 against 147-555
 * page faults and 35.6-37.0 against 36.3-48.0 ms of CPU. A process keeps at most 64 MiB more
 * of freed memory per malloc arena.
 *
 * `glibc.malloc.hugetlb=1`: glibc asks the kernel for transparent huge pages for the memory it
 * maps (madvise), which a kernel whose THP mode is `madvise` (the common default) grants to
 * that memory only. A direct (O_DIRECT) read maps every page of its buffer for the device, and
 * in this VM 2 MiB reads into a huge-page buffer ran at 4.8-5.6 GiB/s against 2.7-3.3 into 4 KiB
 * pages (fs/blob-file.ts heapHugePages: the scrub's reads go through such a buffer when the
 * variable is set); a (10,4) repair of a wiped domain ran at a median 227 against 187 MiB/s
 * with it (9 interleaved runs each, 170-262 against 158-225). It also makes each first touch
 * of fresh heap memory one fault per 2 MiB instead of one per 4 KiB. A kernel with THP `never`
 * ignores it; with THP `madvise` and `defrag` set to `madvise`, a fault in such memory may wait
 * for the kernel to compact memory into a huge page when none is free. Other C libraries ignore
 * the variable.
 */
export const NODE_ENV: Readonly<Record<string, string>> = {
  GLIBC_TUNABLES: ['glibc.malloc.trim_threshold=67108864', 'glibc.malloc.mmap_threshold=4194304', HEAP_HUGE_TUNABLE].join(':'),
};

/** `NAME=VALUE` of each variable of {@link NODE_ENV} that `env` lacks or holds otherwise. Pure. */
export function missingNodeEnv(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(NODE_ENV)
    .filter(([k, v]) => env[k] !== v)
    .map(([k, v]) => `${k}=${v}`);
}

/** The shebang line of the command: {@link NODE_ENV}, then node with {@link NODE_FLAGS}. */
export function commandShebang(): string {
  return `#!/usr/bin/env -S ${Object.entries(NODE_ENV).map(([k, v]) => `${k}=${v}`).join(' ')} node ${NODE_FLAGS.join(' ')}`;
}
