/**
 * A failure domain that hangs — a child provider whose calls never settle, or whose read
 * bodies never yield a byte — is timed out (domainTimeoutMs) and treated as failed for that
 * call: reads still return the exact bytes (rebuilt from parity), writes land on other
 * domains, and domainHealth reports it failed, each within a bound instead of stalling.
 */
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { GetResult, Provider } from '../../src/provider/provider.js';
import { getBytes } from '../../src/provider/provider.js';
import { firstDiff } from '../support/bytes.js';
import { randomBytes } from '../support/random.js';
import { expectExact, makeRig, mixedBlobs, putAll, type Rig } from './fault-setup.js';

/** Per-call timeout given to the provider, ms. */
const TIMEOUT_MS = 300;
/** Longest any single call may take with one domain hanging: a timeout or two plus the work
 * (generous: the machine is shared and the blobs are up to a few hundred KiB). */
const BOUND_MS = 3 * TIMEOUT_MS + 2500;

type Mode = 'ok' | 'never' | 'stall-body';

/**
 * Wraps `inner`; while `mode` is 'never' every call returns a promise that never settles;
 * while 'stall-body', get() answers but its body never yields (other calls pass through).
 */
function hanging(inner: Provider): Provider & { mode: Mode } {
  const never = <T>() => new Promise<T>(() => undefined);
  const w: Provider & { mode: Mode } = {
    mode: 'ok',
    kind: inner.kind,
    capabilities: inner.capabilities,
    put: (k, b, o) => (w.mode === 'never' ? never() : inner.put(k, b, o)),
    get: async (k, o): Promise<GetResult> => {
      if (w.mode === 'never') return never();
      const res = await inner.get(k, o);
      if (w.mode === 'ok') return res;
      res.body.destroy();
      return { ...res, body: new Readable({ read() {} }) };
    },
    head: (k) => (w.mode === 'never' ? never() : inner.head(k)),
    list: (o) => (w.mode === 'never' ? never() : inner.list(o)),
    delete: (k) => (w.mode === 'never' ? never() : inner.delete(k)),
    close: () => inner.close(),
  };
  // Reads must not bypass the hang through the positional-read fast path.
  if (inner.read) {
    const read = inner.read.bind(inner);
    w.read = (k, r, into) => (w.mode === 'ok' ? read(k, r, into) : never());
  }
  return w;
}

async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const out = await fn();
  const ms = performance.now() - t0;
  expect(ms, `${what} took ${ms.toFixed(0)} ms (bound ${BOUND_MS} ms)`).toBeLessThan(BOUND_MS);
  return out;
}

const rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) {
    for (const c of wrapped.splice(0)) c.mode = 'ok';
    await r.close().catch(() => undefined);
    r.cleanup();
  }
});
const wrapped: (Provider & { mode: Mode })[] = [];

describe.each(['never', 'stall-body'] as const)('a hanging domain (%s)', (mode) => {
  it('is timed out: reads exact, writes placed elsewhere, health reports it, all within the bound', async () => {
    // (4,2) over 7 domains: a write has a spare domain to replace the hanging one.
    const r = await makeRig({
      k: 4,
      m: 2,
      n: 7,
      domainTimeoutMs: TIMEOUT_MS,
      wrap: (i, p) => {
        const h = hanging(p);
        if (i === 0) wrapped.push(h);
        return h;
      },
    });
    rigs.push(r);
    const blobs = mixedBlobs(r, 16, mode === 'never' ? 5 : 6);
    await putAll(r.provider, blobs);
    wrapped[0]!.mode = mode;

    for (const b of blobs) {
      const got = await timed(`GET ${b.key}`, () => getBytes(r.provider, b.key));
      expect(firstDiff(got, b.body), b.key).toBe(-1);
    }
    await expectExact(r.provider, blobs, `domain d1 ${mode}`);

    if (mode === 'never') {
      // Writes: the hanging domain is replaced by the spare one.
      const fresh = [
        { key: 'fresh/striped', body: randomBytes(5 * 64 * 1024 + 11, 1) },
        { key: 'fresh/small', body: randomBytes(300, 2) },
      ];
      for (const b of fresh) await timed(`PUT ${b.key}`, () => r.provider.put(b.key, b.body));
      await expectExact(r.provider, fresh, 'written beside a hanging domain');
      const health = await timed('domainHealth', () => r.provider.domainHealth());
      const d1 = health.find((h) => h.id === 'd1');
      expect(d1?.state).toBe('failed');
      expect(health.filter((h) => h.state === 'ok').map((h) => h.id)).toEqual(['d2', 'd3', 'd4', 'd5', 'd6', 'd7']);
      // Once it answers again, everything still reads back exact.
      wrapped[0]!.mode = 'ok';
      await expectExact(r.provider, [...blobs, ...fresh], 'after the domain came back');
    }
  });
});
