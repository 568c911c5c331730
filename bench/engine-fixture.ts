/**
 * @module What every `bench:engine` workload shares: the synthetic key space and bodies,
 * and a Store opened on a locked fs directory behind a CountingProvider.
 *
 * Keys are exactly KEY_BYTES long and spread over PREFIXES prefixes, the way rs3's
 * small-write budgets use 32 B logical paths. They are deterministic, so a reader process
 * can regenerate the expected key set instead of being told it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { acquireDirectoryLock } from '../src/provider/fs/directory-lock.js';
import { createFsProvider } from '../src/provider/fs/index.js';
import { Store, type StoreOptions } from '../src/store/store.js';
import { CountingProvider } from './lib/counting-provider.js';

export const BUCKET = 'bench';
/** Every key is this long in UTF-8 bytes (rs3's small-write lanes use 32 B paths too). */
export const KEY_BYTES = 32;
/** Keys are spread round-robin over this many prefixes (the delimiter listing's fan-out). */
export const PREFIXES = 1000;
const ROOT = 'objects/';
const PREFIX_DIGITS = 3;
/** Digits of the index part: KEY_BYTES - "objects/" - "p" - 3 digits - "/". */
const INDEX_DIGITS = KEY_BYTES - ROOT.length - 1 - PREFIX_DIGITS - 1;

/** The prefix (with its trailing '/') that key `i` lives under. */
export function prefixOf(i: number): string {
  return `${ROOT}p${String(i % PREFIXES).padStart(PREFIX_DIGITS, '0')}/`;
}

/** Key `i`: `objects/pNNN/<index zero-padded>`, KEY_BYTES bytes. */
export function objectKey(i: number): string {
  return prefixOf(i) + String(i).padStart(INDEX_DIGITS, '0');
}

/** Common prefix of every key: list with this prefix and '/' to get the PREFIXES groups. */
export const KEY_ROOT = ROOT;

/**
 * Keys 0..n-1 in listing order (byte order): prefix by prefix, index ascending within one.
 * Zero padding makes numeric order equal byte order.
 */
export function* keysInListOrder(n: number): Generator<string> {
  for (let p = 0; p < Math.min(n, PREFIXES); p++) {
    for (let i = p; i < n; i += PREFIXES) yield objectKey(i);
  }
}

/** A deterministic body for object `i`: its index in the first 4 bytes, then a fill byte. */
export function bodyOf(i: number, size: number): Uint8Array {
  const b = Buffer.allocUnsafe(size).fill(i & 0xff);
  if (size >= 4) b.writeUInt32LE(i >>> 0, 0);
  return b;
}

/** The body as the one-chunk stream putObject takes. */
export async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  if (bytes.length > 0) yield bytes;
}

/** Reads a GetObject body to the end and returns its length. */
export async function drain(body: AsyncIterable<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const c of body) n += c.length;
  return n;
}

export interface BenchStore {
  store: Store;
  counter: CountingProvider;
  /** Milliseconds Store.open took (lock and provider setup excluded). */
  openMs: number;
}

/**
 * Opens a Store on `dir` as openStore does (directory lock, exclusive fs provider), but
 * with a CountingProvider in between. Closing the store releases the provider and lock.
 */
export async function openBenchStore(dir: string, options: StoreOptions = {}): Promise<BenchStore> {
  const lock = await acquireDirectoryLock(dir);
  const fs = await createFsProvider({ dir, exclusive: true });
  const counter = new CountingProvider(fs);
  const release = async (): Promise<void> => {
    await fs.close();
    await lock.release();
  };
  try {
    const t0 = performance.now();
    const store = await Store.open(counter, options, release);
    return { store, counter, openMs: performance.now() - t0 };
  } catch (err) {
    await release();
    throw err;
  }
}

/** A new empty directory under the OS temp dir (or BENCH_TMPDIR). */
export function tempDir(label: string): Promise<string> {
  return mkdtemp(join(process.env.BENCH_TMPDIR ?? tmpdir(), `strata-bench-${label}-`));
}

/** Removes `dir` and everything under it; a missing directory is not an error. */
export function removeDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true });
}

/** "ext4 (/dev/vda)" for the mount holding `dir` (Linux), else 'unknown filesystem'. */
export function filesystemOf(dir: string): string {
  try {
    const path = resolve(dir);
    let best = { mount: '', text: 'unknown filesystem' };
    for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
      const [dev, mount, type] = line.split(' ');
      if (!dev || !mount || !type) continue;
      const inside = path === mount || path.startsWith(mount.endsWith('/') ? mount : `${mount}/`);
      if (inside && mount.length >= best.mount.length) best = { mount, text: `${type} (${dev})` };
    }
    return best.text;
  } catch {
    return 'unknown filesystem';
  }
}

/** Peak resident set size of this process so far, in MiB. */
export function peakRssMiB(): number {
  return process.resourceUsage().maxRSS / 1024; // maxRSS is in KiB
}

/** The value of `--name=value` on the command line, or undefined. */
export function argValue(name: string): string | undefined {
  const flag = `--${name}=`;
  return process.argv.find((a) => a.startsWith(flag))?.slice(flag.length);
}

/** Marks the one stdout line a child benchmark process reports its JSON result on. */
export const RESULT_MARK = 'RESULT ';
