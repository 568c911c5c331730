/**
 * `strata lifecycle run` from the built CLI (dist/): on a stopped repository (the rules run
 * in the CLI's process, progress on stderr, the report on stdout) and, while a server holds
 * the repository, through its admin endpoint — with the same effect. The server here has its
 * schedule off (--lifecycle-interval 0), so only the verb can have done what is observed.
 * Bad usage exits 2; an unknown bucket is a refusal (exit 1).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CreateBucketCommand, ListObjectsV2Command, PutBucketLifecycleConfigurationCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { ACCESS_KEY, CLI, removeDataDir, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { clientEnv, run } from './support/run-cli.js';
import { createS3Client, WireLog } from './support/sdk-v3-client.js';

const wire = new WireLog();
let dataDir: string;

function strata(args: string[]) {
  return run(process.execPath, [CLI, ...args, '--data', dataDir], {
    env: clientEnv({ STRATA_ACCESS_KEY: ACCESS_KEY, STRATA_SECRET_KEY: SECRET_KEY, STRATA_LIFECYCLE_DAY_MS: '1000' }),
  });
}

async function seed(c: S3Client, bucket: string): Promise<void> {
  await c.send(new CreateBucketCommand({ Bucket: bucket }));
  for (const k of ['old/a', 'old/b', 'new/a']) await c.send(new PutObjectCommand({ Bucket: bucket, Key: k, Body: k }));
  // A date in the past: due now whatever the day length.
  await c.send(
    new PutBucketLifecycleConfigurationCommand({
      Bucket: bucket,
      LifecycleConfiguration: { Rules: [{ ID: 'old', Filter: { Prefix: 'old/' }, Status: 'Enabled', Expiration: { Date: new Date('2020-01-01T00:00:00Z') } }] },
    })
  );
}

const keys = async (c: S3Client, bucket: string) => ((await c.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((o) => o.Key);

let s: TestServer | undefined;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'strata-lc-cli-'));
  s = await startTestServer({ dataDir, config: { lifecycleInterval: 0 } });
  const c = createS3Client(s.url, wire);
  await seed(c, 'lc-offline');
  await seed(c, 'lc-online');
  c.destroy();
  await s.stop();
  s = undefined;
});
afterAll(async () => {
  await s?.stop();
  removeDataDir(dataDir);
});

it('on a stopped repository: runs the rules, reports them; bad usage exits 2, unknown bucket 1', async () => {
  expect((await strata(['lifecycle', 'go'])).code).toBe(2);
  expect((await strata(['lifecycle'])).code).toBe(2);
  const missing = await strata(['lifecycle', 'run', '--bucket', 'no-such-bucket']);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/NoSuchBucket/);
  const r = await strata(['lifecycle', 'run', '--bucket', 'lc-offline', '--json']);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ buckets: 1, expired: 2, versionsRemoved: 0, uploadsAborted: 0 });
  expect(r.stderr).toMatch(/opened repository/);
});

it('through the running server (its schedule off): the same effect on the buckets still due', async () => {
  s = await startTestServer({ dataDir, config: { lifecycleInterval: 0 } });
  const c = createS3Client(s.url, wire);
  expect(await keys(c, 'lc-offline')).toEqual(['new/a']);
  expect(await keys(c, 'lc-online')).toEqual(['new/a', 'old/a', 'old/b']);
  const r = await strata(['lifecycle', 'run']);
  expect(r.code).toBe(0);
  expect(r.stderr).toMatch(/acting through/);
  expect(r.stdout).toMatch(/2 bucket\(s\) with rules, .* 2 expired/);
  expect(await keys(c, 'lc-online')).toEqual(['new/a']);
  c.destroy();
});
