/**
 * @module Peaks of a process's memory by kind, sampled on a timer: resident set (and its
 * anonymous part, Linux), V8 heap used and reserved, external memory and ArrayBuffers (Buffers
 * live there, outside the heap). The kernel's maxRSS says how high a process went; these say
 * what it was made of when it did.
 */
import { readFileSync } from 'node:fs';

/** How often the sampler looks, ms: often enough to see a checkpoint's peak, cheap enough
 * (process.memoryUsage() and one /proc read cost microseconds) not to be felt. */
const SAMPLE_EVERY_MS = 100;
const MiB = 2 ** 20;

export interface MemoryPeaks {
  /** Largest value seen of each, MiB. */
  rssMiB: number;
  rssAnonMiB: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
  arrayBuffersMiB: number;
  /** The sample at the largest rss: what the peak was made of, MiB. */
  atPeak: { rssMiB: number; heapUsedMiB: number; heapTotalMiB: number; externalMiB: number; arrayBuffersMiB: number };
}

/** RssAnon of this process in bytes (Linux), 0 where /proc is not there. */
function rssAnon(): number {
  try {
    const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Resident bytes of the C heap's main arena (the `[heap]` mapping glibc's malloc grows with
 * brk: Buffer and Uint8Array backing stores, V8's and Node's own C++ objects), 0 where
 * /proc is not there. Reads /proc/self/smaps: milliseconds, so for progress lines, not the
 * 100 ms sampler.
 */
export function mallocHeapBytes(): number {
  try {
    const m = /\[heap\]\n(?:.*\n)*?Rss:\s+(\d+) kB/.exec(readFileSync('/proc/self/smaps', 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Starts sampling; `stop()` ends it and returns the peaks (including one last sample). */
export function sampleMemory(): { stop: () => MemoryPeaks } {
  const peaks: MemoryPeaks = {
    rssMiB: 0,
    rssAnonMiB: 0,
    heapUsedMiB: 0,
    heapTotalMiB: 0,
    externalMiB: 0,
    arrayBuffersMiB: 0,
    atPeak: { rssMiB: 0, heapUsedMiB: 0, heapTotalMiB: 0, externalMiB: 0, arrayBuffersMiB: 0 },
  };
  const sample = () => {
    const m = process.memoryUsage();
    const now = { rssMiB: m.rss / MiB, heapUsedMiB: m.heapUsed / MiB, heapTotalMiB: m.heapTotal / MiB, externalMiB: m.external / MiB, arrayBuffersMiB: m.arrayBuffers / MiB };
    if (now.rssMiB > peaks.rssMiB) peaks.atPeak = now;
    peaks.rssMiB = Math.max(peaks.rssMiB, now.rssMiB);
    peaks.rssAnonMiB = Math.max(peaks.rssAnonMiB, rssAnon() / MiB);
    peaks.heapUsedMiB = Math.max(peaks.heapUsedMiB, now.heapUsedMiB);
    peaks.heapTotalMiB = Math.max(peaks.heapTotalMiB, now.heapTotalMiB);
    peaks.externalMiB = Math.max(peaks.externalMiB, now.externalMiB);
    peaks.arrayBuffersMiB = Math.max(peaks.arrayBuffersMiB, now.arrayBuffersMiB);
  };
  const timer = setInterval(sample, SAMPLE_EVERY_MS);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return peaks;
    },
  };
}
