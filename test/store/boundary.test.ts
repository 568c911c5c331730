/**
 * The store's error boundary (src/store/boundary.ts): a provider failure reaches the Store
 * API's callers as a StoreError ('Unavailable' when the provider says a retry may help, 'Io'
 * otherwise) with the ProviderError as its cause — from a method that rejects, from one that
 * throws synchronously, and from a GET body that fails mid-stream — and the S3 layer maps
 * those to 503 / 500 without the backend's message. Errors that are not the provider's pass
 * unchanged.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { ProviderError, type Provider, type ProviderErrorCode } from '../../src/provider/provider.js';
import { Store } from '../../src/store/store.js';
import { StoreError } from '../../src/store/errors.js';
import { guardMethods, storeErrorOf } from '../../src/store/boundary.js';
import { s3ErrorOf } from '../../src/s3/store-errors.js';
import { S3Error } from '../../src/s3/errors.js';
import { collect, stream } from './helpers.js';

/** Passes calls through until `failGets` is set: then every get() fails with that code. */
class FailingReads implements Provider {
  readonly kind = 'failing-reads';
  failGets: ProviderErrorCode | undefined;
  /** Gets that still succeed before failing (a body that breaks mid-stream). */
  getsLeft = 0;
  constructor(readonly inner: Provider) {}
  get capabilities() {
    return this.inner.capabilities;
  }
  put = (...a: Parameters<Provider['put']>) => this.inner.put(...a);
  async get(...[key, o]: Parameters<Provider['get']>) {
    if (this.failGets && this.getsLeft-- <= 0) throw new ProviderError(this.failGets, `backend detail: /secret/path/${key}`);
    return this.inner.get(key, o);
  }
  head = (key: string) => this.inner.head(key);
  list = (o?: Parameters<Provider['list']>[0]) => this.inner.list(o);
  delete = (key: string) => this.inner.delete(key);
  close = async () => undefined;
}

async function storeWith(size: number) {
  const p = new FailingReads(await createMemoryProvider());
  const first = await Store.open(p, { retentionMs: 0 });
  await first.createBucket('bkt');
  const data = new Uint8Array(size).map((_, i) => i % 251);
  await first.putObject('bkt', 'k', stream(data), { size: data.length });
  await first.close();
  // A fresh store: nothing cached, every body read goes to the provider.
  return { p, store: await Store.open(p, { retentionMs: 0 }), data };
}

describe('the store error boundary', () => {
  for (const [code, want, s3] of [
    ['Unavailable', 'Unavailable', 'ServiceUnavailable'],
    ['Io', 'Io', 'InternalError'],
  ] as const) {
    it(`a ProviderError ${code} from a GET becomes StoreError ${want} (S3 ${s3}, message hidden)`, async () => {
      const { p, store } = await storeWith(4096);
      try {
        p.failGets = code;
        let err: unknown;
        try {
          await collect((await store.getObject('bkt', 'k')).body);
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(StoreError);
        expect((err as StoreError).code).toBe(want);
        expect((err as StoreError).cause).toBeInstanceOf(ProviderError);
        const wire = s3ErrorOf(err);
        expect(wire.code).toBe(s3);
        expect(wire.message).not.toContain('secret');
      } finally {
        p.failGets = undefined;
        await store.close();
      }
    });
  }

  it('a body that fails mid-stream fails with a StoreError, after the bytes before it', async () => {
    const { p, store, data } = await storeWith(20 * 1024 * 1024);
    try {
      const g = await store.getObject('bkt', 'k');
      p.failGets = 'Unavailable';
      p.getsLeft = 1;
      let got = 0;
      let failure: unknown;
      try {
        for await (const chunk of g.body) {
          expect(Buffer.from(chunk).equals(Buffer.from(data.subarray(got, got + chunk.length)))).toBe(true);
          got += chunk.length;
        }
      } catch (e) {
        failure = e;
      }
      expect(failure).toBeInstanceOf(StoreError);
      expect((failure as StoreError).code).toBe('Unavailable');
      expect(got).toBeLessThan(data.length);
    } finally {
      p.failGets = undefined;
      await store.close();
    }
  });

  it('whole reads still work through the guard', async () => {
    const { store, data } = await storeWith(3 * 1024 * 1024 + 7);
    try {
      const g = await store.getObject('bkt', 'k');
      expect(Buffer.from(await collect(g.body)).equals(Buffer.from(data))).toBe(true);
      await expect(store.getObject('bkt', 'missing')).rejects.toMatchObject({ code: 'NoSuchKey' });
    } finally {
      await store.close();
    }
  });

  it('guards synchronous throws and leaves other errors alone', () => {
    class Thing {
      sync(kind: string): number {
        if (kind === 'provider') throw new ProviderError('Unavailable', 'x');
        if (kind === 's3') throw new S3Error('AccessDenied');
        return 1;
      }
      async later(kind: string): Promise<number> {
        return this.sync(kind);
      }
      get accessor(): number {
        return 2;
      }
    }
    guardMethods(Thing.prototype);
    const t = new Thing();
    expect(t.sync('ok')).toBe(1);
    expect(t.accessor).toBe(2);
    expect(() => t.sync('provider')).toThrow(StoreError);
    expect(() => t.sync('s3')).toThrow(S3Error);
    return Promise.all([
      expect(t.later('provider')).rejects.toMatchObject({ code: 'Unavailable' }),
      expect(t.later('s3')).rejects.toBeInstanceOf(S3Error),
      expect(t.later('ok')).resolves.toBe(1),
    ]);
  });

  it('storeErrorOf maps retryable and not', () => {
    expect((storeErrorOf(new ProviderError('Unavailable', 'u')) as StoreError).code).toBe('Unavailable');
    expect((storeErrorOf(new ProviderError('NotFound', 'n')) as StoreError).code).toBe('Io');
    expect((storeErrorOf(new ProviderError('Io', 'i', { retryable: true })) as StoreError).code).toBe('Unavailable');
    const plain = new Error('plain');
    expect(storeErrorOf(plain)).toBe(plain);
  });
});
