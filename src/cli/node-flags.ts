/**
 * @module The V8 flags every `strata` process runs with. The command's shebang carries them
 * (main.ts: `#!/usr/bin/env -S node ...`, checked against this list by a test), `npm start`
 * passes them, and the benchmarks start the server with them, so what is measured is what
 * the command runs.
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

/** The flags, in the order the shebang lists them. */
export const NODE_FLAGS: readonly string[] = ['--initial-old-space-size=64'];

/**
 * The flags of {@link NODE_FLAGS} missing from node's command line `execArgv` (node refuses
 * them in NODE_OPTIONS, so that is the only place they can be). Pure.
 */
export function missingNodeFlags(execArgv: readonly string[]): string[] {
  return NODE_FLAGS.filter((f) => !execArgv.includes(f));
}
