/**
 * A crash at each step of a fork's commit (a provider that stops answering at a chosen put,
 * before or after it reaches storage, as a killed process would), and in the checkpoint that
 * flushes a shared frozen layer: reopening shows no fork or a complete one, never a partial
 * one, and the source as it was.
 */
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { ProviderError, type Provider } from '../../src/provider/provider.js';
import { expectContents, populate, put, utf8 } from './fork-support.js';

/**
 * A provider that "dies" (every later call fails, as if the process were gone) at the first put
 * whose key starts with `prefix` once armed: `before` the put reaches storage, or right `after`.
 */
function mortal(inner: Provider) {
  let armed: { prefix: string; when: 'before' | 'after'; skip: number } | undefined;
  let dead = false;
  const die = () => {
    dead = true;
    return new ProviderError('Unavailable', 'the process died here');
  };
  const provider = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function' || prop === 'close') return v;
      return async (...args: unknown[]) => {
        if (dead) throw die();
        const hit = prop === 'put' && armed && String(args[0]).startsWith(armed.prefix) && armed.skip-- === 0;
        if (hit && armed!.when === 'before') throw die();
        const out = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        if (hit) throw die();
        return out;
      };
    },
  });
  return { provider, arm: (prefix: string, when: 'before' | 'after', skip = 0) => (armed = { prefix, when, skip }), isDead: () => dead };
}

describe('a crash at each step of a fork leaves no fork or a complete one', () => {
  const steps = [
    ['before its commit blob is written', 'commits/', 'before', false],
    ['after its commit blob, before the anchor names it', 'commits/', 'after', false],
    ['before the anchor moves', 'anchor', 'before', false],
    ['once the anchor moved, before memory follows', 'anchor', 'after', true],
  ] as const;
  for (const [label, prefix, when, forked] of steps) {
    it(`crashing ${label}: ${forked ? 'the fork is complete' : 'there is no fork'} after reopening`, async () => {
      const inner = await createMemoryProvider({});
      const m = mortal(inner);
      const store = await Store.open(m.provider);
      const src = await populate(store, 'crash-src');
      m.arm(prefix, when);
      await expect(store.forkBucket('crash-src', 'crash-fork')).rejects.toThrow();
      expect(m.isDead()).toBe(true);
      const again = await Store.open(inner);
      expect(again.listBuckets().map((b) => b.name)).toEqual(forked ? ['crash-fork', 'crash-src'] : ['crash-src']);
      await expectContents(again, 'crash-src', src, 'source');
      if (forked) await expectContents(again, 'crash-fork', src, 'fork');
      expect((await verifyRepository(inner)).problems).toEqual([]);
      await again.close();
    });
  }

  it('crashing in the checkpoint that flushes the shared layer (one run written of three): both complete after reopening', async () => {
    const inner = await createMemoryProvider({});
    const m = mortal(inner);
    const store = await Store.open(m.provider);
    const src = await populate(store, 'flush-src');
    await store.forkBucket('flush-src', 'flush-fork');
    await put(store, 'flush-fork', 'fork-own', utf8('own'));
    m.arm('runs/', 'after', 1);
    await expect(store.checkpoint()).rejects.toThrow();
    expect(m.isDead()).toBe(true);
    const again = await Store.open(inner);
    await expectContents(again, 'flush-src', src, 'source');
    await expectContents(again, 'flush-fork', new Map([...src, ['fork-own', utf8('own')]]), 'fork');
    await again.checkpoint();
    expect((await verifyRepository(inner)).problems).toEqual([]);
    await again.close();
  });
});
