/**
 * `verify` tells damage from garbage: a blob that cannot be read but that nothing reaches from
 * the anchor (an uncommitted write's leftover, as a put killed midway leaves on the erasure
 * provider) is reported as garbage and leaves the result OK; the same kind of bytes in a blob an
 * object's body lives in is damage naming that object.
 */
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { chunkKey } from '../../src/store/layout.js';
import { getBytes } from '../../src/provider/provider.js';
import { randomBytes } from '../support/random.js';
import { bigAndSmall, makeProvider } from './helpers.js';

describe.each(['memory', 'fs'] as const)('verify on %s', (kind) => {
  it('calls an unreadable blob nothing reaches garbage, and one an object uses damage', async () => {
    const p = await makeProvider(kind);
    try {
      const store = await Store.open(p.provider);
      await bigAndSmall(store, 7);

      // A torn, never-committed chunk: bytes that are not a pack.
      const torn = chunkKey();
      await p.provider.put(torn, randomBytes(5000, 9));
      const clean = await verifyRepository(p.provider);
      expect(clean.problems).toEqual([]);
      expect(clean.ok).toBe(true);
      expect(clean.garbage.map((g) => g.blob)).toEqual([torn]);

      // The same kind of damage in a chunk the object 'big' reads is a problem naming it.
      const chunks = (await p.provider.list({ prefix: 'chunks/' })).items.map((i) => i.key).filter((k) => k !== torn);
      expect(chunks.length).toBeGreaterThan(0);
      const victim = chunks[0]!;
      const bytes = Buffer.from(await getBytes(p.provider, victim));
      bytes[bytes.length >> 1]! ^= 0x40;
      await p.provider.put(victim, bytes);
      const damaged = await verifyRepository(p.provider);
      expect(damaged.ok).toBe(false);
      const problem = damaged.problems.find((x) => x.blob === victim);
      expect(problem).toBeDefined();
      expect(problem!.affects).toContain('bkt/big');
      expect(damaged.garbage.map((g) => g.blob)).toEqual([torn]);
      await store.close();
    } finally {
      await p.cleanup();
    }
  });
});
