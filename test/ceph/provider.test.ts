/**
 * The s3 provider on a real Ceph RADOS Gateway (16.2): what the probe finds; the whole
 * provider contract (conditional writes enforced, a multipart-uploaded unsized body; only
 * keys with control characters left out); multipart uploads that fail and leave no upload
 * behind; and two repositories racing the anchor: in every round exactly one writer's
 * commit lands, the other fences (after a clean 412 or after reading back an ambiguous
 * 500), and what the loser was refused never appears.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3';
import { createS3Provider, DEFAULT_PART_BYTES, type S3Provider } from '../../src/provider/s3/index.js';
import { ProviderError } from '../../src/provider/provider.js';
import { Store } from '../../src/store/store.js';
import { StoreError } from '../../src/store/errors.js';
import { runProviderContract } from '../provider/contract.js';
import { expectCode, readAll } from '../provider/helpers.js';
import { CEPH_START_TIMEOUT_MS, cephSuite, startCeph, type RunningCeph } from '../support/ceph.js';

let ceph: RunningCeph | undefined;
const opened: S3Provider[] = [];
let namespace = 0;

async function rgwProvider(prefix: string, extra: { partBytes?: number } = {}): Promise<S3Provider> {
  if (!ceph) throw new Error('no cluster');
  const p = await createS3Provider({
    endpoint: ceph.endpoint,
    bucket: ceph.bucket,
    prefix,
    accessKeyId: ceph.accessKeyId,
    secretAccessKey: ceph.secretAccessKey,
    conditionalWrites: 'probe',
    retry: { attempts: 3, baseDelayMs: 20 },
    ...extra,
  });
  opened.push(p);
  return p;
}

async function* once(b: Uint8Array): AsyncGenerator<Uint8Array> {
  yield b;
}

async function bodyOf(store: Store, bucket: string, key: string): Promise<string> {
  const parts: Uint8Array[] = [];
  for await (const c of (await store.getObject(bucket, key)).body) parts.push(c);
  return Buffer.concat(parts).toString();
}

cephSuite.describe('s3 provider on Ceph RGW', () => {
  beforeAll(async () => {
    ceph = await startCeph();
  }, CEPH_START_TIMEOUT_MS);
  afterAll(async () => {
    for (const p of opened) await p.close().catch(() => {});
    await ceph?.stop();
  }, 120_000);

  it('probes: conditional writes enforced, If-Match sent bare and compared by prefix', async () => {
    const p = await rgwProvider('probe/');
    const result = await p.probeCapabilities();
    expect(result).toEqual({
      conditionalWrites: true,
      ifMatch: { quoted: false, prefixCompare: true },
    });
    expect(p.capabilities.conditionalWrites).toBe(true);
    expect((await p.list()).items).toEqual([]); // the probe cleaned up
  });

  it('without a probe, the quoted If-Match form is refused by RGW; the asserted RGW form works', async () => {
    const base = {
      endpoint: ceph!.endpoint,
      bucket: ceph!.bucket,
      prefix: 'asserted/',
      accessKeyId: ceph!.accessKeyId,
      secretAccessKey: ceph!.secretAccessKey,
      conditionalWrites: true,
    } as const;
    const quoted = await createS3Provider(base);
    const rgw = await createS3Provider({ ...base, ifMatchForm: { quoted: false, prefixCompare: true } });
    opened.push(quoted, rgw);
    const first = await rgw.put('cas', Buffer.from('v0'), { ifNoneMatch: '*' });
    await expectCode(quoted.put('cas', Buffer.from('v1'), { ifMatch: first.etag }), 'PreconditionFailed');
    const second = await rgw.put('cas', Buffer.from('v1'), { ifMatch: first.etag });
    await expectCode(rgw.put('cas', Buffer.from('v2'), { ifMatch: first.etag }), 'PreconditionFailed');
    expect((await readAll(rgw, 'cas')).toString()).toBe('v1');
    expect(second.etag).not.toBe(first.etag);
  });

  runProviderContract({
    name: 's3 (Ceph RGW)',
    create: () => rgwProvider(`ns${String(++namespace).padStart(3, '0')}/`),
    etagPerWrite: false,
    quirks: { noControlKeys: 'RGW 16.2 answers 400 to keys with control characters' },
    maxKeyBytes: 1018, // RGW enforces S3's 1024 bytes on the whole key, namespace included
    unsizedBufferBytes: DEFAULT_PART_BYTES,
  });

  it('a stream failing in its third part aborts the upload: no blob, no incomplete upload', async () => {
    const p = await rgwProvider('mpfail/', { partBytes: 5 * 1024 * 1024 });
    async function* failing(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 11; i++) yield Buffer.alloc(1024 * 1024, i);
      throw new Error('source broke');
    }
    const err = await p.put('broken', failing()).then(
      () => undefined,
      (e: unknown) => e
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).code).toBe('Io');
    await expectCode(p.head('broken'), 'NotFound');
    const sdk = new S3Client({
      endpoint: ceph!.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: ceph!.accessKeyId, secretAccessKey: ceph!.secretAccessKey },
    });
    try {
      const uploads = await sdk.send(
        new ListMultipartUploadsCommand({ Bucket: ceph!.bucket, Prefix: 'mpfail/' })
      );
      expect(uploads.Uploads ?? []).toEqual([]);
    } finally {
      sdk.destroy();
    }
  });

  it('refuses a multipart create over an existing key and never replaces by multipart', async () => {
    const p = await rgwProvider('mpcond/', { partBytes: 5 * 1024 * 1024 });
    const big = (n: number) => Buffer.alloc(6 * 1024 * 1024, n);
    async function* stream(b: Buffer): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < b.length; i += 1024 * 1024) yield b.subarray(i, i + 1024 * 1024);
    }
    const first = await p.put('k', stream(big(1)), { ifNoneMatch: '*' });
    expect(first.size).toBe(big(1).length);
    expect(first.etag).toMatch(/-2$/); // two parts
    await expectCode(p.put('k', stream(big(2)), { ifNoneMatch: '*' }), 'PreconditionFailed');
    await expectCode(p.put('k', stream(big(3)), { ifMatch: first.etag }), 'LengthMismatch');
    // A multipart etag is not 32 hex digits: checked by HEAD first, then sent.
    const small = await p.put('k', Buffer.from('small'), { ifMatch: first.etag });
    expect((await readAll(p, 'k')).toString()).toBe('small');
    await expectCode(p.put('k', Buffer.from('x'), { ifMatch: first.etag }), 'PreconditionFailed');
    expect(small.etag).toMatch(/^[0-9a-f]{32}$/);
  });

  it('two repositories racing the anchor: one commit lands per round, the other fences', async () => {
    const prefix = 'race/';
    const setup = await Store.open(await rgwProvider(prefix));
    await setup.createBucket('bkt');
    await setup.close();
    const ROUNDS = 10;
    let fenced = 0;
    let ambiguous = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const a = await Store.open(await rgwProvider(prefix));
      const b = await Store.open(await rgwProvider(prefix));
      const results = await Promise.allSettled([
        a.putObject('bkt', `r${round}/a`, once(Buffer.from(`a${round}`)), { size: 1 + String(round).length }),
        b.putObject('bkt', `r${round}/b`, once(Buffer.from(`b${round}`)), { size: 1 + String(round).length }),
      ]);
      const won = results.map((r) => r.status === 'fulfilled');
      // Exactly one: they started from the same anchor, so one of them must have lost, and
      // the loser's failure must not take the winner down with it.
      expect(won.filter(Boolean).length).toBe(1);
      for (const r of results) {
        if (r.status === 'rejected') {
          expect(r.reason).toBeInstanceOf(StoreError);
          expect((r.reason as StoreError).code).toBe('Unsafe');
          // The provider's verdict: a clean refusal (412), or RGW's 500 for a lost If-Match
          // race, which must come up as an unknown outcome that the repository read back.
          const cause = (r.reason as StoreError).cause;
          expect(cause).toBeInstanceOf(ProviderError);
          expect(['PreconditionFailed', 'Unavailable']).toContain((cause as ProviderError).code);
          if ((cause as ProviderError).code === 'Unavailable') ambiguous++;
          fenced++;
        }
      }
      await a.close().catch(() => {});
      await b.close().catch(() => {});
      const check = await Store.open(await rgwProvider(prefix));
      for (const [i, who] of (['a', 'b'] as const).entries()) {
        const key = `r${round}/${who}`;
        if (won[i]) expect(await bodyOf(check, 'bkt', key)).toBe(`${who}${round}`);
        else await expect(check.getObject('bkt', key)).rejects.toMatchObject({ code: 'NoSuchKey' });
      }
      await check.close();
    }
    expect(fenced).toBe(ROUNDS);
    console.log(`anchor races: ${ROUNDS} rounds, ${ambiguous} lost with an ambiguous 500`);
  });
});
