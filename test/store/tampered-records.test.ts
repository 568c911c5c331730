/**
 * A version record that does not describe its body — chunks that hold fewer bytes than the
 * object (a chunk dropped from the list), a packed entry shorter than the object, a body
 * missing altogether, a chunk with a zero segment size — fails the read before any byte,
 * encrypted or not. Regression: the reader served what the chunks held and ended the
 * stream quietly, so a GET answered 200 with a Content-Length it never sent (the client
 * waited for the rest) and a copy could store a truncated object.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { StoreError } from '../../src/store/errors.js';
import { encodeVersions, type ObjectVersion } from '../../src/store/records.js';
import type { EncryptionRequest } from '../../src/store/crypto/envelope.js';
import { randomBytes } from '../support/random.js';
import { collect, makeProvider, stream } from './helpers.js';

const MIB = 1024 * 1024;
const ROOT = Buffer.from(randomBytes(32, 301));
const MODES: [string, EncryptionRequest | undefined][] = [
  ['plain', undefined],
  ['SSE-S3', { mode: 'sse-s3', root: ROOT }],
  ['SSE-C', { mode: 'sse-c', root: Buffer.from(randomBytes(32, 302)) }],
];

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function open(): Promise<Store> {
  const p = await makeProvider('memory');
  cleanups.push(p.cleanup);
  const store = await Store.open(p.provider);
  await store.createBucket('bkt');
  return store;
}

/** Replaces the stored record of bkt/`key` with `edit(version)`, as a repository edit would. */
async function tamper(store: Store, key: string, edit: (v: ObjectVersion) => ObjectVersion): Promise<void> {
  const v = await store.version('bkt', key);
  await store.repo.run(async (tx) => {
    tx.put('bkt', key, encodeVersions([edit(v)]));
  });
}

/** Reads bkt/`key` to the end; returns the error code, or 'served N bytes' if none. */
async function readOutcome(store: Store, key: string, enc: EncryptionRequest | undefined): Promise<string> {
  const keys = enc ? (enc.mode === 'sse-c' ? { customer: enc.root } : { sseS3: enc.root }) : undefined;
  const got: Uint8Array[] = [];
  try {
    const g = await store.getObject('bkt', key, keys ? { keys } : {});
    for await (const c of g.body) got.push(c);
  } catch (err) {
    if (!(err instanceof StoreError)) throw err;
    // Nothing of the body was served before the failure was found.
    expect(got.length, `${key}: bytes served before the error`).toBe(0);
    return err.code;
  }
  return `served ${Buffer.concat(got).length} bytes`;
}

describe('a record that does not describe its body fails the read before any byte', () => {
  for (const [mode, enc] of MODES) {
    it(`${mode}: a carrier with its last chunk dropped from the record (size kept)`, async () => {
      const store = await open();
      const body = randomBytes(9 * MIB, 303); // two chunks of 8 MiB and 1 MiB
      await store.putObject('bkt', 'big', stream(body), { size: body.length, ...(enc ? { encryption: enc } : {}) });
      await tamper(store, 'big', (v) => {
        if (v.location.kind !== 'chunks' || v.location.chunks.length !== 2) throw new Error('expected two chunks');
        return { ...v, location: { kind: 'chunks', chunks: v.location.chunks.slice(0, 1) } };
      });
      expect(await readOutcome(store, 'big', enc)).toBe('Corrupt');
      await store.close();
    });

    it(`${mode}: a body record that lost its location, and a chunk with a zero segment size`, async () => {
      const store = await open();
      const body = randomBytes(600 * 1024, 304);
      await store.putObject('bkt', 'b', stream(body), { size: body.length, ...(enc ? { encryption: enc } : {}) });
      await store.putObject('bkt', 'c', stream(body), { size: body.length, ...(enc ? { encryption: enc } : {}) });
      await tamper(store, 'b', (v) => ({ ...v, location: { kind: 'empty' } }));
      expect(await readOutcome(store, 'b', enc)).toBe('Corrupt');
      await tamper(store, 'c', (v) => {
        if (v.location.kind !== 'chunks') throw new Error('expected a carrier');
        return { ...v, location: { kind: 'chunks', chunks: v.location.chunks.map((c) => ({ ...c, segment: 0 })) } };
      });
      expect(await readOutcome(store, 'c', enc)).toBe('Corrupt');
      await store.close();
    });
  }

  it('plain: a packed object whose record claims more bytes than its entry holds', async () => {
    const store = await open();
    const body = randomBytes(1000, 305);
    await store.putObject('bkt', 'small', stream(body), { size: body.length });
    await tamper(store, 'small', (v) => ({ ...v, size: v.size + 10 }));
    expect(await readOutcome(store, 'small', undefined)).toBe('Corrupt');
    await store.close();
  });

  it('control: untampered objects of every mode read back whole', async () => {
    const store = await open();
    const body = randomBytes(9 * MIB, 306);
    for (const [mode, enc] of MODES) {
      await store.putObject('bkt', mode, stream(body), { size: body.length, ...(enc ? { encryption: enc } : {}) });
      expect(await readOutcome(store, mode, enc)).toBe(`served ${body.length} bytes`);
    }
    const g = await store.getObject('bkt', 'plain');
    expect(Buffer.from(await collect(g.body)).equals(Buffer.from(body))).toBe(true);
    await store.close();
  });
});
