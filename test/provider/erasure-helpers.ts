/** Shared set-up for the erasure provider tests: domains over memory or tmp-dir fs children. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import type { Provider } from '../../src/provider/provider.js';
import { createErasureProvider } from '../../src/provider/erasure/index.js';
import type { Domain, ErasureConfig, ErasureProvider } from '../../src/provider/erasure/types.js';

export const KiB = 1024;
export const MiB = 1024 * 1024;

export interface Rig {
  provider: ErasureProvider;
  domains: Domain[];
  dirs: string[];
}

const roots: string[] = [];

/** Removes every tmp dir made by makeRig. */
export async function cleanupRigs(): Promise<void> {
  for (const d of roots.splice(0)) await rm(d, { recursive: true, force: true });
}

/** An erasure provider over `n` domains ('memory' or 'fs' children, or given providers). */
export async function makeRig(
  options: Partial<Omit<ErasureConfig, 'domains'>> & {
    n?: number;
    kind?: 'memory' | 'fs';
    wrap?: (p: Provider, i: number) => Provider;
    labels?: (i: number) => Record<string, string>;
  } = {}
): Promise<Rig> {
  const k = options.k ?? 4;
  const m = options.m ?? 2;
  const n = options.n ?? k + m;
  const dirs: string[] = [];
  const domains: Domain[] = [];
  for (let i = 0; i < n; i++) {
    let p: Provider;
    if (options.kind === 'fs') {
      const dir = await mkdtemp(join(tmpdir(), `strata-ec-d${i + 1}-`));
      roots.push(dir);
      dirs.push(dir);
      p = await createFsProvider({ dir, exclusive: true });
    } else p = await createMemoryProvider();
    domains.push({ id: `d${i + 1}`, labels: options.labels?.(i) ?? {}, provider: options.wrap ? options.wrap(p, i) : p });
  }
  const config: ErasureConfig = {
    k,
    m,
    domains: domains.map((d) => ({ id: d.id, url: dirs[Number(d.id.slice(1)) - 1] ?? 'memory:', labels: d.labels })),
    policy: options.policy ?? {},
    cellSize: options.cellSize ?? 64 * KiB,
    stripeThreshold: options.stripeThreshold ?? 64 * KiB,
    degradedWrites: options.degradedWrites ?? false,
    domainTimeoutMs: options.domainTimeoutMs ?? 5_000,
    ...(options.writeMemory !== undefined ? { writeMemory: options.writeMemory } : {}),
    ...(options.ownerShare !== undefined ? { ownerShare: options.ownerShare } : {}),
  };
  return { provider: await createErasureProvider({ config, domains }), domains, dirs };
}
