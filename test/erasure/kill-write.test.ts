/**
 * SIGKILL of an erasure-backed server ((4,2) over 6 directory domains) in the middle of
 * concurrent PUTs (small packed bodies and striped carriers): after each restart every
 * acknowledged PUT reads back byte-exact, a PUT that was in flight reads back either absent
 * or exact (never torn), and at the end `strata verify` finds the repository sound.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import type { TestServer } from '../integration/harness.js';
import { firstDiff } from '../support/bytes.js';
import { bodyOf, client, ecRoot, expectObjects, expectVerifyClean, getObject, killServer, putObject, startServer, type EcRoot } from './kill-setup.js';

/** Kill rounds; each restarts on what the previous one left. */
const ROUNDS = 3;
/** Concurrent writers per round. */
const WRITERS = 6;
/** Acknowledged PUTs in a round before the kill (the others are then in flight). */
const ACKS_BEFORE_KILL = 24;
/** Delay from that acknowledgement to the kill, per round, ms. */
const KILL_DELAYS_MS = [5, 30, 120];

let ec: EcRoot | undefined;
let server: TestServer | undefined;
afterAll(async () => {
  if (server) await killServer(server).catch(() => undefined);
  ec?.cleanup();
});

describe('kill -9 of an erasure-backed server during PUTs', () => {
  it('keeps every acknowledged PUT, tears none, and verifies clean', async () => {
    ec = ecRoot('kill-write');
    const acked = new Map<string, number>();
    const inFlight = new Map<string, number>();
    let seed = 0;
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
            const n = seed++;
            const key = `r${round}/o${n}`;
            inFlight.set(key, n);
            try {
              await putObject(c, 'bkt', key, bodyOf(n));
            } catch (err) {
              if (killed) return;
              throw err;
            }
            // A 200 is an acknowledgement even if it is read after the kill began: the
            // server sent it before it died.
            inFlight.delete(key);
            acked.set(key, n);
            // The kill lands a little later, amid the PUTs issued meanwhile (a group commit
            // answers a whole batch at once, so killing right on an answer finds none in flight).
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
    await expectVerifyClean(ec, 'after the kills');
  }, 120_000);
});
