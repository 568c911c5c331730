/**
 * SIGKILL of an erasure-backed server on the commit log ((4,2) over 6 directory domains,
 * STRATA_COMMIT_LOG=on: group commits appended to log segments replicated to 3 domains) in
 * the middle of concurrent PUTs: after each restart every acknowledged PUT reads back
 * byte-exact, a PUT in flight reads back absent or exact (never torn), the commits went to
 * log segment copies (not commit blobs), and at the end `strata verify` and `strata scrub`
 * find the repository sound (scrub --repair first evens out copies a kill left one record
 * apart).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import type { TestServer } from '../integration/harness.js';
import { parseChildKey } from '../../src/provider/erasure/child-key.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { firstDiff } from '../support/bytes.js';
import { bodyOf, client, DOMAINS, ecRoot, expectObjects, expectVerifyClean, getObject, killServer, putObject, startServer, strata, type EcRoot } from './kill-setup.js';

/** Kill rounds; each restarts on what the previous one left. */
const ROUNDS = 3;
/** Concurrent writers per round. */
const WRITERS = 8;
/** Acknowledged PUTs in a round before the kill (the others are then in flight). */
const ACKS_BEFORE_KILL = 30;
/** Delay from that acknowledgement to the kill, per round, ms. */
const KILL_DELAYS_MS = [3, 25, 90];

let ec: EcRoot | undefined;
let server: TestServer | undefined;
afterAll(async () => {
  if (server) await killServer(server).catch(() => undefined);
  ec?.cleanup();
});

/** Layouts of the names on every domain directory (the server stopped). */
async function layouts(root: EcRoot): Promise<{ log: number; commitBlobs: number }> {
  let log = 0;
  let commitBlobs = 0;
  for (let i = 1; i <= DOMAINS; i++) {
    const p = await createFsProvider({ dir: root.domainDir(i), exclusive: true });
    for (let next: string | undefined, first = true; first || next; first = false) {
      const page = await p.list({ startAfter: next });
      for (const it of page.items) {
        const n = parseChildKey(it.key);
        if (n?.layout === 'log') log++;
        if (n?.key.startsWith('commits/')) commitBlobs++;
      }
      next = page.next;
    }
    await p.close();
  }
  return { log, commitBlobs };
}

describe('kill -9 of an erasure-backed server on the commit log during PUTs', () => {
  it('keeps every acknowledged PUT, tears none, and verifies and scrubs clean', async () => {
    ec = ecRoot('kill-log');
    ec.env.STRATA_COMMIT_LOG = 'on';
    const acked = new Map<string, number>();
    const inFlight = new Map<string, number>();
    let seed = 1;
    let inFlightAtKills = 0;
    for (let round = 0; round < ROUNDS; round++) {
      server = await startServer(ec);
      const c = client(server.url);
      if (round === 0) await c.send(new CreateBucketCommand({ Bucket: 'bkt' }));
      await expectObjects(c, 'bkt', acked, `restart ${round}`);
      for (const [key, s] of inFlight) {
        const got = await getObject(c, 'bkt', key);
        if (got) expect(firstDiff(got, bodyOf(s)), `restart ${round}: in-flight ${key} torn`).toBe(-1);
      }
      inFlight.clear();
      let ackedThisRound = 0;
      let killed = false;
      let killing: Promise<void> | undefined;
      const s = server;
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          while (!killed) {
            // Small bodies only: every one of them lives in a commit frame of a log segment.
            const n = seed++ * 4 + 1;
            const key = `r${round}/o${n}`;
            inFlight.set(key, n);
            try {
              await putObject(c, 'bkt', key, bodyOf(n));
            } catch (err) {
              if (killed) return;
              throw err;
            }
            inFlight.delete(key);
            acked.set(key, n);
            if (++ackedThisRound === ACKS_BEFORE_KILL) {
              setTimeout(() => {
                killed = true;
                killing = killServer(s);
              }, KILL_DELAYS_MS[round]);
            }
          }
        })
      );
      await killing;
      c.destroy();
      inFlightAtKills += inFlight.size;
    }
    expect(inFlightAtKills, 'PUTs in flight at the kills').toBeGreaterThan(0);
    server = await startServer(ec);
    const c = client(server.url);
    await expectObjects(c, 'bkt', acked, 'final');
    c.destroy();
    await server.stop();
    server = undefined;
    const names = await layouts(ec);
    // Every segment has m + 1 = 3 copies (rolls at each start; GC may have removed old ones).
    expect(names.log, 'log segment copies').toBeGreaterThanOrEqual(3);
    expect(names.log % 3, 'copies per segment').toBe(0);
    expect(names.commitBlobs, 'commit blobs').toBe(0);
    await expectVerifyClean(ec, 'after the kills');
    // A kill amid an append can leave one copy a record longer than the others (written, not
    // acknowledged); recovery reads the longest, so repair copies that record to the others.
    const repair = await strata(ec, ['scrub', '--repair', '--data', ec.data]);
    expect(repair.stdout, repair.stderr).toMatch(/lost\s+0 blobs/);
    const scrub = await strata(ec, ['scrub', '--data', ec.data]);
    expect(scrub.code, `strata scrub\n${scrub.stdout}\n${scrub.stderr}`).toBe(0);
  }, 120_000);
});
