/** Shared set-up of the erasure append-log tests: fs domains that can be killed, finding and
 * damaging a segment's copies, and reopening a provider over the same directories. */
import { expect } from 'vitest';
import { AppendError, type AppendLog } from '../../src/provider/append-log.js';
import { parseChildKey } from '../../src/provider/erasure/child-key.js';
import { createErasureProvider } from '../../src/provider/erasure/index.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { getBytes, ProviderError, type Provider } from '../../src/provider/provider.js';
import { randomBytes } from '../support/random.js';
import { KiB, makeRig, type Rig } from './erasure-helpers.js';

/** Deterministic bytes for append `n` (odd sizes, so records end mid-block). */
export function chunkOf(n: number, size = 700 + ((n * 977) % 9000)): Uint8Array {
  return randomBytes(size, 1000 + n);
}

/** A test rig whose domains can be killed: every call on a dead domain (appends to its open
 * logs included) fails as a dead disk does. `inner` are the fs children themselves. */
export interface KillRig extends Rig {
  inner: Provider[];
  kill(i: number): void;
  /** Brings a killed domain back (what it held is as it was). */
  revive(i: number): void;
}

export async function killRig(k: number, m: number, n = k + m, options: Parameters<typeof makeRig>[0] = {}): Promise<KillRig> {
  const dead = new Set<number>();
  const inner: Provider[] = [];
  const wrap = (p: Provider, i: number): Provider => {
    inner[i] = p;
    return new Proxy(p, {
      get(t, prop, r) {
        const v = Reflect.get(t, prop) as unknown; // getters run on the provider itself (private fields)
        if (typeof v !== 'function' || prop === 'close') return v;
        return (...args: unknown[]) => {
          if (dead.has(i)) return Promise.reject(new ProviderError('Io', `d${i + 1} is dead`));
          const out = (v as (...a: unknown[]) => Promise<unknown>).apply(t, args);
          if (prop !== 'openLog') return out;
          return (out as Promise<AppendLog>).then((log) => ({
            key: log.key,
            preallocated: log.preallocated,
            append: (o: number, c: readonly Uint8Array[]) =>
              dead.has(i) ? Promise.reject(new AppendError('write', `d${i + 1} is dead`, undefined)) : log.append(o, c),
            close: () => log.close(),
          }));
        };
      },
    });
  };
  const rig = await makeRig({ kind: 'fs', k, m, n, ...options, wrap });
  return { ...rig, inner, kill: (i) => void dead.add(i), revive: (i) => void dead.delete(i) };
}

/** The child key of `key`'s log copy on fs child `p`, if it holds one. */
export async function copyName(p: Provider, key: string): Promise<string | undefined> {
  const items = (await p.list({ limit: 1000 })).items;
  return items.find((it) => {
    const n = parseChildKey(it.key);
    return n?.key === key && n.layout === 'log';
  })?.key;
}

export async function holders(rig: KillRig, key: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < rig.inner.length; i++) if (await copyName(rig.inner[i]!, key).catch(() => undefined)) out.push(i);
  return out;
}

/** Flips one byte of the data of append `n` in `key`'s copy on fs child `p`. */
export async function corrupt(p: Provider, key: string, n: number): Promise<void> {
  const name = (await copyName(p, key))!;
  const raw = Buffer.from(await getBytes(p, name));
  const at = raw.indexOf(Buffer.from(chunkOf(n).subarray(100, 116)));
  expect(at).toBeGreaterThan(0);
  raw[at + 3] ^= 0xff;
  await p.put(name, raw);
}

/** A new erasure provider over the rig's domain directories (only `only`'s, when given; the
 * others become empty memory domains, so placement stays the same). */
export async function reopen(rig: Rig, only?: number[], geometry = { cellSize: 64 * KiB, stripeThreshold: 64 * KiB }): Promise<{ provider: Rig['provider']; inner: Provider[] }> {
  const { createFsProvider } = await import('../../src/provider/fs/index.js');
  const inner = await Promise.all(
    rig.domains.map(async (_, i) =>
      !only || only.includes(i) ? await createFsProvider({ dir: rig.dirs[i]!, exclusive: true }) : await createMemoryProvider()
    )
  );
  const three = rig.domains.length === 3;
  const provider = await createErasureProvider({
    config: {
      k: three ? 2 : 4,
      m: three ? 1 : 2,
      domains: rig.domains.map((d, i) => ({ id: d.id, url: rig.dirs[i]!, labels: {} })),
      policy: {},
      ...geometry,
      degradedWrites: false,
      domainTimeoutMs: 5000,
    },
    domains: rig.domains.map((d, i) => ({ id: d.id, labels: d.labels, provider: inner[i]! })),
  });
  return { provider, inner };
}

/** Appends `count` chunks back to back from offset 0; returns the expected segment prefix. */
export async function appendAll(log: { append(o: number, c: readonly Uint8Array[]): Promise<void> }, count: number, first = 0, at = 0): Promise<{ bytes: Buffer; end: number }> {
  const parts: Uint8Array[] = [];
  let off = at;
  for (let n = first; n < first + count; n++) {
    const c = chunkOf(n);
    // Two chunks per append, as the repository passes header and payload.
    await log.append(off, [c.subarray(0, 64), c.subarray(64)]);
    parts.push(c);
    off += c.length;
  }
  return { bytes: Buffer.concat(parts), end: off };
}

/** Creates segment `key` (64 KiB preallocated) on `provider`, makes `count` appends (appendAll)
 * and closes it; returns the expected segment prefix. */
export async function writeSegment(provider: Provider, key: string, count: number): Promise<{ bytes: Buffer; end: number }> {
  const log = await provider.openLog!(key, 64 * KiB);
  const written = await appendAll(log, count);
  await log.close();
  return written;
}
