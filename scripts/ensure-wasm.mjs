// Run by `npm install` (`prepare`) and before `npm test` (`pretest`): rebuilds the
// wasm-build/ modules whose assembly/ sources (or build settings, or compiler) changed since
// they were built, so the tests never run stale binaries, and does nothing when all are
// current (the full build takes a minute or more). What "current" means:
// scripts/wasm-stamp.mjs. A missing wasm-build/embedded.ts (a build that died) rebuilds
// everything. `npm run build` still rebuilds everything unconditionally.
//
// Exit status: 0 when wasm-build/ is current (after rebuilding if needed); the build's
// status when it fails.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODULES } from './wasm-modules.mjs';
import { staleModules } from './wasm-stamp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'wasm-build');
const build = join(root, 'scripts', 'build-wasm.mjs');

const stale = staleModules(root, out, MODULES);
const embedded = existsSync(join(out, 'embedded.ts'));
if (stale.length === 0 && embedded) {
  process.stdout.write('wasm-build/ is current with assembly/\n');
  process.exit(0);
}
for (const s of stale) process.stdout.write(`wasm: rebuilding ${s.name}: ${s.reason}\n`);
if (!embedded) process.stdout.write('wasm: rebuilding all: wasm-build/embedded.ts is missing\n');
try {
  const names = embedded ? stale.map((s) => s.name) : [];
  execFileSync(process.execPath, [build, ...names], { cwd: root, stdio: 'inherit' });
} catch (e) {
  process.exit(typeof e.status === 'number' && e.status !== 0 ? e.status : 1);
}
