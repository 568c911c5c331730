/**
 * An anchor write that fails while a copy of it is still running on a domain past the domain
 * timeout may land after the failure was reported. Reading the anchor back at once then says
 * "did not move", which could later turn into "moved": with the commit log, a failed segment
 * roll followed by acknowledged commits in the old segment, then the late anchor landing and a
 * crash, would drop those commits at recovery. So such a failure (ProviderError.mayLand) fences
 * the repository instead of being resolved by the read-back, and nothing is acknowledged on an
 * anchor whose outcome is unknown.
 *
 * Here two of three domains answer anchor puts only after the timeout (their copies land
 * late); the repository runs with commit blobs, so every commit moves the anchor.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderError, type Provider } from '../../src/provider/provider.js';
import { ANCHOR_KEY } from '../../src/store/layout.js';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { collect, stream } from '../store/helpers.js';
import { makeRig, type Rig } from './fault-setup.js';

/** Generous for a slow shared machine: every other put (chunks, commits) must finish within it. */
const TIMEOUT_MS = 1500;
const LATE_MS = 3500;
const B = 'late';
const text = (s: string) => new TextEncoder().encode(s);

/** Wraps `inner`: while `late`, puts of the anchor's copies answer LATE_MS later (and land);
 * every other call goes straight to `inner`. */
function lateAnchor(inner: Provider): Provider & { late: boolean; landed: number } {
  const state = { late: false, landed: 0 };
  const put: Provider['put'] = async (key, body, options) => {
    if (state.late && key.startsWith(`${ANCHOR_KEY}!`)) {
      await new Promise((r) => setTimeout(r, LATE_MS));
      const info = await inner.put(key, body, { ...options, signal: undefined });
      state.landed++;
      return info;
    }
    return inner.put(key, body, options);
  };
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === 'put') return put;
      if (prop === 'late' || prop === 'landed') return state[prop];
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
    set(_target, prop, value) {
      if (prop === 'late') state.late = value as boolean;
      else if (prop === 'landed') state.landed = value as number;
      else return false;
      return true;
    },
  }) as Provider & { late: boolean; landed: number };
}

/** `inner` with the methods in `over` replaced, every other one bound to it. */
function overriding(inner: Provider, over: Partial<Pick<Provider, 'put' | 'delete'>>): Provider {
  return new Proxy(inner, {
    get(target, prop) {
      const own = (over as Record<PropertyKey, unknown>)[prop];
      if (own) return own;
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** A store on `r` (commit blobs: every commit moves the anchor) with bucket B holding a = one. */
async function openWithA(r: Rig): Promise<{ store: Store; put: (key: string, body: string) => Promise<unknown> }> {
  const store = await Store.open(r.provider, { commitLog: false });
  await store.createBucket(B);
  const put = (key: string, body: string) => store.putObject(B, key, stream(text(body)), { size: text(body).length });
  await put('a', 'one');
  return { store, put };
}

const rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) {
    await r.close().catch(() => undefined);
    r.cleanup();
  }
});

describe('an anchor copy that may still land', () => {
  it('the erasure put says so (mayLand), and the repository fences instead of reading the anchor back', async () => {
    const wrapped: ReturnType<typeof lateAnchor>[] = [];
    const r = await makeRig({
      k: 2,
      m: 1,
      n: 3,
      domainTimeoutMs: TIMEOUT_MS,
      wrap: (_i, p) => {
        const w = lateAnchor(p);
        wrapped.push(w);
        return w;
      },
    });
    rigs.push(r);
    const { store, put } = await openWithA(r);

    // Two of the three domains now take longer than the timeout: a copy needs 2 domains.
    wrapped[1]!.late = wrapped[2]!.late = true;
    const failed = await put('b', 'two').then(
      () => undefined,
      (e: unknown) => e
    );
    expect(failed).toMatchObject({ code: 'Unsafe' });
    const cause = (failed as Error).cause;
    expect(cause).toBeInstanceOf(ProviderError);
    expect((cause as ProviderError).mayLand).toBe(true);
    expect((cause as ProviderError).message).toMatch(/may still land/);

    // The late copies land; the fenced repository acknowledges nothing on top of them.
    const deadline = Date.now() + 15_000;
    while (wrapped[1]!.landed + wrapped[2]!.landed < 2 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
    expect(wrapped[1]!.landed + wrapped[2]!.landed).toBe(2);
    wrapped[1]!.late = wrapped[2]!.late = false;
    await expect(put('c', 'three')).rejects.toMatchObject({ code: 'Unsafe' });
    await store.close();

    // Reopened: a consistent repository, with what was acknowledged; the failed write may or
    // may not be there (its anchor landed late), and nothing after it was acknowledged.
    await r.close();
    const again = await Store.open(await r.reopen(), { commitLog: false });
    try {
      const report = await verifyRepository(r.provider);
      expect(report.problems).toEqual([]);
      expect(report.ok).toBe(true);
      expect(Buffer.from(await collect((await again.getObject(B, 'a')).body)).toString()).toBe('one');
      await expect(again.getObject(B, 'c')).rejects.toMatchObject({ code: 'NoSuchKey' });
    } finally {
      await again.close();
    }
  });

  it('a child that says its failed put may still be applied (an S3 domain left unanswered) counts the same', async () => {
    // Domain 1 answers its anchor copies with 'Io' (the domain call wraps it), domain 2 with
    // 'Unavailable' (passed through): both marked mayLand, as the s3 provider marks them.
    const unanswered = (code: 'Io' | 'Unavailable') => (inner: Provider): Provider =>
      overriding(inner, {
        put: async (key, body, options) => {
          if (key.startsWith(`${ANCHOR_KEY}!`) && armed) throw new ProviderError(code, `PUT ${key}: ECONNRESET`, { mayLand: true });
          return inner.put(key, body, options);
        },
      });
    let armed = false;
    const r = await makeRig({
      k: 2,
      m: 1,
      n: 3,
      domainTimeoutMs: TIMEOUT_MS,
      wrap: (i, p) => (i === 1 ? unanswered('Io')(p) : i === 2 ? unanswered('Unavailable')(p) : p),
    });
    rigs.push(r);
    const { store, put } = await openWithA(r);
    armed = true;
    const failed = await put('b', 'two').then(
      () => undefined,
      (e: unknown) => e
    );
    expect(failed).toMatchObject({ code: 'Unsafe' });
    const cause = (failed as Error).cause as ProviderError;
    expect(cause).toBeInstanceOf(ProviderError);
    expect(cause.mayLand).toBe(true);
    await store.close();
  });

  it('a failed anchor write whose stored copy cannot be removed fences; one that removes it reads back as not moved', async () => {
    // Domain 0 stores its anchor copies; domains 1 and 2 refuse theirs (one copy of the two
    // needed). With `stuck`, domain 0 also fails to delete anchor copies: the copy stays, and a
    // later open would take it for the newest anchor.
    let armed = false;
    let stuck = false;
    const fault = (i: number) => (inner: Provider): Provider =>
      overriding(inner, {
        put: async (key, body, options) => {
          if (armed && i > 0 && key.startsWith(`${ANCHOR_KEY}!`)) throw new ProviderError('Io', `PUT ${key}: EIO`);
          return inner.put(key, body, options);
        },
        delete: async (key) => {
          if (stuck && key.startsWith(`${ANCHOR_KEY}!`)) throw new ProviderError('Io', `DELETE ${key}: EIO`);
          return inner.delete(key);
        },
      });
    for (const removable of [true, false]) {
      armed = stuck = false;
      const r = await makeRig({ k: 2, m: 1, n: 3, domainTimeoutMs: TIMEOUT_MS, wrap: (i, p) => fault(i)(p) });
      rigs.push(r);
      const { store, put } = await openWithA(r);
      armed = true;
      stuck = !removable;
      const failed = await put('b', 'two').then(
        () => undefined,
        (e: unknown) => e
      );
      if (removable) {
        expect(failed, 'removed: the anchor did not move').toMatchObject({ code: 'Io' });
        expect(String(failed)).toMatch(/did not move/);
      } else {
        expect(failed, 'left in place: fenced').toMatchObject({ code: 'Unsafe' });
        expect(((failed as Error).cause as ProviderError).mayLand).toBe(true);
      }
      await store.close();
    }
  });

  it('a put that failed without leaving a copy running does not say mayLand', async () => {
    const r = await makeRig({ k: 2, m: 1, n: 3, domainTimeoutMs: TIMEOUT_MS });
    rigs.push(r);
    // Two domains gone (their directories made unwritable by closing the children).
    await r.children[1]!.close();
    await r.children[2]!.close();
    const err = await r.provider.put('small', [text('x')]).then(
      () => undefined,
      (e: unknown) => e
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).code).toBe('Unavailable');
    expect((err as ProviderError).mayLand).toBe(false);
  });
});

describe('reading the anchor with more than m domains silent', () => {
  it('refuses to open rather than take an older anchor copy for the newest', async () => {
    // Domains in `dead` answer nothing (as after a crash that took them down).
    const dead = new Set<number>();
    const r = await makeRig({
      k: 2,
      m: 1,
      n: 4,
      domainTimeoutMs: TIMEOUT_MS,
      wrap: (i, p) =>
        new Proxy(p, {
          get(target, prop) {
            const v = Reflect.get(target, prop, target) as unknown;
            if (typeof v !== 'function' || prop === 'close') return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
            return (...args: unknown[]) =>
              dead.has(i) ? Promise.reject(new ProviderError('Unavailable', `d${i + 1} is down`)) : (v as (...a: unknown[]) => unknown).apply(target, args);
          },
        }),
    });
    rigs.push(r);
    const anchorCopies = async () => {
      const out: { domain: number; key: string; bytes: Uint8Array }[] = [];
      for (const [i, c] of r.children.entries()) {
        for (const e of (await c.list({ prefix: `${ANCHOR_KEY}!` })).items) {
          const parts: Uint8Array[] = [];
          for await (const b of (await c.get(e.key)).body as AsyncIterable<Uint8Array>) parts.push(b);
          out.push({ domain: i, key: e.key, bytes: Buffer.concat(parts) });
        }
      }
      return out;
    };
    const { store, put } = await openWithA(r);
    const old = (await anchorCopies())[0]!;
    await put('b', 'two');
    await store.close();
    const current = await anchorCopies();
    expect(current.map((c) => c.key)).not.toContain(old.key);
    // An older anchor copy survives on a domain the newer one never went to (its removal failed
    // while that domain was down, and the newer write was placed elsewhere).
    const holders = new Set(current.map((c) => c.domain));
    const spare = [0, 1, 2, 3].find((i) => !holders.has(i))!;
    await r.children[spare]!.put(old.key, [old.bytes]);
    await r.close();

    // Both holders of the newest anchor down: more than m = 1 domains silent.
    for (const h of holders) dead.add(h);
    const cold = await r.reopen();
    await expect(cold.get(ANCHOR_KEY, { newest: true })).rejects.toMatchObject({ code: 'Unavailable' });
    // Without `newest` the older copy answers: what opening on it would have served.
    await expect(cold.get(ANCHOR_KEY)).resolves.toBeDefined();
    await expect(Store.open(cold, { commitLog: false })).rejects.toMatchObject({ code: 'Unavailable' });
    await cold.close();

    // One holder back (m = 1 silent): the newest anchor is found, and with it every put.
    dead.delete([...holders][0]!);
    const back = await r.reopen();
    const again = await Store.open(back, { commitLog: false });
    try {
      expect(Buffer.from(await collect((await again.getObject(B, 'b')).body)).toString()).toBe('two');
    } finally {
      await again.close();
    }
  });
});
