/**
 * The wasm freshness check (scripts/wasm-stamp.mjs, used by scripts/ensure-wasm.mjs before
 * `npm test` and by scripts/build-wasm.mjs after each module builds), on a small assembly/
 * tree of its own: a module is stale exactly when a file it imports (directly, through
 * another folder, or through a re-export), the build settings or the compiler changed, or an
 * output or the stamp is missing; edits elsewhere leave it current.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  moduleHash,
  moduleSources,
  readStamp,
  recordStamp,
  staleModules,
} from '../../scripts/wasm-stamp.mjs';
import { MODULES as REAL_MODULES } from '../../scripts/wasm-modules.mjs';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const MODULES = [
  { name: 'alpha', entry: 'assembly/alpha/index.ts', pages: 1, flavors: ['simd', 'scalar'] },
  { name: 'beta', entry: 'assembly/beta/index.ts', pages: 2, flavors: ['simd'] },
];

let root: string;
let out: string;

function write(rel: string, text: string): void {
  const p = join(root, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, text);
}

/** Writes every output file and a stamp of the current sources: a fresh build. */
function build(): void {
  for (const m of MODULES) {
    for (const f of m.flavors) write(`wasm-build/${m.name}.${f}.wasm`, 'wasm');
    recordStamp(out, m.name, moduleHash(root, m));
  }
}

const staleNames = () => staleModules(root, out, MODULES).map((s) => s.name);

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'strata-wasm-stamp-'));
  out = join(root, 'wasm-build');
  mkdirSync(out);
  write('asconfig.json', '{"targets":{}}');
  write('scripts/build-wasm.mjs', '// build');
  write('scripts/wasm-modules.mjs', '// modules');
  write('node_modules/assemblyscript/package.json', '{"version":"0.28.20"}');
  // alpha imports its own files (one multi-line, one via a folder index, one re-exported)
  // and a file of another module's folder; beta imports only its own.
  write(
    'assembly/alpha/index.ts',
    [
      "import {\n  a,\n  b\n} from './util';",
      "import { c } from './lib';",
      "export * from './reexported';",
      "import { crc } from '../shared/crc';",
      "import 'side-effect-free-lib';",
      "import { x } from '~lib/rt';",
    ].join('\n')
  );
  write('assembly/alpha/util.ts', 'export const a = 1, b = 2;');
  write('assembly/alpha/lib/index.ts', 'export const c = 3;');
  write('assembly/alpha/reexported.ts', "import './side';\nexport const r = 4;");
  write('assembly/alpha/side.ts', '// imported for its effects');
  write('assembly/shared/crc.ts', 'export const crc = 5;');
  write('assembly/beta/index.ts', "import { k } from './k';");
  write('assembly/beta/k.ts', 'export const k = 6;');
  write('assembly/unused.ts', '// nobody imports this');
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('moduleSources', () => {
  it('follows relative imports, re-exports, folder indexes and other folders', () => {
    expect(moduleSources(root, 'assembly/alpha/index.ts')).toEqual([
      'assembly/alpha/index.ts',
      'assembly/alpha/lib/index.ts',
      'assembly/alpha/reexported.ts',
      'assembly/alpha/side.ts',
      'assembly/alpha/util.ts',
      'assembly/shared/crc.ts',
    ]);
    expect(moduleSources(root, 'assembly/beta/index.ts')).toEqual([
      'assembly/beta/index.ts',
      'assembly/beta/k.ts',
    ]);
  });

  it('lists an import of a file that does not exist, and terminates on import cycles', () => {
    write('assembly/beta/k.ts', "import { z } from './gone';\nimport { i } from './index';");
    expect(moduleSources(root, 'assembly/beta/index.ts')).toEqual([
      'assembly/beta/index.ts',
      'assembly/beta/k.ts',
      'missing:assembly/beta/gone.ts',
    ]);
  });

  it('reaches every file of the real assembly/ tree from the real modules', () => {
    // A file no module reaches would be an edit the check cannot see.
    const covered = REAL_MODULES.flatMap((m) => moduleSources(REPO, m.entry));
    const all = readdirSync(join(REPO, 'assembly'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `assembly/${f}`);
    expect(covered.filter((f) => f.startsWith('missing:'))).toEqual([]);
    expect(all.filter((f) => !covered.includes(f))).toEqual([]);
  });
});

describe('staleModules', () => {
  it('a build with no stamp is stale; after a build, nothing is', () => {
    for (const m of MODULES) for (const f of m.flavors) write(`wasm-build/${m.name}.${f}.wasm`, '');
    expect(staleModules(root, out, MODULES)).toEqual([
      expect.objectContaining({ name: 'alpha', reason: 'no stamp of its sources' }),
      expect.objectContaining({ name: 'beta', reason: 'no stamp of its sources' }),
    ]);
    build();
    expect(staleNames()).toEqual([]);
  });

  it('an edit to any file a module reaches makes that module (only) stale', () => {
    build();
    for (const rel of [
      'assembly/alpha/util.ts',
      'assembly/alpha/lib/index.ts',
      'assembly/alpha/side.ts',
      'assembly/shared/crc.ts',
    ]) {
      write(rel, `// edited ${rel}`);
      expect(staleNames(), rel).toEqual(['alpha']);
      build();
    }
    write('assembly/beta/k.ts', 'export const k = 7;');
    expect(staleNames()).toEqual(['beta']);
  });

  it('an edit nobody imports leaves everything current; mtimes alone do not count', () => {
    build();
    write('assembly/unused.ts', '// changed');
    write('assembly/alpha/util.ts', 'export const a = 1, b = 2;'); // same bytes, new mtime
    expect(staleNames()).toEqual([]);
  });

  it('build settings, the build scripts and the compiler version concern every module', () => {
    for (const [rel, text] of [
      ['asconfig.json', '{"targets":{"simd":{}}}'],
      ['scripts/build-wasm.mjs', '// build v2'],
      ['scripts/wasm-modules.mjs', '// modules v2'],
      ['node_modules/assemblyscript/package.json', '{"version":"0.29.0"}'],
    ]) {
      build();
      write(rel, text);
      expect(staleNames(), rel).toEqual(['alpha', 'beta']);
    }
  });

  it("a module's own settings (pages, flavors) are part of its inputs", () => {
    build();
    const more = [{ ...MODULES[0], pages: 3 }, MODULES[1]];
    expect(staleModules(root, out, more).map((s) => s.name)).toEqual(['alpha']);
  });

  it('a missing output or import target is stale; the target appearing changes the hash', () => {
    build();
    unlinkSync(join(out, 'alpha.scalar.wasm'));
    expect(staleModules(root, out, MODULES)).toEqual([
      expect.objectContaining({ name: 'alpha', reason: 'wasm-build/alpha.scalar.wasm is missing' }),
    ]);
    write('wasm-build/alpha.scalar.wasm', 'wasm');
    write('assembly/beta/k.ts', "import { z } from './later';");
    build();
    write('assembly/beta/later.ts', 'export const z = 0;');
    expect(staleNames()).toEqual(['beta']);
  });

  it('an unreadable or foreign stamp counts as none', () => {
    build();
    writeFileSync(join(out, 'stamp.json'), '{not json');
    expect(readStamp(out)).toEqual({});
    expect(staleNames()).toEqual(['alpha', 'beta']);
    writeFileSync(join(out, 'stamp.json'), JSON.stringify({ version: 0, modules: {} }));
    expect(staleNames()).toEqual(['alpha', 'beta']);
  });

  it('recordStamp replaces or removes one module and keeps the others', () => {
    recordStamp(out, 'alpha', 'a1');
    recordStamp(out, 'beta', 'b1');
    recordStamp(out, 'alpha', 'a2');
    expect(readStamp(out)).toEqual({ alpha: 'a2', beta: 'b1' });
    recordStamp(out, 'alpha', undefined);
    expect(readStamp(out)).toEqual({ beta: 'b1' });
  });
});
