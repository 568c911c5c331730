/**
 * The s3 provider on the wire: retries with backoff against injected faults, the
 * retry budget surfacing as 'Unavailable', ambiguous conditional writes never being
 * retried, and every request's SigV4 signature re-verified independently.
 *
 * s3rver checks the form of the Authorization header, the access key and the clock
 * skew, but does not recompute SigV4 signatures; so the proxy records what went on
 * the wire and @smithy/signature-v4 (the AWS SDK's signer) re-signs it to compare.
 */
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { SourceData } from '@smithy/types';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createS3Provider,
  type RetryEvent,
  type S3Provider,
  type S3ProviderOptions,
} from '../../src/provider/s3/index.js';
import { parseAmzDate } from '../../src/sigv4/index.js';
import { startFlakyProxy, type FlakyProxy } from './flaky-proxy.js';
import { expectCode, readableOf, readAll } from './helpers.js';
import { S3RVER_BUCKET, S3RVER_CREDENTIALS, startS3rver, type RunningS3rver } from './s3rver.js';

let server: RunningS3rver;
let proxy: FlakyProxy;
const opened: S3Provider[] = [];

beforeAll(async () => {
  server = await startS3rver();
  proxy = await startFlakyProxy(server.endpoint);
});
afterAll(async () => {
  for (const p of opened) await p.close().catch(() => {});
  await proxy?.close();
  await server?.stop();
});
beforeEach(() => {
  proxy.requests.length = 0;
  proxy.faults.length = 0;
});

const BASE_DELAY_MS = 40;

async function viaProxy(
  events: RetryEvent[] = [],
  extra: Partial<S3ProviderOptions> = {}
): Promise<S3Provider> {
  const p = await createS3Provider({
    endpoint: proxy.endpoint,
    bucket: S3RVER_BUCKET,
    prefix: 'wire/',
    ...S3RVER_CREDENTIALS,
    retry: { attempts: 4, baseDelayMs: BASE_DELAY_MS, maxDelayMs: 1000 },
    onRetry: (e) => events.push(e),
    ...extra,
  });
  opened.push(p);
  return p;
}

describe('retries', () => {
  it('retries 503 SlowDown twice with growing backoff, then succeeds', async () => {
    const events: RetryEvent[] = [];
    const p = await viaProxy(events);
    proxy.faults.push('slowdown', 'slowdown');
    const started = Date.now();
    await p.put('k', Buffer.from('hello'));
    const elapsed = Date.now() - started;
    expect(proxy.requests.map((r) => r.fault)).toEqual(['slowdown', 'slowdown', undefined]);
    expect(events.map((e) => e.attempt)).toEqual([1, 2]);
    // Equal jitter: retry n waits at least half of base·2^(n-1).
    expect(events[0].delayMs).toBeGreaterThanOrEqual(BASE_DELAY_MS / 2);
    expect(events[1].delayMs).toBeGreaterThanOrEqual(BASE_DELAY_MS);
    expect(elapsed).toBeGreaterThanOrEqual(events[0].delayMs + events[1].delayMs - 5);
    expect(events[0].reason).toContain('503 SlowDown');
    expect((await readAll(p, 'k')).toString()).toBe('hello');
  });

  it('retries connection resets on reads and surfaces Unavailable when the budget is spent', async () => {
    const events: RetryEvent[] = [];
    const p = await viaProxy(events);
    await p.put('r', Buffer.from('x'));
    proxy.requests.length = 0;
    proxy.faults.push('reset');
    expect((await p.head('r')).size).toBe(1);
    expect(proxy.requests).toHaveLength(2);

    proxy.requests.length = 0;
    proxy.faults.push('reset', 'reset', 'reset', 'reset', 'reset');
    const err = await expectCode(p.get('r'), 'Unavailable');
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('gave up after 4 attempts');
    expect(proxy.requests).toHaveLength(4);
  });

  it('retries a request that times out waiting for headers', async () => {
    const p = await viaProxy([], { headersTimeoutMs: 150 });
    await p.put('t', Buffer.from('x'));
    proxy.faults.push('hang');
    expect((await p.head('t')).size).toBe(1);
    expect(proxy.requests.map((r) => r.fault)).toEqual([undefined, 'hang', undefined]);
  });

  it('does not retry a stream body once it has been read', async () => {
    const p = await viaProxy();
    proxy.faults.push('internal');
    const body = readableOf([Buffer.from('abc'), Buffer.from('def')]);
    await expectCode(p.put('s', body, { contentLength: 6 }), 'Unavailable');
    expect(proxy.requests).toHaveLength(1);
  });

  it('retries a replayable body on 500', async () => {
    const p = await viaProxy();
    proxy.faults.push('internal');
    await p.put('b', [Buffer.from('ab'), Buffer.from('cd')]);
    expect(proxy.requests).toHaveLength(2);
    expect((await readAll(p, 'b')).toString()).toBe('abcd');
  });

  it('never retries a conditional put whose outcome is unknown, but does retry throttling', async () => {
    const p = await viaProxy([], { conditionalWrites: true });
    proxy.faults.push('reset-after-body');
    await expectCode(p.put('c', Buffer.from('x'), { ifNoneMatch: '*' }), 'Unavailable');
    expect(proxy.requests).toHaveLength(1);

    proxy.requests.length = 0;
    proxy.faults.push('internal');
    await expectCode(p.put('c', Buffer.from('x'), { ifNoneMatch: '*' }), 'Unavailable');
    expect(proxy.requests).toHaveLength(1);

    // RGW answers the loser of an If-Match race with 500: an unknown outcome, not a refusal.
    proxy.requests.length = 0;
    proxy.faults.push('internal');
    const err = await p.put('c', Buffer.from('x'), { ifMatch: 'e'.repeat(32) }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'Unavailable' });
    expect((err as Error).message).toContain('outcome unknown');
    expect(proxy.requests).toHaveLength(1);

    proxy.requests.length = 0;
    proxy.faults.push('slowdown', 'throttle');
    await p.put('c', Buffer.from('y'), { ifNoneMatch: '*' }); // s3rver ignores the condition itself
    expect(proxy.requests).toHaveLength(3);
    expect(proxy.requests[2].headers['if-none-match']).toBe('*');
  });
});

describe('If-Match on the wire', () => {
  it('is quoted by default, bare when the form says so, and checked by HEAD when not 32 hex', async () => {
    const etag = 'a'.repeat(32);
    const quoted = await viaProxy([], { conditionalWrites: true });
    await quoted.put('m', Buffer.from('x'), { ifMatch: etag }).catch(() => {});
    expect(proxy.requests.at(-1)?.headers['if-match']).toBe(`"${etag}"`);

    const bare = await viaProxy([], {
      conditionalWrites: true,
      ifMatchForm: { quoted: false, prefixCompare: true },
    });
    expect(bare.ifMatchForm).toEqual({ quoted: false, prefixCompare: true });
    proxy.requests.length = 0;
    await bare.put('m', Buffer.from('x'), { ifMatch: etag }).catch(() => {});
    expect(proxy.requests.at(-1)?.headers['if-match']).toBe(etag);
    // An etag a prefix comparison could confuse is compared by HEAD first: absent here.
    proxy.requests.length = 0;
    await expectCode(bare.put('absent', Buffer.from('x'), { ifMatch: 'abc' }), 'PreconditionFailed');
    expect(proxy.requests.map((r) => r.method)).toEqual(['HEAD']);
  });
});

describe('signing', () => {
  it('is refused by s3rver with an unknown access key', async () => {
    const p = await createS3Provider({
      endpoint: server.endpoint,
      bucket: S3RVER_BUCKET,
      accessKeyId: 'NOPE',
      secretAccessKey: 'x',
    });
    opened.push(p);
    const err = await expectCode(p.head('x'), 'Io');
    expect(err.message).toContain('403');
    expect((await expectCode(p.put('x', Buffer.from('x')), 'Io')).message).toContain(
      'InvalidAccessKeyId'
    );
  });

  it('puts on the wire exactly what @smithy/signature-v4 signs', async () => {
    const p = await viaProxy();
    const key = 'dir/a b+c%2F(1)*~😀';
    await p.put(key, Buffer.from('v'), { ifMatch: 'abc' }).catch(() => {});
    await p.put(key, readableOf([Buffer.from('stream')]), { contentLength: 6 });
    await p.get(key, { range: { start: 1, end: 3 } }).then((r) => r.body.resume());
    await p.list({ prefix: 'dir/a b', startAfter: 'dir/', limit: 7 });
    await p.delete(key);
    expect(proxy.requests.length).toBeGreaterThanOrEqual(5);
    for (const r of proxy.requests) await expectSmithyAgrees(r.method, r.url, r.headers);
  });
});

class NodeSha256 {
  #h: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: SourceData) {
    this.#h =
      secret === undefined
        ? createHash('sha256')
        : createHmac('sha256', secret as Uint8Array | string);
  }
  update(data: SourceData): void {
    this.#h.update(data as Uint8Array | string);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#h.digest());
  }
  reset(): void {}
}

/** Re-signs a recorded request with smithy over exactly the headers we signed. */
async function expectSmithyAgrees(
  method: string,
  url: string,
  headers: Record<string, string | string[] | undefined>
): Promise<void> {
  const auth = String(headers.authorization);
  const signedNames = /SignedHeaders=([^,]+)/.exec(auth)![1].split(';');
  const signed: Record<string, string> = {};
  for (const n of signedNames) signed[n] = String(headers[n]);
  const [path, raw = ''] = url.split('?');
  const query: Record<string, string> = {};
  for (const part of raw.split('&').filter(Boolean)) {
    const [k, v = ''] = part.split('=');
    query[decodeURIComponent(k)] = decodeURIComponent(v);
  }
  const [host, port] = String(headers.host).split(':');
  const smithy = new SignatureV4({
    credentials: S3RVER_CREDENTIALS,
    region: 'us-east-1',
    service: 's3',
    sha256: NodeSha256,
    uriEscapePath: false,
  });
  const theirs = await smithy.sign(
    { method, protocol: 'http:', hostname: host, port: Number(port), path, query, headers: signed },
    { signingDate: parseAmzDate(String(headers['x-amz-date']))! }
  );
  expect(auth, `${method} ${url}`).toBe(theirs.headers.authorization);
}
