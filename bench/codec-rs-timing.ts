/**
 * @module CPU-time rates for the Reed-Solomon rows of bench:codec. On this shared machine
 * (2 cores, often 6+ runnable processes) wall-clock rates of a single-threaded loop measure
 * the scheduler as much as the code; the CPU time the process was given does not count the
 * time it sat descheduled. ISA-L's harness uses the same clock (CLOCK_PROCESS_CPUTIME_ID),
 * so ratios compare like with like. Node's process CPU time also counts its helper threads
 * (GC), which can only make Strata's rows look slower, never faster: so each row starts from a
 * collected heap ({@link settleHeap}; `npm run bench:codec` runs node with --expose-gc), and the
 * row that allocates (reconstruct-alloc) runs after the others of its flavor. Without that, the
 * resident rows of 1 MiB shards ran right after hundreds of MiB of the allocating row's garbage
 * and were charged for freeing it on V8's background threads: RS(10,4) resident encode read
 * ~6,000 MB/s in full runs against ~8,000 when measured alone.
 */

/** A full garbage collection when node runs with --expose-gc (otherwise nothing), so a row is
 * not charged for collecting what the rows before it left behind. */
export function settleHeap(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Milliseconds of CPU time (user + system) this process has used. */
export function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Like bench/lib/timing.ts `rates`, on CPU time: runs `op` for about `minMs` of CPU time,
 * `runs` times after one discarded warm-up run; returns `unitsPerOp` per CPU-second per run.
 */
export function cpuRates(op: () => void, unitsPerOp: number, runs: number, minMs: number): number[] {
  settleHeap();
  const out: number[] = [];
  for (let r = -1; r < runs; r++) {
    let n = 0;
    const t0 = cpuMs();
    let t = t0;
    do {
      op();
      n++;
      t = cpuMs();
    } while (t - t0 < minMs);
    if (r >= 0) out.push((n * unitsPerOp) / ((t - t0) / 1000));
  }
  return out;
}
