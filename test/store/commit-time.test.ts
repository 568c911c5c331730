/**
 * Commit times never run ahead of the clock (commit-loop.ts CLOCK_WAIT_MAX_MS): with the commit
 * log on a RAM disk, commits come far faster than one per ms, yet every object's commit time is
 * at most 1 ms past Date.now() at its acknowledgement, times strictly increase from commit to
 * commit, and concurrent writers are absorbed into larger batches instead of running the time
 * ahead (before the wait, 3 s of such a burst stamped times 3.8 s later).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { Store } from '../../src/store/store.js';
import { stream } from './helpers.js';

const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
const dir = mkdtempSync(join(base, 'strata-commit-time-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** How long each burst runs, ms: hundreds of clock ticks, a few hundred ms of test time. */
const BURST_MS = 400;
const WRITERS = 32;

it('a burst of commits faster than one per ms keeps every commit time <= the clock at its ack + 1 ms', { timeout: 30_000 }, async () => {
  const store = await Store.open(await createFsProvider({ dir }), { commitLog: true, ownsProvider: true });
  expect(store.repo.usesCommitLog).toBe(true);
  await store.createBucket('burst');
  const body = Buffer.from('x'.repeat(64));
  const late: string[] = [];
  let ops = 0;

  // One writer: one commit per PUT, each time strictly after the previous one.
  let previous = 0;
  const until = Date.now() + BURST_MS;
  let sequential = 0;
  while (Date.now() < until) {
    const r = await store.putObject('burst', `seq/${sequential}`, stream(body), { size: body.length });
    const acked = Date.now();
    if (r.version.lastModified > acked + 1) late.push(`seq/${sequential}: ${r.version.lastModified} > ${acked} + 1`);
    expect(r.version.lastModified).toBeGreaterThan(previous);
    previous = r.version.lastModified;
    sequential++;
  }

  // Many writers: batches grow while the loop waits for the next ms.
  const commitsBefore = store.repo.stats.commits;
  const started = performance.now();
  const stop = Date.now() + BURST_MS;
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; Date.now() < stop; i++) {
        const r = await store.putObject('burst', `par/${w}/${i}`, stream(body), { size: body.length });
        const acked = Date.now();
        if (r.version.lastModified > acked + 1) late.push(`par/${w}/${i}: ${r.version.lastModified} > ${acked} + 1`);
        ops++;
      }
    })
  );
  const ms = performance.now() - started;
  const commits = store.repo.stats.commits - commitsBefore;
  console.log(`commit-time: ${sequential} sequential PUTs in ${BURST_MS} ms; ${ops} concurrent PUTs (${WRITERS} writers) in ${Math.round(ms)} ms = ${Math.round(ops / (ms / 1000))}/s in ${commits} commits`);
  expect(late).toEqual([]);
  expect(store.repo.lastCommitTime).toBeLessThanOrEqual(Date.now() + 1);
  // No more commits than ms elapsed (+1): each commit takes a ms of its own.
  expect(commits).toBeLessThanOrEqual(Math.ceil(ms) + 2);
  await store.close();
});
