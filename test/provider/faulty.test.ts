/** The fault-injecting wrapper: deterministic per seed, and honest about inner failures. */
import { describe, expect, it } from 'vitest';
import { createFaultyProvider, type FaultOptions } from '../../src/provider/faulty.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { ProviderError, type Provider } from '../../src/provider/provider.js';
import { bytes, expectCode, readableOf } from './helpers.js';

const MIXED: Omit<FaultOptions, 'seed'> = {
  failBefore: 0.2,
  failAfterPut: 0.2,
  truncateGet: 0.3,
  delay: 0.2,
  maxDelayMs: 3,
};

/** A fixed script of calls; returns one outcome line per call. */
async function script(p: Provider): Promise<string[]> {
  const out: string[] = [];
  const note = async (label: string, call: () => Promise<string>): Promise<void> => {
    try {
      out.push(`${label} ok ${await call()}`);
    } catch (err) {
      out.push(`${label} ${(err as ProviderError).code}`);
    }
  };
  for (let i = 0; i < 40; i++) {
    const key = `k${i % 7}`;
    await note(`put ${key}`, async () => (await p.put(key, bytes(1000 + i, i))).size.toString());
    await note(`get ${key}`, async () => {
      const res = await p.get(key);
      let n = 0;
      for await (const c of res.body as AsyncIterable<Buffer>) n += c.length;
      return String(n);
    });
    if (i % 5 === 0) await note('list', async () => String((await p.list()).items.length));
    if (i % 9 === 0) await note(`delete ${key}`, async () => (await p.delete(key), ''));
  }
  return out;
}

describe('faulty provider', () => {
  it('injects the same faults with the same outcomes for the same seed', async () => {
    const a = createFaultyProvider(await createMemoryProvider(), { seed: 7, ...MIXED });
    const b = createFaultyProvider(await createMemoryProvider(), { seed: 7, ...MIXED });
    const c = createFaultyProvider(await createMemoryProvider(), { seed: 8, ...MIXED });
    const [ra, rb, rc] = [await script(a), await script(b), await script(c)];
    expect(ra).toEqual(rb);
    expect(a.faults).toEqual(b.faults);
    expect(rc).not.toEqual(ra);
    const kinds = new Set(a.faults.map((f) => f.fault));
    expect(kinds).toEqual(new Set(['delay', 'fail-before', 'fail-after', 'truncate']));
  });

  it('fails a put before or after the inner put, and the inner state says which', async () => {
    const inner = await createMemoryProvider();
    const before = createFaultyProvider(inner, { seed: 1, failBefore: 1 });
    const body = readableOf([Buffer.from('abc')]);
    await expectCode(before.put('b', body, { contentLength: 3 }), 'Unavailable').catch(() =>
      expectCode(before.put('b', Buffer.from('x')), 'Io')
    );
    expect(body.destroyed).toBe(true);
    await expectCode(inner.head('b'), 'NotFound');

    const after = createFaultyProvider(inner, { seed: 1, failAfterPut: 1 });
    await expectCode(after.put('a', Buffer.from('applied')), 'Unavailable');
    expect((await inner.head('a')).size).toBe(7); // the ambiguous outcome: it was written
    expect(after.faults).toEqual([
      { call: 0, op: 'put', key: 'a', fault: 'fail-after', detail: 'Unavailable' },
    ]);
  });

  it('truncates a get body midway with an Io error after a prefix of the right bytes', async () => {
    const inner = await createMemoryProvider();
    const data = bytes(300_000);
    await inner.put('t', data);
    const p = createFaultyProvider(inner, { seed: 3, truncateGet: 1 });
    const res = await p.get('t');
    expect(res.length).toBe(300_000);
    const got: Buffer[] = [];
    const err = await (async () => {
      for await (const c of res.body as AsyncIterable<Buffer>) got.push(c);
    })().then(
      () => undefined,
      (e: unknown) => e
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).code).toBe('Io');
    const prefix = Buffer.concat(got);
    // The cut is part of the schedule; bytes still buffered when the error fires may be dropped.
    expect(prefix.length).toBeLessThanOrEqual(p.faults[0].detail as number);
    expect(prefix.length).toBeLessThan(300_000);
    expect(prefix.equals(data.subarray(0, prefix.length))).toBe(true);
  });

  it('never turns a failed inner call into a success', async () => {
    const inner = await createMemoryProvider();
    const p = createFaultyProvider(inner, {
      seed: 5,
      failAfterPut: 1,
      truncateGet: 1,
      delay: 1,
      maxDelayMs: 1,
    });
    await expectCode(p.put('x', Buffer.from('abc'), { ifMatch: 'nope' }), 'PreconditionFailed');
    await expectCode(p.get('missing'), 'NotFound');
    await expectCode(p.head('missing'), 'NotFound');
    await expectCode(p.put('y', Buffer.from('abc'), { contentLength: 2 }), 'LengthMismatch');
  });

  it('passes everything through while disabled, keeping the schedule', async () => {
    const p = createFaultyProvider(await createMemoryProvider(), { seed: 9, failBefore: 1 });
    p.enabled = false;
    await p.put('k', Buffer.from('v'));
    expect((await p.head('k')).size).toBe(1);
    expect(p.faults).toEqual([]);
    expect(p.kind).toBe('faulty(memory)');
  });
});
