/**
 * The fs provider's listing with long prefixes: a prefix that names a whole directory level
 * goes straight into it (walk.ts) instead of reading the parent. Every prefix and startAfter
 * around the 16-byte level boundaries must still list exactly the keys a sorted filter of
 * everything written gives, in byte order.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import type { Provider } from '../../src/provider/provider.js';

let dir: string;
let p: Provider;
const keys: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'strata-fs-walk-'));
  p = await createFsProvider({ dir, exclusive: true });
  // Shapes of the repository's names: a shared 16-byte first level, a per-key second level,
  // siblings that differ in the last byte of a level, keys that end exactly on a level, and
  // keys that are prefixes of others.
  const stems = ['commits/00000000', 'commits/00000001', 'chunks/000000abc'];
  for (const stem of stems) {
    keys.push(stem);
    for (let i = 0; i < 6; i++) {
      const mid = `${stem}${i.toString(16).padStart(7, '0')}-abcdefgh`;
      keys.push(mid, `${mid}!r.1`, `${mid}!r.2`, `${mid}ij!r.5k.b.lmnopqrstuvwxyz`, `${mid}ij!s.a.4`);
    }
  }
  for (const k of keys) await p.put(k, new TextEncoder().encode(k));
  keys.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
});
afterAll(async () => {
  await p.close();
  await rm(dir, { recursive: true, force: true });
});

async function listAll(prefix: string | undefined, startAfter: string | undefined, limit: number): Promise<string[]> {
  const out: string[] = [];
  let after = startAfter;
  for (;;) {
    const page = await p.list({ prefix, startAfter: after, limit });
    out.push(...page.items.map((i) => i.key));
    if (!page.next) return out;
    after = page.next;
  }
}

function expected(prefix: string, startAfter: string | undefined): string[] {
  return keys.filter((k) => k.startsWith(prefix) && (startAfter === undefined || Buffer.compare(Buffer.from(k), Buffer.from(startAfter)) > 0));
}

describe('fs list with prefixes across directory levels', () => {
  it('lists exactly the keys with each prefix, whole or paged', async () => {
    const prefixes = new Set<string>(['', 'c', 'commits/', 'commits/0000000', 'nothing/here/at/all/long/enough']);
    for (const k of keys) for (const n of [15, 16, 17, 31, 32, 33, k.length]) prefixes.add(k.slice(0, n));
    for (const prefix of prefixes) {
      expect(await listAll(prefix || undefined, undefined, 1000), `prefix ${prefix}`).toEqual(expected(prefix, undefined));
      expect(await listAll(prefix || undefined, undefined, 2), `prefix ${prefix}, pages of 2`).toEqual(expected(prefix, undefined));
    }
  });

  it('honours startAfter with a long prefix, before, inside and after the keys', async () => {
    const mid = 'commits/000000000000003-abcdefgh';
    const afters = [undefined, 'a', 'commits/00000000', mid, `${mid}!r.1`, `${mid}ij`, `${mid}ij!s`, `${mid}ij!s.a.4`, `${mid}z`, 'zzz'];
    for (const prefix of [mid, `${mid}ij!`, 'commits/00000000']) {
      for (const after of afters) {
        expect(await listAll(prefix, after, 1000), `prefix ${prefix} after ${after}`).toEqual(expected(prefix, after));
      }
    }
  });
});
