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
import type { TestServer } from '../integration/harness.js';
import { parseChildKey } from '../../src/provider/erasure/child-key.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { client, DOMAINS, ecRoot, expectObjects, expectVerifyClean, killServer, startServer, strata, type EcRoot } from './kill-setup.js';
import { killRounds } from './kill-rounds.js';

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
    const { acked, inFlightAtKills } = await killRounds(ec, {
      writers: WRITERS,
      acksBeforeKill: ACKS_BEFORE_KILL,
      killDelaysMs: KILL_DELAYS_MS,
      seedOf: (i) => (i + 1) * 4 + 1,
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
