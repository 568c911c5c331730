/**
 * `--key-share` and an erasure set's write gate, against the real `strata serve --erasure 4+2`
 * over 6 directories, with two keys and a gate sized for two striped writes (`writeMemory`
 * 12 MiB in the config file; one costs ~4.6 MiB). One key opens two uploads, sends 2 MiB of
 * each 4 MiB body and stalls; the other key then PUTs 1.5 MiB.
 *   - At 50% the first key holds at most one place: its second upload waits for its own, and
 *     the other key's PUT takes the free place and lands (200, byte-exact) at once, while both
 *     stalled uploads are still open.
 *   - At 100% (no share) the stalled uploads hold both places and the other key's PUT waits in
 *     the gate until they are cut for silence (400 RequestTimeout, seconds later).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { ACCESS_KEY, REGION, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { errorCode, requestHead, signV4 } from './wire.js';
import { MiB, hold, metrics, until, type HeldRequest } from './support/bounds.js';
import { randomBytes } from '../support/random.js';

const HOSTILE = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY };
const OTHER = { accessKeyId: 'STRATATESTOTHERKEY02', secretAccessKey: 'strata-test-other-secret-0123456789abcd' };
const BUCKET = 'ec-share';

let s: TestServer | undefined;
let dir: string | undefined;
const held: HeldRequest[] = [];

afterEach(async () => {
  for (const h of held.splice(0)) h.destroy();
  await s?.stop();
  s = undefined;
  if (dir) {
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}.master-key`, { force: true });
  }
});

async function send(creds: typeof HOSTILE, method: string, path: string, body?: Uint8Array) {
  const w = signV4({ method, path, host: new URL(s!.url).host, credentials: creds, region: REGION, ...(body ? { body } : {}) });
  const res = await request(`${s!.url}${w.target}`, { method: w.method, headers: w.headers, ...(w.body ? { body: w.body } : {}) });
  return { status: res.statusCode, body: Buffer.from(await res.body.arrayBuffer()) };
}

/** A hostile upload: the head of a 4 MiB PUT and 2 MiB of its body, then nothing. */
async function stall(key: string): Promise<HeldRequest> {
  const head = requestHead(
    signV4({ method: 'PUT', path: `/${BUCKET}/${key}`, headers: { 'content-length': String(4 * MiB) }, payloadHash: 'UNSIGNED-PAYLOAD', host: new URL(s!.url).host, credentials: HOSTILE, region: REGION })
  );
  const h = await hold(s!.port, [head, Buffer.from(randomBytes(2 * MiB, key.length))]);
  held.push(h);
  return h;
}

describe('--key-share on an erasure set', () => {
  it.each([50, 100])('at a share of %s percent', async (share) => {
    dir = mkdtempSync(join(tmpdir(), 'strata-ec-share-'));
    const config = join(dir, 'strata.json');
    writeFileSync(config, JSON.stringify({ erasure: { writeMemory: '12MiB' }, credentials: [HOSTILE, OTHER] }));
    s = await startTestServer({
      child: true,
      // The config file's two keys, not the harness's one from the environment (which wins).
      env: { STRATA_ACCESS_KEY: '', STRATA_SECRET_KEY: '' },
      dataDir: `${dir}/disk{1...6}`,
      args: ['--erasure', '4+2', '--config', config, '--key-share', String(share), '--gc-interval', '0', '--lifecycle-interval', '0', '--expiry-interval', '0'],
    });
    expect((await send(HOSTILE, 'PUT', `/${BUCKET}`)).status).toBe(200);
    const gate = async () => {
      const m = await metrics(s!.url);
      return { inFlight: m.strata_erasure_writes_in_flight ?? 0, waiting: m.strata_erasure_writes_waiting ?? 0 };
    };

    const first = await stall('stalled-1');
    expect(await until(async () => (await gate()).inFlight === 1, 10_000)).toBe(true);
    const second = await stall('stalled-2');
    // At 50% the second waits for the first (its key's share); at 100% it takes the other place.
    const want = share === 50 ? { inFlight: 1, waiting: 1 } : { inFlight: 2, waiting: 0 };
    let seen = {};
    expect(await until(async () => JSON.stringify((seen = await gate())) === JSON.stringify(want), 10_000), JSON.stringify(seen)).toBe(true);

    const data = randomBytes(1536 * 1024, 3);
    const t0 = Date.now();
    const put = send(OTHER, 'PUT', `/${BUCKET}/other`, data);
    if (share === 50) {
      const r = await put;
      expect(r.status, r.body.toString()).toBe(200);
      // Landed while both stalled uploads are still open and unanswered.
      expect(Date.now() - t0).toBeLessThan(3_000);
      const open = await Promise.race([first.response.then(() => false), second.response.then(() => false), new Promise((r) => setTimeout(() => r(true), 10))]);
      expect(open).toBe(true);
    } else {
      expect(await until(async () => (await gate()).waiting === 1, 5_000)).toBe(true);
      // The stalled uploads are cut for silence (the shorter window while writes wait); only
      // then does the other key's PUT get a place.
      const cut = await first.response;
      expect(cut?.status).toBe(400);
      expect(errorCode(cut!.body)).toBe('RequestTimeout');
      const r = await put;
      expect(r.status, r.body.toString()).toBe(200);
      expect(Date.now() - t0).toBeGreaterThan(2_000);
    }
    const got = await send(OTHER, 'GET', `/${BUCKET}/other`);
    expect(got.body.equals(Buffer.from(data))).toBe(true);
  }, 60_000);
});
