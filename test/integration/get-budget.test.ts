/**
 * GET bodies count against the in-flight byte budget (store/budget.ts), so that many
 * concurrent large GETs whose clients stop reading cannot hold more memory than the budget.
 *
 * The bug: a GET of a carrier holds up to GET_HELD_BYTES of span buffers while its body goes
 * out, and a client that stops reading keeps them (and its socket's buffers) for as long as
 * it likes; none of it was counted, so N stalled readers held N x that, with
 * strata_pending_bytes at 0 and no refusal ever. Now each GET reserves what it will hold
 * before its status line and releases it when its response closes; past the budget a GET
 * waits a bounded time (BUDGET_WAIT_MS) for room, then is refused with 503 SlowDown instead
 * of admitted.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startTestServer, REGION, type TestServer } from './harness.js';
import { CREDS, MiB, metrics, signedRequest, until } from './support/bounds.js';
import { randomBytes } from '../support/random.js';
import { GET_HELD_BYTES } from '../../src/store/chunk-scatter-read.js';
import { BUDGET_WAIT_MS } from '../../src/store/budget.js';

/** Room for exactly ADMITTED large GETs. */
const ADMITTED = 4;
const BUDGET = ADMITTED * GET_HELD_BYTES;
/** Far more than the loopback socket buffers of a stalled reader can swallow. */
const SIZE = 40 * MiB + 12_345;
const BUCKET = 'get-budget';

let s: TestServer;
let s3: S3Client;
const body = Buffer.from(randomBytes(SIZE, 77));

beforeAll(async () => {
  // One key may use the whole budget (--key-share 100): these tests are about the budget itself.
  s = await startTestServer({ config: { pendingBytes: BUDGET, keyShare: 100 } });
  s3 = new S3Client({ endpoint: s.url, region: REGION, forcePathStyle: true, credentials: CREDS, maxAttempts: 1 });
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'big', Body: body }));
}, 60_000);

afterAll(async () => {
  s3?.destroy();
  await s?.stop();
});

/** A GET of the big object on its own connection that reads only its status code, then stops reading. */
async function stalledGet(): Promise<{ socket: Socket; status: number }> {
  const socket = connect({ host: '127.0.0.1', port: s.port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => undefined);
  const req = signedRequest(s.port, 'GET', `/${BUCKET}/big`, {}, new Uint8Array(0));
  socket.write(req.head);
  // Paused mode (no 'data' listener): only the 12 bytes read here leave the kernel's buffer.
  const head = await new Promise<Buffer>((resolve) => {
    const tryRead = () => {
      const b = socket.read(12) as Buffer | null;
      if (b) resolve(b);
      else socket.once('readable', tryRead);
    };
    tryRead();
  });
  return { socket, status: Number(head.toString('latin1').slice(9, 12)) };
}

describe('GET bodies in the in-flight budget', () => {
  it('counts stalled large GETs, refuses past the budget with 503, and releases when they go', async () => {
    const before = await metrics(s.url);
    expect(before.strata_pending_bytes).toBe(0);
    const held: Socket[] = [];
    try {
      const statuses: number[] = [];
      for (let i = 0; i < ADMITTED + 2; i++) {
        const g = await stalledGet();
        held.push(g.socket);
        statuses.push(g.status);
      }
      expect(statuses).toEqual([...Array<number>(ADMITTED).fill(200), 503, 503]);
      const m = await metrics(s.url);
      expect(m.strata_pending_bytes).toBe(ADMITTED * GET_HELD_BYTES);
      expect(m.strata_pending_bytes).toBeLessThanOrEqual(m.strata_pending_budget_bytes!);
      expect(m.strata_admission_refusals_total! - before.strata_admission_refusals_total!).toBe(2);

      // A slow reader that resumes gets every byte, and its share goes back.
      const slow = held[0]!;
      let got = 12;
      let text = '';
      const done = new Promise<void>((resolve) => {
        slow.on('data', (d: Buffer) => {
          if (!text.includes('\r\n\r\n')) {
            text += d.toString('latin1');
            const at = text.indexOf('\r\n\r\n');
            if (at >= 0) got = Buffer.byteLength(text.slice(at + 4), 'latin1');
          } else got += d.length;
          if (text.includes('\r\n\r\n') && got >= SIZE) resolve();
        });
      });
      slow.resume();
      await done;
      expect(got).toBe(SIZE);
      expect(await until(async () => (await metrics(s.url)).strata_pending_bytes === (ADMITTED - 1) * GET_HELD_BYTES, 10_000)).toBe(true);
    } finally {
      for (const h of held) h.destroy();
    }
    // Connections gone: everything is released, and a GET reads the object whole again.
    expect(await until(async () => (await metrics(s.url)).strata_pending_bytes === 0, 10_000)).toBe(true);
    const again = await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'big' }))).Body!.transformToByteArray();
    expect(Buffer.from(again).equals(body)).toBe(true);
  }, 60_000);

  it('lets a GET past the budget wait for room: admitted when a reader goes, dropped from the queue when its own client goes', async () => {
    const before = await metrics(s.url);
    expect(before.strata_pending_bytes).toBe(0);
    const held: Socket[] = [];
    try {
      for (let i = 0; i < ADMITTED; i++) {
        const g = await stalledGet();
        held.push(g.socket);
        expect(g.status).toBe(200);
      }
      // The next GET neither gets a status line nor a refusal while it waits.
      let waiterSocket: Socket | undefined;
      const waiting = stalledGet();
      expect(await until(async () => (await metrics(s.url)).strata_pending_waiting === 1, 10_000)).toBe(true);
      // A reader goes away: its share goes to the waiter, which is answered 200.
      held.shift()!.destroy();
      const admitted = await waiting;
      held.push(admitted.socket);
      expect(admitted.status).toBe(200);
      let m = await metrics(s.url);
      expect(m.strata_pending_waiting).toBe(0);
      expect(m.strata_pending_bytes).toBe(ADMITTED * GET_HELD_BYTES);

      // A waiter whose client hangs up leaves the queue at once, not when its wait runs out.
      waiterSocket = connect({ host: '127.0.0.1', port: s.port });
      await new Promise<void>((resolve) => waiterSocket!.once('connect', resolve));
      waiterSocket.on('error', () => undefined);
      waiterSocket.write(signedRequest(s.port, 'GET', `/${BUCKET}/big`, {}, new Uint8Array(0)).head);
      expect(await until(async () => (await metrics(s.url)).strata_pending_waiting === 1, 10_000)).toBe(true);
      waiterSocket.destroy();
      expect(await until(async () => (await metrics(s.url)).strata_pending_waiting === 0, BUDGET_WAIT_MS / 2)).toBe(true);
      m = await metrics(s.url);
      expect(m.strata_pending_bytes).toBe(ADMITTED * GET_HELD_BYTES);
      // Neither the admitted waiter nor the one that hung up counts as a refusal.
      expect(m.strata_admission_refusals_total! - before.strata_admission_refusals_total!).toBe(0);
    } finally {
      for (const h of held) h.destroy();
    }
    expect(await until(async () => (await metrics(s.url)).strata_pending_bytes === 0, 10_000)).toBe(true);
  }, 60_000);
});

describe('a pending budget smaller than one large GET holds', () => {
  it('serves the GET whole (reserving the whole budget), not 503 every time; with a key share too', async () => {
    for (const keyShare of [100, 50]) {
      // 4 MiB: the smallest budget a large PUT passes at, below GET_HELD_BYTES (6 MiB).
      const small = await startTestServer({ config: { pendingBytes: 4 * MiB, keyShare } });
      const c = new S3Client({ endpoint: small.url, region: REGION, forcePathStyle: true, credentials: CREDS, maxAttempts: 1 });
      try {
        expect(4 * MiB).toBeLessThan(GET_HELD_BYTES);
        const big = body.subarray(0, 9 * MiB + 7);
        await c.send(new CreateBucketCommand({ Bucket: BUCKET }));
        await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'nine', Body: big }));
        const got = await c.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'nine' }));
        expect(Buffer.from(await got.Body!.transformToByteArray()).equals(big), `key share ${keyShare}%`).toBe(true);
        expect(await until(async () => (await metrics(small.url)).strata_pending_bytes === 0, 10_000)).toBe(true);
      } finally {
        c.destroy();
        await small.stop();
      }
    }
  }, 60_000);
});
