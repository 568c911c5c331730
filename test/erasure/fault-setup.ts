/**
 * @module Shared set-up of the erasure fault tests: an erasure provider over N fs child
 * providers (one temp directory per failure domain), seeded blobs of mixed sizes (replicated
 * and striped), and damage done through the children exactly as a disk would do it — files
 * deleted, bytes flipped, files cut short, whole domains emptied — without knowing the
 * fragment format. Damage is confined to chosen domains: each blob has at most one fragment
 * (or replica) per domain, so damaging at most m domains damages at most m fragments of any
 * blob, which the provider must survive; m+1 domains it must not, and must say so.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { createErasureProvider } from '../../src/provider/erasure/index.js';
import type { Domain, DomainSpec, ErasureConfig, ErasureProvider } from '../../src/provider/erasure/types.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { getBytes, type Provider } from '../../src/provider/provider.js';
import { firstDiff } from '../support/bytes.js';
import { prng, randomBytes } from '../support/random.js';

export interface Rig {
  root: string;
  k: number;
  m: number;
  /** Child providers, domain i at index i (ids d1..dN). */
  children: Provider[];
  domainDirs: string[];
  provider: ErasureProvider;
  config: ErasureConfig;
  /** Closes the provider and its children; the directories stay (see cleanup). */
  close(): Promise<void>;
  /** A new provider over the same directories (after close). */
  reopen(): Promise<ErasureProvider>;
  cleanup(): void;
}

export interface RigOptions {
  k: number;
  m: number;
  /** Number of domains (default k+m). */
  n?: number;
  /** Bytes per cell (default 64 KiB: several stripes in a blob of a few hundred KiB). */
  cellSize?: number;
  /** Smallest striped blob (default 64 KiB). */
  stripeThreshold?: number;
  domainTimeoutMs?: number;
  degradedWrites?: boolean;
  /** Children in exclusive mode, as a server opens them (cached file handles). */
  exclusive?: boolean;
  /** Wraps child i (e.g. a hanging provider). */
  wrap?: (index: number, p: Provider) => Provider;
}

/** An erasure provider over `n` fresh fs directories under one temp root. */
export async function makeRig(opts: RigOptions): Promise<Rig> {
  const n = opts.n ?? opts.k + opts.m;
  const root = mkdtempSync(join(tmpdir(), 'ec-fault-'));
  const domainDirs = Array.from({ length: n }, (_, i) => join(root, `disk${i + 1}`));
  const specs: DomainSpec[] = domainDirs.map((dir, i) => ({ id: `d${i + 1}`, url: dir, labels: {} }));
  const config: ErasureConfig = {
    k: opts.k,
    m: opts.m,
    domains: specs,
    policy: {},
    cellSize: opts.cellSize ?? 64 * 1024,
    stripeThreshold: opts.stripeThreshold ?? 64 * 1024,
    degradedWrites: opts.degradedWrites ?? false,
    domainTimeoutMs: opts.domainTimeoutMs ?? 10_000,
  };
  const rig: Rig = {
    root,
    k: opts.k,
    m: opts.m,
    children: [],
    domainDirs,
    config,
    provider: undefined as unknown as ErasureProvider,
    close: async () => {
      await rig.provider.close();
      for (const c of rig.children) await c.close().catch(() => undefined);
    },
    reopen: async () => {
      await open();
      return rig.provider;
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
  const open = async () => {
    rig.children = [];
    const domains: Domain[] = [];
    for (let i = 0; i < n; i++) {
      mkdirSync(domainDirs[i]!, { recursive: true });
      const fs = await createFsProvider({ dir: domainDirs[i]!, ...(opts.exclusive ? { exclusive: true } : {}) });
      rig.children.push(fs);
      domains.push({ id: specs[i]!.id, labels: {}, provider: opts.wrap ? opts.wrap(i, fs) : fs });
    }
    rig.provider = await createErasureProvider({ config, domains });
  };
  await open();
  return rig;
}

/** A named test blob with seeded content. */
export interface Blob {
  key: string;
  body: Uint8Array;
}

/**
 * Blobs of mixed sizes around the rig's geometry: empty and tiny (replicated), just below
 * and at the stripe threshold, one byte past whole stripes, several stripes with a ragged
 * tail. Keys are spread so that placement varies.
 */
export function mixedBlobs(rig: Rig, count: number, seed: number): Blob[] {
  const cell = rig.config.cellSize;
  const stripe = cell * rig.k;
  const th = rig.config.stripeThreshold;
  const sizes = [0, 1, 100, 4096, th - 1, th, stripe, stripe + 1, 2 * stripe - 3, 3 * stripe + cell / 2 + 7];
  const next = prng(seed);
  return Array.from({ length: count }, (_, i) => {
    const size = i < sizes.length ? sizes[i]! : next() % (3 * stripe);
    return { key: `blobs/${seed}/${i.toString().padStart(3, '0')}-${size}`, body: randomBytes(size, seed * 1000 + i) };
  });
}

export async function putAll(p: Provider, blobs: readonly Blob[]): Promise<void> {
  for (const b of blobs) await p.put(b.key, b.body);
}

/** Every child key of `p`, in listing order. */
export async function listAll(p: Provider, prefix?: string): Promise<string[]> {
  const out: string[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await p.list({ ...(prefix ? { prefix } : {}), ...(startAfter ? { startAfter } : {}) });
    out.push(...page.items.map((i) => i.key));
    if (!page.next) return out;
    startAfter = page.next;
  }
}

export type Damage = 'delete' | 'flip' | 'truncate';

/**
 * Damages one child blob as a failing disk would: deletes it, flips one random byte (xor with
 * a non-zero value, anywhere: header, cells or trailer), or cuts it short.
 */
export async function damage(child: Provider, key: string, how: Damage, next: () => number): Promise<void> {
  if (how === 'delete') return child.delete(key);
  const bytes = Uint8Array.from(await getBytes(child, key));
  if (bytes.length === 0) return child.delete(key);
  if (how === 'flip') {
    bytes[next() % bytes.length] ^= 1 + (next() % 255);
    await child.put(key, bytes);
  } else {
    await child.put(key, bytes.subarray(0, next() % bytes.length));
  }
}

/**
 * Randomly damages the fragments on the domains `victims` (indices): each child blob there is
 * deleted, flipped or truncated with probability `share`. Returns how many were damaged.
 */
export async function damageDomains(rig: Rig, victims: readonly number[], share: number, seed: number): Promise<number> {
  const next = prng(seed);
  const kinds: Damage[] = ['delete', 'flip', 'truncate'];
  let n = 0;
  for (const v of victims) {
    for (const key of await listAll(rig.children[v]!)) {
      if (next() / 2 ** 32 >= share) continue;
      await damage(rig.children[v]!, key, kinds[next() % 3]!, next);
      n++;
    }
  }
  return n;
}

/** Empties the directories of domains `victims` (a lost disk; the empty directory stays). */
export function wipeDomains(rig: Rig, victims: readonly number[]): void {
  for (const v of victims) {
    const dir = rig.domainDirs[v]!;
    for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true });
  }
}

/** Reads every blob whole and in three ranges; each must be byte-exact. */
export async function expectExact(p: Provider, blobs: readonly Blob[], label: string): Promise<void> {
  for (const b of blobs) {
    const got = await getBytes(p, b.key).catch((err: unknown) => {
      throw new Error(`${label}: ${b.key} (${b.body.length} bytes) unreadable: ${String(err)}`);
    });
    const at = firstDiff(got, b.body);
    expect(at, `${label}: ${b.key} differs at byte ${at} (got ${got.length} of ${b.body.length} bytes)`).toBe(-1);
    const len = b.body.length;
    if (len < 3) continue;
    for (const [s, e] of [
      [0, Math.min(len - 1, 9)],
      [len >> 1, len - 1],
      [Math.floor(len / 3), Math.floor((2 * len) / 3)],
    ] as const) {
      const part = await getBytes(p, b.key, { start: s, end: e });
      expect(firstDiff(part, b.body.subarray(s, e + 1)), `${label}: ${b.key} range ${s}-${e}`).toBe(-1);
    }
  }
}

/** checkBlob on every blob (with `repair`); returns the checks. */
export async function checkAll(p: ErasureProvider, blobs: readonly Blob[], repair: boolean) {
  const out = [];
  for (const b of blobs) out.push(await p.checkBlob(b.key, { repair }));
  return out;
}

/** Expects every fragment of every blob present and sound. */
export async function expectHealthy(p: ErasureProvider, blobs: readonly Blob[], label: string): Promise<void> {
  for (const c of await checkAll(p, blobs, false)) {
    const bad = c.fragments.filter((f) => f.state !== 'ok');
    expect(bad, `${label}: ${c.key} (${c.layout}, ${c.size} bytes)`).toEqual([]);
    expect(c.lost).toBe(false);
    // Striped: k+m fragments; replicated: m+1 copies.
    expect(c.fragments.length, `${label}: ${c.key} fragment count`).toBe(c.layout === 'striped' ? p.k + p.m : p.m + 1);
  }
}
