/**
 * SIGKILL of an erasure-backed server ((4,2) over 6 directory domains) in the middle of
 * concurrent PUTs (small packed bodies and striped carriers): after each restart every
 * acknowledged PUT reads back byte-exact, a PUT that was in flight reads back either absent
 * or exact (never torn), and at the end `strata verify` finds the repository sound.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../integration/harness.js';
import { client, ecRoot, expectObjects, expectVerifyClean, killServer, startServer, type EcRoot } from './kill-setup.js';
import { killRounds } from './kill-rounds.js';

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
    const { acked, inFlightAtKills } = await killRounds(ec, {
      writers: WRITERS,
      acksBeforeKill: ACKS_BEFORE_KILL,
      killDelaysMs: KILL_DELAYS_MS,
      seedOf: (i) => i,
      onServer: (s) => {
        server = s;
      },
    });
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
