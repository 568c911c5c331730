/**
 * Model-based test of S3 versioning (test/store/history/): seeded random sequences of PUT,
 * one-part multipart uploads, COPY (latest and by version, within and across two buckets),
 * PutObjectTagging (latest and by version), DELETE (with and without versionId),
 * DeleteObjects, versioning toggles (never enabled -> Enabled/Suspended, per bucket) and
 * reads, run against a real server over HTTP with the AWS SDK v3 and against a small model
 * of S3 written from AWS's documentation. Every answer is checked as it comes; every few operations everything is
 * compared: each version and delete marker by id (GET/HEAD), the latest of each key,
 * ListObjectVersions in small pages, from markers, by prefix and delimiter, URL-encoded,
 * and ListObjectsV2. Tiny checkpoint and compaction thresholds make the version log flush
 * and compact many times during a run.
 *
 * Now and then a step forks a bucket (CreateBucket with x-strata-fork-source, now or as of a
 * past moment of the run), deletes a whole bucket the strict way (every version, then
 * DeleteBucket), or restores a bucket or a prefix to a past moment (the admin restore), so
 * forks of forks, forks whose source is gone and restored keys are compared too; and every
 * full comparison also reads each bucket as of two random past moments (x-strata-as-of on
 * GET/HEAD and ListObjectsV2) against the model's timeline (history/timeline.ts).
 *
 * A failure prints the seed and the operations before it. MODEL_HISTORY_SEEDS=<n> runs more
 * seeds (a soak); MODEL_HISTORY_OPS=<n> longer sequences.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../integration/harness.js';
import { Probe } from './history/client.js';
import { runSequence } from './history/runner.js';
import { TINY_STORE } from './history/tiny.js';

const SEEDS = Number(process.env.MODEL_HISTORY_SEEDS ?? 3);
const OPS = Number(process.env.MODEL_HISTORY_OPS ?? 120);
/** Reads as of past moments and restores (point-in-time, issue 9). */
const AS_OF = true;
/** Forks (x-strata-fork-source) and whole-bucket deletions among the steps (issue 9). */
const FORKS = true;

let server: TestServer;
let probe: Probe;
/** Steps of every seed, by kind. */
const totals = new Map<string, number>();
beforeAll(async () => {
  server = await startTestServer({ config: { log: 'off' }, store: TINY_STORE });
  probe = new Probe(server.url);
});
afterAll(async () => {
  probe?.destroy();
  await server?.stop();
});

describe('model-based history: S3 versioning against a model of S3', () => {
  const seeds = Array.from({ length: SEEDS }, (_, i) => 9001 + i * 7919);
  it.each(seeds)('seed %i: every version, marker, listing and read matches the model', async (seed) => {
    const { stats } = await runSequence(probe, { seed, ops: OPS, checkEvery: 25, asOf: AS_OF, forks: FORKS, large: true });
    // The sequence really exercised versioning: toggles, markers, removals, copies.
    expect(stats.ops.versioning).toBeGreaterThan(0);
    expect(stats.ops.deleteVersion + stats.ops.deleteObjects).toBeGreaterThan(5);
    expect(stats.ops.copy).toBeGreaterThan(3);
    expect(stats.fullChecks).toBeGreaterThanOrEqual(Math.floor(OPS / 25));
    expect(stats.entries).toBeGreaterThan(5);
    if (AS_OF) expect(stats.asOfChecks).toBeGreaterThan(4);
    for (const [k, n] of Object.entries(stats.ops)) totals.set(k, (totals.get(k) ?? 0) + n);
  });

  it('the seeds together forked, deleted and restored buckets; the repository crossed checkpoints and compactions', () => {
    if (SEEDS >= 3 && FORKS) {
      expect(totals.get('fork')).toBeGreaterThan(0);
      expect(totals.get('drop')).toBeGreaterThan(0);
    }
    if (SEEDS >= 3 && AS_OF) expect(totals.get('restore')).toBeGreaterThan(0);
    const repo = server.server!.store.repo;
    expect(repo.stats.checkpoints).toBeGreaterThan(10);
    expect(repo.stats.compactions).toBeGreaterThan(0);
  });
});
