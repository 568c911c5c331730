/**
 * @module The package's name and version, read once from its package.json (found by walking
 * up from this module: `src/cli/` when run from source, `dist/src/cli/` when built or
 * installed).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Levels searched above this module for package.json: dist/src/cli is three below the root. */
const MAX_LEVELS_UP = 4;

let cached: { name: string; version: string } | undefined;

/** `{ name, version }` of the installed package; `unknown` fields if package.json cannot be found. */
export function packageInfo(): { name: string; version: string } {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i <= MAX_LEVELS_UP; i++, dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
        bin?: Record<string, string>;
      };
      if (
        pkg.bin &&
        typeof pkg.bin === 'object' &&
        'strata' in pkg.bin &&
        typeof pkg.version === 'string'
      ) {
        cached = { name: String(pkg.name), version: pkg.version };
        return cached;
      }
    } catch {
      // not here: keep walking up
    }
  }
  cached = { name: 'strata', version: 'unknown' };
  return cached;
}

/** The line `strata --version` prints. */
export function versionLine(): string {
  const { name, version } = packageInfo();
  return `strata ${version} (${name}, node ${process.versions.node})\n`;
}
