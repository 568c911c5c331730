/**
 * @module Micro-benchmark of the erasure provider itself (no HTTP): 64 MiB striped PUT, GET and
 * degraded GET (m domains' fragments of the blob deleted) at (4,2) over 6 and (10,4) over 14
 * tmp-dir fs domains, against one fs provider, in one run. ec-bench's `bench:erasure` measures
 * the same through the S3 server; this isolates the provider.
 *
 *   node dist/bench/provider-erasure-micro.js [cellKiB=256] [rounds=3]
 */
// First, as in the `strata` command: the Reed-Solomon build the server runs (src/wasm/relaxed-simd.ts).
import '../src/wasm/relaxed-simd.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsProvider } from '../src/provider/fs/index.js';
import { createErasureProvider } from '../src/provider/erasure/index.js';
import { parseChildKey } from '../src/provider/erasure/child-key.js';
import type { Domain } from '../src/provider/erasure/types.js';
import type { Provider } from '../src/provider/provider.js';

const MiB = 1024 * 1024;
const SIZE = 64 * MiB;
const cellKiB = Number(process.argv[2] ?? 256);
const rounds = Number(process.argv[3] ?? 3);

async function drain(p: Provider, key: string): Promise<number> {
  const res = await p.get(key);
  let n = 0;
  for await (const c of res.body as AsyncIterable<Uint8Array>) n += c.length;
  if (n !== SIZE) throw new Error(`short read ${n}`);
  return n;
}

function body(): Uint8Array[] {
  const chunk = new Uint8Array(MiB);
  for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 131 + 7) & 0xff;
  return Array.from({ length: SIZE / MiB }, () => chunk);
}

async function time(f: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await f();
  return (performance.now() - t) / 1000;
}

async function run(label: string, make: () => Promise<{ p: Provider; dirs: string[]; wreck?: (key: string) => Promise<void> }>) {
  const put: number[] = [];
  const get: number[] = [];
  const deg: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const { p, dirs, wreck } = await make();
    const key = `chunks/bench-${r}`;
    put.push(SIZE / MiB / (await time(() => p.put(key, body(), { contentLength: SIZE }))));
    get.push(SIZE / MiB / (await time(() => drain(p, key))));
    if (wreck) {
      await wreck(key);
      deg.push(SIZE / MiB / (await time(() => drain(p, key))));
    }
    await p.close();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }
  const best = (xs: number[]) => (xs.length ? Math.max(...xs).toFixed(0) : '-');
  console.log(`${label.padEnd(26)} PUT ${best(put).padStart(5)} MiB/s  GET ${best(get).padStart(5)} MiB/s  degraded GET ${best(deg).padStart(5)} MiB/s`);
}

async function erasure(k: number, m: number) {
  const dirs: string[] = [];
  const domains: Domain[] = [];
  for (let i = 0; i < k + m; i++) {
    const dir = await mkdtemp(join(tmpdir(), `ec-bench-d${i}-`));
    dirs.push(dir);
    domains.push({ id: `d${i + 1}`, labels: {}, provider: await createFsProvider({ dir, exclusive: true }) });
  }
  const p = await createErasureProvider({
    config: { k, m, domains: [], policy: {}, cellSize: cellKiB * 1024, stripeThreshold: MiB, degradedWrites: false, domainTimeoutMs: 10_000 },
    domains,
  });
  const wreck = async (key: string) => {
    // Delete the data fragments 0..m-1 (the worst case for a systematic read).
    let removed = 0;
    for (const d of domains) {
      for (const item of (await d.provider.list({})).items) {
        const n = parseChildKey(item.key);
        if (n?.key === key && n.index < m) (await d.provider.delete(item.key), removed++);
      }
    }
    if (removed !== m) throw new Error(`removed ${removed}`);
  };
  return { p, dirs, wreck };
}

console.log(`erasure provider micro-bench: 64 MiB blob, cell ${cellKiB} KiB, best of ${rounds}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
await run('fs (one directory)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ec-bench-fs-'));
  return { p: await createFsProvider({ dir, exclusive: true }), dirs: [dir] };
});
await run('erasure 4+2 over 6', () => erasure(4, 2));
await run('erasure 10+4 over 14', () => erasure(10, 4));
/** Small-object path: 4 KiB blobs (replicated) put and read, and 4 KiB ranged reads of a
 * 16 MiB striped blob (a packed body read from a commit blob), ops/s. */
async function small(label: string, p: Provider, dirs: string[]) {
  const n = 1000;
  const blob = new Uint8Array(4096).fill(9);
  let t = performance.now();
  for (let i = 0; i < n; i++) await p.put(`small/${i}`, blob);
  const putOps = n / ((performance.now() - t) / 1000);
  t = performance.now();
  for (let i = 0; i < n; i++) await p.read!(`small/${i}`);
  const getOps = n / ((performance.now() - t) / 1000);
  await p.put('packed', body().slice(0, 16), { contentLength: 16 * MiB });
  t = performance.now();
  for (let i = 0; i < n; i++) {
    const start = ((i * 7919) % 4000) * 4096;
    await p.read!('packed', { start, end: start + 4095 });
  }
  const rangeOps = n / ((performance.now() - t) / 1000);
  console.log(`${label.padEnd(26)} 4 KiB PUT ${putOps.toFixed(0).padStart(6)}/s  GET ${getOps.toFixed(0).padStart(6)}/s  4 KiB range of 16 MiB ${rangeOps.toFixed(0).padStart(6)}/s`);
  await p.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
}
{
  const dir = await mkdtemp(join(tmpdir(), 'ec-bench-fs-'));
  await small('fs (one directory)', await createFsProvider({ dir, exclusive: true }), [dir]);
  const e = await erasure(4, 2);
  await small('erasure 4+2 over 6', e.p, e.dirs);
}
console.log(`load after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
