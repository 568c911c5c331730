/**
 * A slow domain is not a dead one. Child listings that take longer than the domain timeout
 * because they are big (a busy disk: an fs child's listing time grows with the names it
 * returns) no longer fail provider.list() or the scrub census: the page is asked again,
 * smaller, after a backoff (list-page.ts). A domain that never answers is still dropped, and a
 * listing with more than m of those still fails, each within a bound; request-path lookups
 * keep one timeout per call (no retries), so reads and writes beside a slow or hanging domain
 * stay bounded by it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { getBytes, ProviderError, type ListOptions, type Provider } from '../../src/provider/provider.js';
import { LIST_BACKOFF_MS, LIST_RETRIES } from '../../src/provider/erasure/list-page.js';
import { runScrub } from '../../src/provider/erasure/scrub.js';
import type { ErasureProvider } from '../../src/provider/erasure/types.js';
import { randomBytes } from '../support/random.js';
import { expectExact, listAll, makeRig, mixedBlobs, putAll, type Blob, type Rig } from './fault-setup.js';

/** Per-call domain timeout given to the provider, ms. */
const TIMEOUT_MS = 400;
/** Listing delay of a slow child per name it returns, ms (a busy disk: an fs child opens and
 * reads every blob it lists). A domain here holds about 50 names: its whole listing takes
 * ~500 ms, over the timeout; a 16-name page 160 ms; a lookup (a name or two) 10-20 ms. */
const MS_PER_NAME = 10;
/** The longest a background listing may spend on a domain that never answers: every attempt's
 * timeout and every backoff, plus slack for a shared machine. */
const HANG_BOUND_MS = (LIST_RETRIES + 1) * TIMEOUT_MS + LIST_BACKOFF_MS * (2 ** LIST_RETRIES - 1) + 2500;

/** 'slow': MS_PER_NAME per name returned; 'late': every list call answers after twice the
 * timeout; 'never': no answer. */
type Mode = 'ok' | 'slow' | 'late' | 'never';

interface Ctl {
  mode: Mode;
  /** Limits of the walks (no prefix) and the lookups (prefix) asked of this child. */
  walks: number[];
  lookups: number[];
}

/** Wraps `inner`'s list() as `ctl.mode` says; other calls pass through. */
function lister(inner: Provider, ctl: Ctl): Provider {
  const list = inner.list.bind(inner);
  inner.list = (o: ListOptions = {}) => {
    (o.prefix ? ctl.lookups : ctl.walks).push(o.limit ?? 1000);
    if (ctl.mode === 'never') return new Promise(() => undefined);
    if (ctl.mode === 'ok') return list(o);
    return list(o).then(
      (page) =>
        new Promise((resolve, reject) => {
          const ms = ctl.mode === 'late' ? 2 * TIMEOUT_MS : MS_PER_NAME * page.items.length;
          const t = setTimeout(() => resolve(page), ms);
          o.signal?.addEventListener('abort', () => (clearTimeout(t), reject(new ProviderError('Aborted', 'list aborted'))), { once: true });
        })
    );
  };
  return inner;
}

let rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) {
    await r.close().catch(() => undefined);
    r.cleanup();
  }
  rigs = [];
});

/**
 * A (4,2) rig over `n` domains holding `count` mixed blobs, reopened (cold) with the short
 * TIMEOUT_MS: the blobs are written with the default timeout, so that a busy shared disk's
 * fsyncs do not fail the set-up.
 */
async function rigWith(n: number, count: number, seed: number): Promise<{ rig: Rig; ctls: Ctl[]; blobs: Blob[]; provider: ErasureProvider }> {
  const ctls: Ctl[] = Array.from({ length: n }, () => ({ mode: 'ok', walks: [], lookups: [] }));
  const rig = await makeRig({ k: 4, m: 2, n, cellSize: 16 * 1024, stripeThreshold: 32 * 1024, wrap: (i, p) => lister(p, ctls[i]!) });
  rigs.push(rig);
  const blobs = mixedBlobs(rig, count, seed);
  await putAll(rig.provider, blobs);
  await rig.close();
  rig.config.domainTimeoutMs = TIMEOUT_MS;
  const provider = await rig.reopen();
  for (const c of ctls) ((c.walks.length = 0), (c.lookups.length = 0));
  return { rig, ctls, blobs, provider };
}

async function timed<T>(fn: () => Promise<T>): Promise<{ out: T; ms: number }> {
  const t0 = performance.now();
  const out = await fn();
  return { out, ms: performance.now() - t0 };
}

describe('listings beside slow and hanging domains', () => {
  it('every domain slow: list() and a scrub pass complete, with smaller pages instead of failing', async () => {
    const { rig, ctls, blobs } = await rigWith(6, 60, 3);
    const keys = blobs.map((b) => b.key).sort();
    for (const c of ctls) c.mode = 'slow';

    const page = await rig.provider.list();
    expect(page.next).toBeUndefined();
    const items = page.items;
    expect(items.map((i) => i.key)).toEqual(keys);
    for (const c of ctls) {
      // The full page timed out, then a smaller one answered.
      expect(c.walks[0]).toBe(1000);
      expect(Math.min(...c.walks)).toBeLessThan(1000);
    }
    const sizes = new Map(items.map((i) => [i.key, i.size]));
    for (const b of blobs) expect(sizes.get(b.key), b.key).toBe(b.body.length);

    const r = await runScrub(rig.provider);
    expect(r.complete).toBe(true);
    expect(r.blobs).toBe(blobs.length);
    expect(r.damagedBlobs).toBe(0);
    expect(r.errorCount).toBe(0);
    expect(r.lostCount).toBe(0);
    await expectExact(rig.provider, blobs.filter((_, i) => i % 4 === 0), 'after listing slow domains');
  }, 60_000);

  it('m domains that never answer are dropped within a bound; m + 1 fail the listing within it', async () => {
    const { rig, ctls, blobs } = await rigWith(6, 12, 4);
    const keys = blobs.map((b) => b.key).sort();
    ctls[0]!.mode = 'never';
    ctls[3]!.mode = 'never';
    const first = await timed(() => listAll(rig.provider));
    expect(first.out).toEqual(keys);
    expect(first.ms).toBeLessThan(HANG_BOUND_MS);
    expect(ctls[0]!.walks.length).toBe(LIST_RETRIES + 1);
    // Known down now (within its cooldown): the next listing gives it one attempt, not three.
    ctls[0]!.walks.length = 0;
    const second = await timed(() => listAll(rig.provider));
    expect(second.out).toEqual(keys);
    expect(ctls[0]!.walks.length).toBe(1);
    expect(second.ms).toBeLessThan(TIMEOUT_MS + 2500);

    ctls[5]!.mode = 'never';
    const t0 = performance.now();
    const err = await listAll(rig.provider).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).code).toBe('Unavailable');
    expect((err as Error).message).toMatch(/3 domains did not answer \(at most 2 may be down\)/);
    expect(performance.now() - t0).toBeLessThan(HANG_BOUND_MS);
    for (const c of ctls) c.mode = 'ok';
  }, 60_000);

  it('request-path lookups keep one timeout: reads and writes beside a late domain stay bounded', async () => {
    // (4,2) over 7: a write has a spare domain for the one that does not answer in time.
    const { ctls, blobs, provider } = await rigWith(7, 10, 6); // cold: every read looks its blob up
    ctls[1]!.mode = 'late';
    for (const b of blobs) {
      const before = ctls[1]!.lookups.length;
      const { out, ms } = await timed(() => getBytes(provider, b.key));
      expect(Buffer.compare(Buffer.from(out), Buffer.from(b.body)), b.key).toBe(0);
      expect(ms, `GET ${b.key}`).toBeLessThan(TIMEOUT_MS + 2500);
      // One lookup call at most on the late domain per read: no retry on the request path.
      expect(ctls[1]!.lookups.length - before).toBeLessThanOrEqual(1);
    }
    const fresh = { key: 'fresh/striped', body: randomBytes(5 * 16 * 1024 + 5, 9) };
    const put = await timed(() => provider.put(fresh.key, fresh.body));
    expect(put.ms).toBeLessThan(TIMEOUT_MS + 2500);
    ctls[1]!.mode = 'ok';
    await expectExact(provider, [...blobs, fresh], 'after the late domain');
  }, 60_000);
});
