/** @module Describes the machine and software a benchmark ran on. */
import { cpus, totalmem, platform, release } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Installed version of an npm package, or 'absent'. */
export function packageVersion(name: string): string {
  // Packages whose `exports` hide package.json are read from node_modules directly.
  const candidates = [() => require.resolve(`${name}/package.json`), () => join(process.cwd(), 'node_modules', name, 'package.json')];
  for (const where of candidates) {
    try {
      return (JSON.parse(readFileSync(where(), 'utf8')) as { version: string }).version;
    } catch {
      // try the next place
    }
  }
  return 'absent';
}

/** One markdown paragraph: date, CPU, cores, memory, OS, Node and the named packages. */
export function machineLine(packages: string[] = []): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const mem = (totalmem() / 2 ** 30).toFixed(0);
  const pkgs = packages.map((p) => `${p} ${packageVersion(p)}`).join(', ');
  return (
    `${new Date().toISOString()} · ${cpu} · ${cpus().length} cores · ${mem} GiB · ` +
    `${platform()} ${release()} · Node ${process.version}` +
    (pkgs ? ` · ${pkgs}` : '')
  );
}
