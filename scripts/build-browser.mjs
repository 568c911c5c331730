// Bundles the codec (Reed-Solomon, checksums, pack reader/writer) for browsers with esbuild:
// one ESM file, WebAssembly embedded, no Node built-ins (platform 'browser' fails the build
// if any slipped in). Output: dist/browser/codec.js (the `browser` condition of ./codec).
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const result = await build({
  entryPoints: [join(root, 'src/codec.ts')],
  outfile: join(root, 'dist/browser/codec.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  sourcemap: true,
  metafile: true,
  logLevel: 'warning',
});
const bad = Object.keys(result.metafile.inputs).filter((p) => p.startsWith('node:') || p.includes('node_modules/@types/node'));
if (bad.length) {
  console.error(`browser bundle pulls in Node-only modules: ${bad.join(', ')}`);
  process.exit(1);
}
const bytes = Object.values(result.metafile.outputs).find((o) => o.entryPoint)?.bytes ?? 0;
console.log(`browser bundle dist/browser/codec.js ${(bytes / 1024).toFixed(1)} KiB`);
