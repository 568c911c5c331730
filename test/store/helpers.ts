/** @module Store test helpers: temp directories, providers, body streams. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import type { Provider } from '../../src/provider/provider.js';
import { decodeCommit, type CommitRecord } from '../../src/store/commit.js';
import { readRecord } from '../../src/store/records-io.js';
import { readAnchor, readFrameKey } from '../../src/store/recovery.js';
import { scanLog } from '../../src/store/commit-log/scan.js';
import { Store, type StoreOptions } from '../../src/store/store.js';
import { randomBytes } from '../support/random.js';

export function tempDir(label = 'strata'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `${label}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Runs `body` on a store opened with `opts` on a new fs directory (the provider passed through
 * `wrap` first, when given), with bucket `bucket` made; closes the store after, and removes
 * the directory either way.
 */
export async function withFsStore(bucket: string, opts: StoreOptions, body: (store: Store) => Promise<void>, wrap: (p: Provider) => Provider = (p) => p): Promise<void> {
  const t = tempDir('store');
  try {
    const store = await Store.open(wrap(await createFsProvider({ dir: t.dir })), opts);
    await store.createBucket(bucket);
    await body(store);
    await store.close();
  } finally {
    t.cleanup();
  }
}

/** A body stream yielding `data` in pieces of `piece` bytes. */
export async function* stream(data: Uint8Array, piece = 64 * 1024): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < data.length; i += piece) yield data.subarray(i, Math.min(data.length, i + piece));
}

export async function collect(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const p of body) parts.push(p);
  return Buffer.concat(parts);
}

export type ProviderKind = 'memory' | 'fs';

/** A fresh provider of `kind`; reopen() gives a new provider over the same storage. */
export async function makeProvider(kind: ProviderKind): Promise<{ provider: Provider; reopen: () => Promise<Provider>; cleanup: () => void }> {
  if (kind === 'memory') {
    const provider = await createMemoryProvider({});
    // The memory provider's data lives in the object; "reopening" reuses it without close.
    const shared = provider;
    return { provider, reopen: async () => shared, cleanup: () => undefined };
  }
  const { dir, cleanup } = tempDir('store');
  return { provider: await createFsProvider({ dir }), reopen: () => createFsProvider({ dir }), cleanup };
}

/**
 * The commits of the repository on `provider` after sequence `after` (default: all), oldest
 * first: the anchor's head and its parents (which cross roots: a root names no commit of its
 * own), starting from what the commit log holds after the anchor's head when it has one.
 * Throws when a parent does not carry the next lower sequence.
 */
export async function chainCommits(provider: Provider, after = 0): Promise<CommitRecord[]> {
  const found = await readAnchor(provider);
  const out: CommitRecord[] = [];
  let ref = found?.anchor.head;
  let top = found?.anchor.seq ?? 0;
  if (found?.anchor.log) {
    // Commits appended to the commit log after the anchor's head (store/commit-log/scan.ts).
    const last = (await scanLog(provider, found.anchor.log, { seq: top, ref: ref ?? found.anchor.root }, await readFrameKey(provider))).commits.at(-1);
    if (last) [ref, top] = [last.ref, last.record.seq];
  }
  for (let seq = top; seq > after && ref; seq--) {
    const c = decodeCommit(await readRecord(provider, ref, `commit ${seq}`), ref.key);
    if (c.seq !== seq) throw new Error(`${ref.key} has sequence ${c.seq}, expected ${seq}`);
    out.push(c);
    ref = c.parent;
  }
  return out.reverse();
}

/**
 * Bucket 'bkt' holding 'big' (9 MiB: a carrier body in chunk blobs of its own) and 'small'
 * (100 B, packed), checkpointed; bodies from seeds `seed` and `seed + 1`.
 */
export async function bigAndSmall(store: Store, seed: number): Promise<void> {
  await store.createBucket('bkt');
  const big = randomBytes(9 * 1024 * 1024, seed);
  await store.putObject('bkt', 'big', stream(big), { size: big.length });
  await store.putObject('bkt', 'small', stream(randomBytes(100, seed + 1)), { size: 100 });
  await store.checkpoint();
}
