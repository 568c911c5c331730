/**
 * @module The kill rounds both erasure SIGKILL-during-PUT tests run (kill-write, kill-log):
 * each round starts the server on what the previous one left, checks every acknowledged PUT
 * reads back byte-exact and every PUT that was in flight at the last kill reads back absent or
 * exact (never torn), then runs concurrent writers and SIGKILLs the server a little after a
 * given count of acknowledgements, amid the PUTs issued meanwhile (a group commit answers a
 * whole batch at once, so killing right on an answer finds none in flight).
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { expect } from 'vitest';
import type { TestServer } from '../integration/harness.js';
import { firstDiff } from '../support/bytes.js';
import { bodyOf, client, expectObjects, getObject, killServer, putObject, startServer, type EcRoot } from './kill-setup.js';

export interface KillRoundsOptions {
  /** Concurrent writers per round. */
  writers: number;
  /** Acknowledged PUTs in a round before the kill is scheduled. */
  acksBeforeKill: number;
  /** Delay from that acknowledgement to the kill, per round (one entry per round), ms. */
  killDelaysMs: readonly number[];
  /** Body seed of the i-th PUT (bodyOf(seed) is its body). */
  seedOf: (i: number) => number;
  /** Called with the running server (or undefined once it is gone), for the test's cleanup. */
  onServer: (s: TestServer | undefined) => void;
}

/**
 * Runs `killDelaysMs.length` kill rounds on bucket 'bkt' (created in the first). Returns the
 * acknowledged PUTs (key -> body seed) and how many PUTs were in flight at the kills summed
 * over the rounds. A 200 read after the kill began still counts as acknowledged: the server
 * sent it before it died. Throws (vitest expect) on a lost, wrong or torn object.
 */
export async function killRounds(ec: EcRoot, o: KillRoundsOptions): Promise<{ acked: Map<string, number>; inFlightAtKills: number }> {
  const acked = new Map<string, number>();
  const inFlight = new Map<string, number>();
  let i = 0;
  let inFlightAtKills = 0;
  for (let round = 0; round < o.killDelaysMs.length; round++) {
    const server = await startServer(ec);
    o.onServer(server);
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
    await Promise.all(
      Array.from({ length: o.writers }, async () => {
        while (!killed) {
          const n = o.seedOf(i++);
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
          if (++ackedThisRound === o.acksBeforeKill) {
            setTimeout(() => {
              killed = true;
              killing = killServer(server);
            }, o.killDelaysMs[round]);
          }
        }
      })
    );
    await killing;
    c.destroy();
    o.onServer(undefined);
    inFlightAtKills += inFlight.size;
  }
  return { acked, inFlightAtKills };
}
