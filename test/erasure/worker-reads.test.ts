/**
 * Scrub and repair with the pass workers reading the fragments themselves (fs domains,
 * Provider.blobFilePath): the built modules (dist/, as the CLI and server run them; `npm run
 * build:js` first), a (4,2) set over six directories. Damage of every kind a worker's read can
 * meet is reported with the state this thread's own read would give, repaired from verified
 * bytes only, and the blobs read back exact; the domains' providers are asked for no source
 * bytes while a worker reads them (and are, when they cannot say where their files are).
 */
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, unlinkSync } from 'node:fs';
import { takesDirect } from '../support/o-direct.js';
import { dropFromPageCache, pageCacheToolsAvailable, residentPages } from '../support/page-cache.js';
import { overwriteFile } from '../support/bytes.js';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { ErasureConfig, ErasureProvider } from '../../src/provider/erasure/types.js';
import type { FsProvider } from '../../src/provider/fs/index.js';
import type { Provider } from '../../src/provider/provider.js';
import type { ScrubOptions, ScrubReport } from '../../src/provider/erasure/scrub.js';
import { randomBytes } from '../support/random.js';

const dist = (m: string) => import(pathToFileURL(resolve('dist/src/provider', m)).href);
const { createErasureProvider } = (await dist('erasure/index.js')) as typeof import('../../src/provider/erasure/index.js');
const { createFsProvider } = (await dist('fs/index.js')) as typeof import('../../src/provider/fs/index.js');
const { runScrub } = (await dist('erasure/scrub.js')) as { runScrub(p: ErasureProvider, o?: ScrubOptions): Promise<ScrubReport> };
const { HEADER_BYTES: FS_HEADER } = (await dist('fs/blob-file.js')) as typeof import('../../src/provider/fs/blob-file.js');
const { HEADER_BYTES: FRAGMENT_HEADER, framedLength } = (await dist('erasure/geometry.js')) as typeof import('../../src/provider/erasure/geometry.js');
const { DIRECT_GROUP_BYTES, WORKER_GROUP_BYTES } = (await dist('erasure/stripe-pass.js')) as typeof import('../../src/provider/erasure/stripe-pass.js');

const N = 6;
const CELL = 64 * 1024;

let roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** Reads of fragment bytes (more than a fragment's header: a pass looks a blob up by one)
 * asked of the domains' providers (read, readv, get), by all of them. */
interface Counted {
  p: ErasureProvider;
  fs: FsProvider[];
  reads: () => number;
  /** The child keys those reads were of. */
  readKeys: string[];
}

type Range = { start?: number; end?: number } | undefined;
/** Bytes a read call asks for (Infinity: all of the blob). */
function asked(prop: string, a: unknown[]): number {
  if (prop === 'readv') return (a[2] as Uint8Array[]).reduce((n, t) => n + t.length, 0);
  const r = (prop === 'get' ? (a[1] as { range?: Range } | undefined)?.range : a[1]) as Range;
  return r?.end !== undefined ? r.end - (r.start ?? 0) + 1 : Infinity;
}

/** The set over `root`; `files`: whether the domains say where their blob files are;
 * `redirect`: child keys whose file is said to be another (e.g. one that answers EIO). */
async function openSetOf(root: string, files: boolean, redirect?: ReadonlyMap<string, string>, direct = false): Promise<Counted> {
  let reads = 0;
  const readKeys: string[] = [];
  const fs: FsProvider[] = [];
  const domains = await Promise.all(
    Array.from({ length: N }, async (_, i) => {
      const child = await createFsProvider({ dir: join(root, `d${i + 1}`), directWrites: direct });
      fs[i] = child;
      const provider = new Proxy(child, {
        get(t, prop) {
          if (prop === 'blobFilePath' && !files) return undefined;
          if (prop === 'blobFilePath' && redirect) return (key: string) => redirect.get(key) ?? t.blobFilePath(key);
          const v = Reflect.get(t, prop, t) as unknown;
          if (typeof v !== 'function') return v;
          if (prop === 'read' || prop === 'readv' || prop === 'get')
            return (...a: unknown[]) => (asked(prop, a) > FRAGMENT_HEADER && (reads++, readKeys.push(a[0] as string)), (v as (...x: unknown[]) => unknown).apply(t, a));
          return (v as (...x: unknown[]) => unknown).bind(t);
        },
      }) as Provider;
      return { id: `d${i + 1}`, labels: {}, provider };
    })
  );
  const config: ErasureConfig = {
    k: 4, m: 2, policy: {}, cellSize: CELL, stripeThreshold: CELL, degradedWrites: false, domainTimeoutMs: 10_000,
    domains: domains.map((d) => ({ id: d.id, url: join(root, d.id), labels: {} })),
  };
  return { p: await createErasureProvider({ config, domains }), fs, reads: () => reads, readKeys };
}

/** The file of `key`'s fragment on domain `d` (1-based), and its fs provider's key. */
async function fragmentFile(set: Counted, d: number, key: string): Promise<string> {
  const child = set.fs[d - 1]!;
  const page = await child.list({ prefix: `${key}!` });
  expect(page.items.length, `${key} on d${d}`).toBe(1);
  return child.blobFilePath(page.items[0]!.key);
}


async function bytesOf(p: ErasureProvider, key: string): Promise<Buffer> {
  const r = await p.get(key);
  const parts: Uint8Array[] = [];
  for await (const c of r.body) parts.push(c);
  return Buffer.concat(parts);
}

describe.each([
  ['through the page cache', false],
  ['around the page cache (direct I/O on)', true],
])('pass workers reading fs fragments themselves, %s', (_, direct) => {
  const openSet = (root: string, files: boolean, redirect?: ReadonlyMap<string, string>) => openSetOf(root, files, redirect, direct);

  it('report missing, flipped, short and foreign fragments as the pass would, repair from verified bytes, and ask the domains for no source bytes', async () => {
    const root = mkdtempSync(join(tmpdir(), 'worker-reads-'));
    roots.push(root);
    let set = await openSet(root, true);
    // Six blobs of two groups or more (a group read by a worker is 16 stripes of 64 KiB cells
    // per source here: stripe-pass.ts WORKER_GROUP_BYTES).
    const blobs = new Map<string, Uint8Array>();
    for (let i = 0; i < 6; i++) {
      const body = randomBytes(4 * 1024 * 1024 + i * 500_001, 100 + i);
      blobs.set(`w/${i}`, body);
      await set.p.put(`w/${i}`, body);
    }
    // Direct I/O on: the domains read fragments around the page cache where their directory
    // takes O_DIRECT. A pass then leaves them out of the page cache; through it, it fills it.
    expect(set.fs.map((f) => f.directFileReads)).toEqual(set.fs.map(() => direct && takesDirect(root)));
    const files = await Promise.all([...blobs.keys()].flatMap((key) => Array.from({ length: N }, (_, d) => fragmentFile(set, d + 1, key))));
    const watchCache = pageCacheToolsAvailable && takesDirect(root);
    if (watchCache) for (const f of files) dropFromPageCache(f);
    const clean = await runScrub(set.p);
    expect(clean.damagedBlobs).toBe(0);
    expect(clean.fragments.verified).toBe(6 * N);
    expect(set.reads()).toBe(0); // every source read by a worker
    if (watchCache) {
      const cached = files.reduce((n, f) => n + residentPages(f), 0);
      const pages = files.reduce((n, f) => n + Math.ceil(statSync(f).size / 4096), 0);
      if (direct) expect(cached).toBe(0);
      else expect(cached).toBeGreaterThan(pages * 0.9);
    }

    // One damaged fragment per blob, on a different domain each: missing; a flipped byte in a
    // later group; cut short; the fragment header (erasure) rewritten; a clean blob; a flipped
    // byte in the first cell.
    unlinkSync(await fragmentFile(set, 1, 'w/0'));
    const late = await fragmentFile(set, 2, 'w/1');
    overwriteFile(late, FS_HEADER + FRAGMENT_HEADER + 17 * framedLength(CELL) + 7, Buffer.from([0xa5]));
    const short = await fragmentFile(set, 3, 'w/2');
    truncateSync(short, FS_HEADER + 3 * CELL);
    overwriteFile(await fragmentFile(set, 4, 'w/3'), FS_HEADER + 6, Buffer.from([0x77, 0x77]));
    overwriteFile(await fragmentFile(set, 6, 'w/5'), FS_HEADER + FRAGMENT_HEADER + 100, Buffer.from([0x01]));

    const found = await runScrub(set.p);
    expect(found.damagedBlobs).toBe(5);
    expect(found.fragments).toMatchObject({ missing: 1, corrupt: 4, unreachable: 0 });
    expect(found.damagedByDomain).toEqual({ d1: 1, d2: 1, d3: 1, d4: 1, d6: 1 });
    expect(found.lost).toEqual([]);
    expect(set.reads()).toBe(0);

    const fixed = await runScrub(set.p, { repair: true });
    expect(fixed.repairedFragments).toBe(5);
    expect(fixed.unrepairedBlobs).toBe(0);
    const again = await runScrub(set.p);
    expect(again.damagedBlobs).toBe(0);
    expect(again.fragments.verified).toBe(6 * N);
    for (const [key, body] of blobs) expect(Buffer.compare(await bytesOf(set.p, key), Buffer.from(body)), key).toBe(0);

    // A file that is not an fs blob file at all: one damaged fragment (its domain says
    // 'Corrupt'), not a failed domain, as a read through the domain says too.
    const foreignFile = await fragmentFile(set, 5, 'w/4');
    overwriteFile(foreignFile, 0, Buffer.from('XXXX'));
    const foreign = await runScrub(set.p);
    expect(foreign.fragments).toMatchObject({ corrupt: 1, unreachable: 0, missing: 0 });
    expect(foreign.damagedByDomain).toEqual({ d5: 1 });
    await set.p.close();

    // Domains that cannot say where their files are: the pass reads through them, and finds
    // the same.
    set = await openSet(root, false);
    const through = await runScrub(set.p);
    expect(through.fragments).toEqual(foreign.fragments);
    expect(through.damagedByDomain).toEqual({ d5: 1 });
    expect(set.reads()).toBeGreaterThan(6 * N);
    await set.p.close();

    // Repaired in place (its domain is healthy), and everything reads back exact.
    set = await openSet(root, true);
    expect((await runScrub(set.p, { repair: true })).repairedFragments).toBe(1);
    expect(readFileSync(await fragmentFile(set, 5, 'w/4')).subarray(0, 4).toString('latin1')).not.toBe('XXXX');
    expect((await runScrub(set.p)).damagedBlobs).toBe(0);
    for (const [key, body] of blobs) expect(Buffer.compare(await bytesOf(set.p, key), Buffer.from(body)), key).toBe(0);
    await set.p.close();
  });

  it('a missing-only repair reads k fragments per blob on the workers and rebuilds a wiped domain exact', async () => {
    // Stripes in a group a worker reads (stripe-pass.ts WORKER_GROUP_BYTES, DIRECT_GROUP_BYTES
    // where the reads go around the page cache).
    const G = (direct && takesDirect(tmpdir()) ? DIRECT_GROUP_BYTES : WORKER_GROUP_BYTES) / framedLength(CELL) | 0;
    const root = mkdtempSync(join(tmpdir(), 'worker-reads-'));
    roots.push(root);
    let set = await openSet(root, true);
    const blobs = new Map<string, Uint8Array>();
    for (let i = 0; i < 5; i++) {
      // m/3 spans two groups read by a worker (G + 8 stripes, G to a group).
      const body = randomBytes(i === 3 ? (G + 8) * 4 * CELL : 1_500_000 + i * 500_001, 200 + i);
      blobs.set(`m/${i}`, body);
      await set.p.put(`m/${i}`, body);
    }
    // A data fragment of one blob cut short in its second group (not on d1): the repair must
    // take a spare from that group on.
    let shortOn = '';
    for (let d = 2; d <= N && !shortOn; d++) {
      const key = (await set.fs[d - 1]!.list({ prefix: 'm/3!' })).items[0]!.key;
      if (Number.parseInt(key.slice(key.lastIndexOf('.') + 1), 36) < 4) shortOn = set.fs[d - 1]!.blobFilePath(key);
    }
    expect(shortOn).not.toBe('');
    await set.p.close();
    rmSync(join(root, 'd1'), { recursive: true, force: true });
    truncateSync(shortOn, FS_HEADER + FRAGMENT_HEADER + (G + 4) * framedLength(CELL));
    set = await openSet(root, true);
    const r = await runScrub(set.p, { repair: true, missingOnly: true });
    // The short source is found, and rewritten with the missing one (from the fragments found
    // good, read through the domains: rebuild.ts); nothing else was read here.
    // Unchecked: the fifth fragment of every blob, m/3's spare included (it joined in the second
    // group, so its first group was never verified).
    expect(r.fragments).toMatchObject({ missing: 5, corrupt: 1, unchecked: 5 });
    expect(r.repairedFragments).toBe(6);
    expect(r.unrepairedBlobs).toBe(0);
    expect(set.readKeys.filter((k) => !k.startsWith('m/3!'))).toEqual([]);
    const again = await runScrub(set.p);
    expect(again.damagedBlobs).toBe(0);
    for (const [key, body] of blobs) expect(Buffer.compare(await bytesOf(set.p, key), Buffer.from(body)), key).toBe(0);
    await set.p.close();
  });

  it('a fragment file whose read fails with EIO is the damage of that fragment on a worker too: reported corrupt on its domain, which stays in service, and repaired', async () => {
    const root = mkdtempSync(join(tmpdir(), 'worker-reads-'));
    roots.push(root);
    const redirect = new Map<string, string>();
    const set = await openSet(root, true, redirect);
    const body = randomBytes(1_500_000, 300);
    await set.p.put('e/0', body);
    let d = 0;
    let child = '';
    for (let i = 1; i <= N && !child; i++) {
      const key = (await set.fs[i - 1]!.list({ prefix: 'e/0!' })).items[0]?.key;
      if (key?.endsWith('.2')) [d, child] = [i, key];
    }
    expect(child).not.toBe('');
    // Reading this process's own memory at address 0 fails with EIO: a file that answers as a
    // bad sector does, for the worker's synchronous reads.
    redirect.set(child, '/proc/self/mem');
    const r = await runScrub(set.p);
    expect(r.fragments).toMatchObject({ corrupt: 1, unreachable: 0, missing: 0 });
    expect(r.damagedByDomain).toEqual({ [`d${d}`]: 1 });
    expect((await set.p.domainHealth()).every((h) => h.state === 'ok')).toBe(true);
    const fixed = await runScrub(set.p, { repair: true });
    expect(fixed.repairedFragments).toBe(1);
    expect(fixed.fragments.unreachable).toBe(0);
    redirect.clear(); // the rewritten file, where the fs provider put it
    expect((await runScrub(set.p)).damagedBlobs).toBe(0);
    expect(Buffer.compare(await bytesOf(set.p, 'e/0'), Buffer.from(body))).toBe(0);
    await set.p.close();
  });
});
