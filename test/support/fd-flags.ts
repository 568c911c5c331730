/** @module Open flags of this process's descriptors, from /proc/self/fdinfo (Linux; for tests). */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Open flags of this process's descriptors on files whose path starts with `prefix`. */
export function flagsOf(prefix: string): number[] {
  const out: number[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    if (!target.startsWith(prefix)) continue;
    const m = /^flags:\s+([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
    if (m) out.push(parseInt(m[1]!, 8));
  }
  return out;
}
