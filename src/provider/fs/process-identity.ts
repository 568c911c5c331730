/**
 * @module Is a process still the one that took a lock? `kill(pid, 0)` alone says yes for a
 * zombie (a dead process its parent has not reaped yet — for a long time under a PID 1 that
 * reaps slowly, as in a container without an init) and for an unrelated process that reused
 * the pid. On Linux, /proc tells both apart: `/proc/<pid>/stat` gives the state (`Z`ombie,
 * `X` dead) and the start time in clock ticks since boot, and
 * `/proc/sys/kernel/random/boot_id` tells boots apart (ticks restart at every boot).
 * Elsewhere the answer falls back to `kill(pid, 0)`.
 */
import { readFileSync } from 'node:fs';

/** What identifies a process across pid reuse; absent fields are unknown on this system. */
export interface ProcessStamp {
  /** Start time of the process, clock ticks after boot (decimal string: may exceed 2^53). */
  start?: string;
  /** The kernel's boot id. */
  boot?: string;
}

interface ProcStat {
  state: string;
  start: string;
}

/** /proc/<pid>/stat of `pid`: undefined if no such process; null if /proc cannot say. */
function readStat(pid: number): ProcStat | undefined | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ESRCH') return procWorks() ? undefined : null;
    return null;
  }
  // "pid (comm) state ppid ..."; comm may hold spaces and parentheses: split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const start = fields[19];
  if (!state || !start || !/^\d+$/.test(start)) return null;
  return { state, start };
}

let procChecked: boolean | undefined;

/** Whether /proc/<pid>/stat is a reliable source on this system (checked once). */
function procWorks(): boolean {
  if (procChecked === undefined) {
    try {
      readFileSync(`/proc/${process.pid}/stat`);
      procChecked = true;
    } catch {
      procChecked = false;
    }
  }
  return procChecked;
}

let bootId: string | undefined | null = null;

function currentBoot(): string | undefined {
  if (bootId === null) {
    try {
      bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim() || undefined;
    } catch {
      bootId = undefined;
    }
  }
  return bootId;
}

/** The stamp of this process, recorded in lock files it creates. */
export function ownStamp(): ProcessStamp {
  const stat = readStat(process.pid);
  const boot = currentBoot();
  return { ...(stat ? { start: stat.start } : {}), ...(boot ? { boot } : {}) };
}

function signalSaysAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True unless `pid` (on this machine) is known not to be a running process that matches
 * `stamp`: false for a missing pid, a zombie, a process started at another time than the
 * stamp says (pid reused), or a stamp from an earlier boot. Reads /proc only; no side effects.
 */
export function isProcessAlive(pid: number, stamp: ProcessStamp = {}): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  const boot = currentBoot();
  if (stamp.boot !== undefined && boot !== undefined && stamp.boot !== boot) return false;
  const stat = readStat(pid);
  if (stat === undefined) return false;
  if (stat === null) return signalSaysAlive(pid);
  if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return false;
  if (stamp.start !== undefined && stamp.start !== stat.start) return false;
  return true;
}
