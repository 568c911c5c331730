/**
 * An unconditional write to an S3 backend that reached it and went unanswered (the connection
 * dropped after the body went out, a timeout) may still be applied by the server afterwards,
 * after the client gave up and after whatever it wrote next. The s3 provider says so
 * (ProviderError.mayLand), and a repository whose anchor write fails that way fences instead of
 * trusting a read-back: on a backend without conditional writes (singleWriter) a late anchor
 * would otherwise overwrite the newer anchor of a commit acknowledged after it, and that commit
 * would be gone at the next open.
 *
 * A guarded (If-Match) anchor write applied late takes effect only if the anchor did not move
 * in between; the next compare-and-swap then fences. What the late commit names must still be
 * there: the put's chunks are left to GC instead of being deleted as the failure's garbage.
 *
 * The backend is s3rver (no conditional writes) or a second Strata server (conditional writes)
 * behind the fault proxy; its `late` fault takes a whole request, drops the connection, and
 * sends the request on to the backend later.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/provider/provider.js';
import { createS3Provider, type S3Provider } from '../../src/provider/s3/index.js';
import { ANCHOR_KEY } from '../../src/store/layout.js';
import { Store } from '../../src/store/store.js';
import { runGc } from '../../src/store/gc.js';
import { verifyRepository } from '../../src/store/verify.js';
import { collect, stream } from '../store/helpers.js';
import { readAll } from './helpers.js';
import { startFlakyProxy, type FlakyProxy } from './flaky-proxy.js';
import { ACCESS_KEY, SECRET_KEY, startTestServer } from '../integration/harness.js';
import { signRequest } from '../../src/sigv4/sign.js';
import { randomBytes } from 'node:crypto';
import { S3RVER_BUCKET, S3RVER_CREDENTIALS, startS3rver, type RunningS3rver } from './s3rver.js';

let server: RunningS3rver;
let proxy: FlakyProxy;
const opened: S3Provider[] = [];
let prefixes = 0;

beforeAll(async () => {
  server = await startS3rver();
  proxy = await startFlakyProxy(server.endpoint);
});
afterAll(async () => {
  await proxy?.close();
  await server?.stop();
});
beforeEach(() => {
  proxy.requests.length = 0;
  proxy.faults.length = 0;
  proxy.rule = undefined;
});
afterEach(async () => {
  for (const p of opened.splice(0)) await p.close().catch(() => {});
});

async function provider(endpoint: string, prefix: string, attempts = 2): Promise<S3Provider> {
  const p = await createS3Provider({
    endpoint,
    bucket: S3RVER_BUCKET,
    prefix,
    ...S3RVER_CREDENTIALS,
    retry: { attempts, baseDelayMs: 20, maxDelayMs: 100 },
  });
  opened.push(p);
  return p;
}

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

const text = (s: string) => new TextEncoder().encode(s);

/** Makes the next PUT whose path ends with `suffix` late (proxied after its connection drops), once. */
function lateOnce(px: FlakyProxy, suffix: string): void {
  let armed = true;
  px.rule = (method, url) => {
    if (!armed || method !== 'PUT' || !url.split('?')[0]!.endsWith(suffix)) return undefined;
    armed = false;
    return 'late';
  };
}

/** Waits until `px` has sent on `n` late requests in all and none is pending. */
async function landed(px: FlakyProxy, n: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((px.landed < n || px.pendingLate > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(px.landed).toBe(n);
}

describe('the s3 provider marks a write that may still be applied (mayLand)', () => {
  it('an unconditional put or delete that reached the server unanswered or answered with a server error, on any attempt', async () => {
    const p = await provider(proxy.endpoint, `late-${prefixes++}/`);
    proxy.faults.push('reset-after-body', 'reset-after-body');
    const put = await failure(p.put('a', [text('one')]));
    expect(put.code).toBe('Unavailable');
    expect(put.mayLand).toBe(true);

    // The retry was answered (503 SlowDown: not applied), but the first attempt may still be.
    proxy.faults.push('reset-after-body', 'slowdown');
    expect((await failure(p.put('a', [text('one')]))).mayLand).toBe(true);

    // A 500 does not say the write was not applied, nor that it will not be (a gateway's 504
    // may come while its backend still works on the request).
    proxy.faults.push('internal', 'internal');
    expect((await failure(p.put('a', [text('one')]))).mayLand).toBe(true);

    proxy.faults.push('reset-after-body', 'reset-after-body');
    const del = await failure(p.delete('a'));
    expect(del.mayLand).toBe(true);
    expect(proxy.requests.map((r) => r.method)).toEqual(['PUT', 'PUT', 'PUT', 'PUT', 'PUT', 'PUT', 'DELETE', 'DELETE']);
  });

  it('a replace (PutOptions.replaces) is not retried once an attempt may have been received, only when it surely was not', async () => {
    const p = await provider(proxy.endpoint, `late-${prefixes++}/`);
    proxy.faults.push('reset-after-body');
    const err = await failure(p.put('anchor', [text('one')], { replaces: true }));
    expect(err.mayLand).toBe(true);
    expect(proxy.requests).toHaveLength(1);
    // Throttled: not applied, so retried.
    proxy.faults.push('slowdown');
    await p.put('anchor', [text('two')], { replaces: true });
    expect(proxy.requests).toHaveLength(3);
    // Without `replaces` the same fault is retried (the blob's bytes are the same either way).
    proxy.faults.push('reset-after-body');
    await p.put('blob', [text('three')]);
    expect(proxy.requests).toHaveLength(5);
    expect((await readAll(p, 'anchor')).toString()).toBe('two');
  });

  it('not a write refused as throttled every time, a guarded write, a read, or a request never sent', async () => {
    const p = await provider(proxy.endpoint, `late-${prefixes++}/`);
    proxy.faults.push('slowdown', 'throttle');
    const answered = await failure(p.put('a', [text('one')]));
    expect(answered.code).toBe('Unavailable');
    expect(answered.mayLand).toBe(false);

    // If-None-Match: applied late, it takes effect only where nothing was written since.
    proxy.faults.push('reset-after-body');
    const guarded = await failure(p.put('b', [text('two')], { ifNoneMatch: '*' }));
    expect(guarded.message).toMatch(/outcome unknown/);
    expect(guarded.mayLand).toBe(false);

    await p.put('c', [text('three')]);
    proxy.faults.push('reset', 'reset');
    const read = await failure(p.get('c'));
    expect(read.code).toBe('Unavailable');
    expect(read.mayLand).toBe(false);

    // Nothing listens there: the connection is refused, so the request never left.
    const closed = await startFlakyProxy(server.endpoint);
    const endpoint = closed.endpoint;
    await closed.close();
    const refused = await failure((await provider(endpoint, `late-${prefixes++}/`)).put('d', [text('four')]));
    expect(refused.message).toMatch(/ECONNREFUSED/);
    expect(refused.mayLand).toBe(false);
  });
});

describe('a repository on a backend without conditional writes (singleWriter)', () => {
  // Before the mark (mayLand), the read-back said "did not move" and the next put was
  // acknowledged, then lost when the late anchor landed; before `replaces`, the retry succeeded
  // and the same happened one put later.
  it('fences on an anchor write that may land late, even one whose retry would succeed, so nothing acknowledged after it is overwritten', async () => {
    const prefix = `late-${prefixes++}/`;
    const p = await provider(proxy.endpoint, prefix);
    const store = await Store.open(p, { singleWriter: true });
    const B = 'retry';
    await store.createBucket(B);
    const put = (key: string, body: string) => store.putObject(B, key, stream(text(body)), { size: text(body).length });
    await put('a', 'one');

    // Only the next anchor PUT is delayed: a retry of it would go through at once.
    proxy.lateMs = 1500;
    const landedBefore = proxy.landed;
    lateOnce(proxy, `/${prefix}${ANCHOR_KEY}`);
    const failed = await put('b', 'two').then(
      () => undefined,
      (e: unknown) => e
    );
    expect(failed).toMatchObject({ code: 'Unsafe' });
    expect((failed as Error).message).toMatch(/may still land/);
    // Fenced: nothing is acknowledged that the late anchor could overwrite.
    await expect(put('c', 'three')).rejects.toMatchObject({ code: 'Unsafe' });
    await landed(proxy, landedBefore + 1);
    await store.close();

    // Reopened straight on s3rver after the late anchor landed: consistent, with what was
    // acknowledged; the failed write may be there (its anchor landed), nothing after it is.
    const direct = await provider(server.endpoint, prefix);
    expect((await verifyRepository(direct)).problems).toEqual([]);
    const again = await Store.open(direct, { singleWriter: true });
    try {
      expect(Buffer.from(await collect((await again.getObject(B, 'a')).body)).toString()).toBe('one');
      await expect(again.getObject(B, 'c')).rejects.toMatchObject({ code: 'NoSuchKey' });
    } finally {
      await again.close();
    }
  });
});

describe('a repository on a backend with conditional writes (a second Strata server)', () => {
  it('keeps the chunks of a put whose guarded anchor write read back as not moved and then landed', async () => {
    const backend = await startTestServer();
    const front = await startFlakyProxy(backend.url);
    try {
      const host = new URL(backend.url).host;
      const signed = signRequest(
        { method: 'PUT', path: '/repo', headers: { host } },
        { credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, region: 'us-east-1', service: 's3' }
      );
      expect((await fetch(`${backend.url}/repo`, { method: 'PUT', headers: { ...signed.headers } })).status).toBe(200);
      const open = async (endpoint: string) => {
        const p = await createS3Provider({
          endpoint,
          bucket: 'repo',
          prefix: 'r/',
          accessKeyId: ACCESS_KEY,
          secretAccessKey: SECRET_KEY,
          conditionalWrites: 'probe',
          retry: { attempts: 2, baseDelayMs: 20, maxDelayMs: 100 },
        });
        opened.push(p);
        return p;
      };
      const p = await open(front.endpoint);
      expect(p.capabilities.conditionalWrites).toBe(true);
      const store = await Store.open(p);
      const B = 'guarded';
      await store.createBucket(B);
      // Above the packing threshold, so the body goes to chunk blobs of its own.
      const big = randomBytes(1024 * 1024 + 17);
      const putBig = () => store.putObject(B, 'big', stream(big), { size: big.length });
      await store.putObject(B, 'a', stream(text('one')), { size: 3 });

      // The late anchor PUT reaches the backend only once the put has failed, however slow
      // the read-back on a loaded machine.
      let release!: () => void;
      front.lateGate = new Promise<void>((r) => (release = r));
      lateOnce(front, `/r/${ANCHOR_KEY}`);
      // The conditional PUT is not retried (outcome unknown); the read-back finds the anchor
      // where it was: 'Io', the anchor did not move.
      await expect(putBig()).rejects.toMatchObject({ code: 'Io', mayCommit: true });
      // GC at grace 0 meanwhile frees nothing: the put's chunks stay protected until the
      // anchor moves again (AnchorMover.closeTicket), since the late write may still land.
      // (Two passes: the first notes what it finds unreachable, the next may free it; and the
      // chunks' modification times, in whole seconds from the backend, must be past too.)
      await new Promise((r) => setTimeout(r, 2100));
      for (let pass = 0; pass < 2; pass++) expect((await runGc(store.repo, { graceMs: 0, cleanBelow: 0 })).freedBlobs).toBe(0);
      release();
      await landed(front, 1);
      // The late write took effect (If-Match still held): the next move finds the anchor moved.
      await expect(store.putObject(B, 'c', stream(text('three')), { size: 5 })).rejects.toMatchObject({ code: 'Unsafe' });
      await store.close();

      // Reopened straight on the backend: the late commit is there, with every chunk it names.
      const direct = await open(backend.url);
      expect((await verifyRepository(direct)).problems).toEqual([]);
      const again = await Store.open(direct);
      try {
        expect(Buffer.from(await collect((await again.getObject(B, 'a')).body)).toString()).toBe('one');
        expect(Buffer.from(await collect((await again.getObject(B, 'big')).body)).equals(big)).toBe(true);
      } finally {
        await again.close();
      }
    } finally {
      await front.close();
      await backend.stop();
    }
  });
});
