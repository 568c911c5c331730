/**
 * A scrub pass whose listing fails midway (more than m domains not answering) gives up with
 * what it checked saved in its cursor, says where the next run resumes, and the next run
 * resumes there and checks every remaining blob once; a pass whose count listing fails before
 * anything is checked leaves the earlier cursor standing and says so.
 */
import { describe, expect, it } from 'vitest';
import { ProviderError, type ListOptions, type ListPage } from '../../src/provider/provider.js';
import { runScrub, ScrubGaveUp } from '../../src/provider/erasure/scrub.js';
import { scrubSummary } from '../../src/cli/scrub.js';
import { fakeWith } from './scrub-fake.js';

/** Makes list call number `failAt` (1-based) and every later one fail as a listing with too
 * many domains down does; returns the counter. */
function failingLists(p: Awaited<ReturnType<typeof fakeWith>>, failAt: number): { calls: number; failing: boolean } {
  const state = { calls: 0, failing: true };
  const list = p.blobs.list.bind(p.blobs);
  p.list = (o?: ListOptions): Promise<ListPage> => {
    state.calls++;
    if (state.failing && state.calls >= failAt)
      return Promise.reject(new ProviderError('Unavailable', 'list: 3 domains did not answer (at most 2 may be down): d1, d2, d3'));
    return list(o);
  };
  return state;
}

describe('a scrub that gives up', () => {
  it('saves the checked prefix, names where to resume, and the next run resumes there', async () => {
    const p = await fakeWith(1500);
    // Calls 1-2: the count pass (two pages); 3: the first page of blobs; 4: the second fails.
    const lists = failingLists(p, 4);
    const err = await runScrub(p, { cursorEveryBlobs: 100_000, cursorEveryMs: 3_600_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScrubGaveUp);
    const gave = err as ScrubGaveUp;
    expect(gave.code).toBe('Unavailable');
    expect(gave.report.complete).toBe(false);
    expect(gave.report.blobs).toBe(1000);
    expect(gave.report.resumeAfter).toBe('b/00999');
    expect(gave.message).toContain('3 domains did not answer');
    expect(gave.message).toContain('1000 blobs checked in this run');
    expect(gave.message).toContain('resume after "b/00999"');
    expect(scrubSummary(gave.report, 'here')).toContain('STOPPED before the end: run again to resume after b/00999');
    expect(p.checked.length).toBe(1000);

    lists.failing = false;
    const r = await runScrub(p);
    expect(r.complete).toBe(true);
    expect(r.resumedFrom).toBe('b/00999');
    expect(r.blobs).toBe(1500);
    expect(r.resumedBlobs).toBe(1000);
    // Every blob checked exactly once over the two runs.
    expect(p.checked.length).toBe(1500);
    expect(new Set(p.checked).size).toBe(1500);
  });

  it('a failed count listing keeps the earlier cursor and says nothing new was saved', async () => {
    const p = await fakeWith(30);
    p.delay = () => 5;
    const ac = new AbortController();
    let seen = 0;
    const first = await runScrub(p, {
      concurrency: 1,
      cursorEveryBlobs: 1,
      signal: ac.signal,
      onProgress: (pr) => {
        if (pr.phase === 'scrub' && (seen = pr.blobs) >= 10) ac.abort();
      },
    });
    expect(first.complete).toBe(false);
    expect(seen).toBeGreaterThanOrEqual(10);
    const saved = first.resumeAfter;
    expect(saved).toBeDefined();

    const lists = failingLists(p, 1);
    const err = (await runScrub(p).catch((e: unknown) => e)) as ScrubGaveUp;
    expect(err).toBeInstanceOf(ScrubGaveUp);
    expect(err.report.resumeAfter).toBe(saved);
    expect(err.message).toContain('the cursor saved earlier stands');
    expect(err.message).toContain(`resume after ${JSON.stringify(saved)}`);

    lists.failing = false;
    const again = await runScrub(p);
    expect(again.complete).toBe(true);
    expect(again.resumedFrom).toBe(saved);
    expect(again.blobs).toBe(30);
  });
});
