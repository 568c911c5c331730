/**
 * @module Bundles a TypeScript entry (the kill worker, the `strata` CLI) into one .mjs in a
 * temp directory, for a child `node` process to run. CommonJS dependencies bundled into ESM
 * (undici) call `require` for Node built-ins, so the bundle gets a real `require`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

const REQUIRE_BANNER = "import { createRequire as __strataRequire } from 'node:module'; const require = __strataRequire(import.meta.url);";

/** Bundles `entry` to `<temp dir>/<name>.mjs`; `remove()` deletes the temp directory. */
export async function bundleEntry(entry: string, name: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'strata-bundle-'));
  const outfile = join(dir, `${name}.mjs`);
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'error',
    banner: { js: REQUIRE_BANNER },
  });
  return { path: outfile, remove: () => rm(dir, { recursive: true, force: true }) };
}
