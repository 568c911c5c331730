/**
 * @module Deterministic file trees for client tests: plan one from a seed, write it, and
 * compare two directories byte for byte.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { prng, randomBytes } from '../../support/random.js';

export interface TreeFile {
  /** Relative POSIX path. */
  path: string;
  size: number;
  /** Content seed; files sharing a seed and size are identical (dedup material). */
  seed: number;
  /** Repetitive text instead of random bytes (compressible material). */
  text?: boolean;
}

/**
 * `count` files spread over `dirs` directories, sizes drawn from `sizes`; every 7th file
 * is compressible text and every 11th repeats an earlier file's content.
 */
export function planTree(opts: {
  count: number;
  seed: number;
  sizes: readonly number[];
  dirs: readonly string[];
}): TreeFile[] {
  const next = prng(opts.seed);
  const out: TreeFile[] = [];
  for (let i = 0; i < opts.count; i++) {
    const dir = opts.dirs[next() % opts.dirs.length]!;
    const twin = i % 11 === 10 ? out[next() % out.length] : undefined;
    const size = twin?.size ?? opts.sizes[next() % opts.sizes.length]!;
    const f: TreeFile = {
      path: `${dir}${dir ? '/' : ''}f${String(i).padStart(5, '0')}.bin`,
      size,
      seed: twin?.seed ?? opts.seed * 100_003 + i,
    };
    if (twin?.text ?? i % 7 === 3) f.text = true;
    out.push(f);
  }
  return out;
}

/** The content of `f`. */
export function contentOf(f: TreeFile): Buffer {
  if (!f.text) return Buffer.from(randomBytes(f.size, f.seed));
  const line = `line ${f.seed} of a compressible file, ${'abc'.repeat(f.seed % 13)}\n`;
  return Buffer.from(line.repeat(Math.ceil(f.size / line.length)).slice(0, f.size));
}

/** Writes every file of `files` under `root` (creating directories). */
export function writeTree(root: string, files: readonly TreeFile[]): void {
  for (const f of files) {
    const p = join(root, f.path);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, contentOf(f));
  }
}

/** Relative POSIX paths of every regular file under `root`, sorted. */
export function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else if (e.isFile()) out.push(r);
    }
  };
  walk('');
  return out.sort();
}

/**
 * Differences between two directories as readable lines: files only in one of them, and
 * files whose bytes differ. Empty when the trees are identical.
 */
export function diffTrees(expected: string, actual: string): string[] {
  const a = listFiles(expected);
  const b = new Set(listFiles(actual));
  const out: string[] = [];
  for (const p of a) {
    if (!b.has(p)) {
      out.push(`missing: ${p}`);
      continue;
    }
    b.delete(p);
    const x = readFileSync(join(expected, p));
    const y = readFileSync(join(actual, p));
    if (!x.equals(y)) out.push(`differs: ${p} (${x.length} vs ${y.length} bytes)`);
  }
  for (const p of b) out.push(`unexpected: ${p}`);
  return out;
}
