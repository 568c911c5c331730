// Whether wasm-build/ was built from the assembly/ sources as they are now.
//
// Each module's inputs are its entry file and every assembly/ file it reaches through relative
// imports (AssemblyScript imports are static), plus what shapes every build: asconfig.json,
// the build scripts, the module's own settings (pages, flavors) and the assemblyscript
// compiler's version. Their SHA-256 is recorded per module in wasm-build/stamp.json by
// scripts/build-wasm.mjs after the module built; a module is stale when its inputs hash to
// something else, when it has no stamp, or when one of its outputs is missing.
//
// Hashing file contents rather than comparing mtimes: a checkout, `git stash` or a copy keeps
// or resets mtimes arbitrarily, contents do not lie. Reading ~20 small files costs a few ms.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** The stamp's file name inside the output directory. */
export const STAMP_FILE = 'stamp.json';
/** Bump when what a stamp means changes, so old stamps read as stale. */
const STAMP_VERSION = 1;
/** Files outside assembly/ that shape every module's build (relative to the root). */
const SHARED_INPUTS = ['asconfig.json', 'scripts/build-wasm.mjs', 'scripts/wasm-modules.mjs'];
/** `from '…'` (import or export) and bare `import '…'`, the specifier captured. */
const IMPORT_RE = /\bfrom\s*['"]([^'"]+)['"]|\bimport\s*['"]([^'"]+)['"]/g;

/**
 * The source files a module is built from: `entry` and every file reachable from it through
 * relative imports, as sorted root-relative paths. A relative import that resolves to no file
 * is listed as `missing:<path>` (the build will fail on it; the hash still changes when the
 * file appears). Reads files only.
 */
export function moduleSources(root, entry) {
  const seen = new Set();
  const pending = [resolve(root, entry)];
  while (pending.length > 0) {
    const file = pending.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT_RE)) {
      const spec = m[1] ?? m[2];
      if (!spec.startsWith('.')) continue; // the compiler's standard library: its version counts
      const base = resolve(dirname(file), spec);
      const target = [base, `${base}.ts`, join(base, 'index.ts')].find(
        (p) => p.endsWith('.ts') && existsSync(p)
      );
      pending.push(target ?? `${base}.ts`);
    }
  }
  return [...seen]
    .map((f) => (existsSync(f) ? relative(root, f) : `missing:${relative(root, f)}`))
    .sort();
}

/** The compiler's version, from its package.json ('none' when it is not installed). */
function compilerVersion(root) {
  const p = join(root, 'node_modules', 'assemblyscript', 'package.json');
  return existsSync(p) ? JSON.parse(readFileSync(p, 'utf8')).version : 'none';
}

/** SHA-256 (hex) of everything `mod` is built from (see the file header). Reads files only. */
export function moduleHash(root, mod) {
  const h = createHash('sha256');
  const field = (label, value) => h.update(`${label}\0${value.length}\0`).update(value);
  field('stamp', String(STAMP_VERSION));
  field('module', JSON.stringify(mod));
  field('assemblyscript', compilerVersion(root));
  for (const rel of [...SHARED_INPUTS, ...moduleSources(root, mod.entry)]) {
    const p = join(root, rel);
    field(rel, rel.startsWith('missing:') || !existsSync(p) ? 'missing' : readFileSync(p));
  }
  return h.digest('hex');
}

/** The output files of `mod` (paths in `out`). */
export function moduleOutputs(out, mod) {
  return mod.flavors.map((f) => join(out, `${mod.name}.${f}.wasm`));
}

/** The recorded hashes by module name ({} when there is no readable stamp). Never throws. */
export function readStamp(out) {
  try {
    const s = JSON.parse(readFileSync(join(out, STAMP_FILE), 'utf8'));
    return s && s.version === STAMP_VERSION && typeof s.modules === 'object' ? s.modules : {};
  } catch {
    return {};
  }
}

/**
 * Records `hash` for module `name` (or removes the record when `hash` is undefined), keeping
 * the others. Replaces the stamp file atomically (write + rename).
 */
export function recordStamp(out, name, hash) {
  const modules = readStamp(out);
  if (hash === undefined) delete modules[name];
  else modules[name] = hash;
  const file = join(out, STAMP_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ version: STAMP_VERSION, modules }, null, 2)}\n`);
  renameSync(tmp, file);
}

/**
 * The modules whose build is not current, each with the reason: [{ name, reason, hash }].
 * `hash` is the inputs' hash now, to be recorded once the module has built. Reads only.
 */
export function staleModules(root, out, modules) {
  const stamp = readStamp(out);
  const stale = [];
  for (const mod of modules) {
    if (!existsSync(join(root, mod.entry))) continue; // build-wasm.mjs skips it too
    const hash = moduleHash(root, mod);
    const missing = moduleOutputs(out, mod).filter((p) => !existsSync(p));
    let reason;
    if (missing.length > 0) reason = `${relative(root, missing[0])} is missing`;
    else if (stamp[mod.name] === undefined) reason = 'no stamp of its sources';
    else if (stamp[mod.name] !== hash) reason = 'its sources changed since it was built';
    if (reason) stale.push({ name: mod.name, reason, hash });
  }
  return stale;
}
