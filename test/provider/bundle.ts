/** Bundles a TypeScript helper script into one .mjs that a child `node` process can run. */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

export async function bundleScript(entry: string): Promise<string> {
  const outfile = join(await mkdtemp(join(tmpdir(), 'strata-child-')), 'child.mjs');
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'error',
  });
  return outfile;
}
