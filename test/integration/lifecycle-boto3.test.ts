/**
 * Lifecycle with boto3 against a real server (lifecycle day 1 s, worker every 200 ms). The
 * scenario runs in lifecycle_boto3.py, which prints what it observed as JSON; every assertion
 * is here. Proves, with botocore's own serialisation: configurations in the legacy Prefix form
 * and every Filter form read back exactly as sent (an ID is made up when none is given);
 * refusals carry S3's status and code (a transition: 501); x-amz-expiration follows a tag
 * filter; the worker removes a noncurrent version and then the delete marker left alone;
 * DeleteBucketLifecycle is 204 and the configuration is gone after it.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ACCESS_KEY, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { botocoreEnv } from './support/aws-client-env.js';
import { mustRun } from './support/run-cli.js';
import { CLIENTS, clientSuite } from '../support/clients.js';

const BOTO3 = clientSuite(CLIENTS.boto3);
const SCRIPT = fileURLToPath(new URL('./lifecycle_boto3.py', import.meta.url));

let s: TestServer;
let seen: Record<string, unknown>;

beforeAll(async () => {
  if (BOTO3.missing) return;
  process.env.STRATA_LIFECYCLE_DAY_MS = '1000';
  s = await startTestServer({ config: { lifecycleInterval: 200 } });
  const r = await mustRun(BOTO3.path, [SCRIPT, JSON.stringify({ endpoint: s.url, key: [ACCESS_KEY, SECRET_KEY], bucket: 'boto3-lifecycle' })], { env: botocoreEnv() });
  try {
    seen = JSON.parse(r.stdout) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`lifecycle_boto3.py printed no JSON: ${String(e)}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
  }
}, 120_000);
afterAll(async () => {
  await s?.stop();
  delete process.env.STRATA_LIFECYCLE_DAY_MS;
});

BOTO3.describe('lifecycle with boto3', () => {
  it('configurations read back exactly as sent; a missing ID is made up', () => {
    expect(seen.put).toBe(200);
    expect(seen.rules_back).toEqual(seen.rules_sent);
    expect(seen.made_up_id).toBe(true);
  });

  it('refusals with S3 status and code', () => {
    expect(seen.errors).toEqual({
      days0: '400 InvalidArgument',
      status_lower: '400 MalformedXML',
      same_id: '400 InvalidArgument',
      id_too_long: '400 InvalidArgument',
      bad_date: '400 InvalidArgument',
      transition: '501 NotImplemented',
    });
  });

  it('x-amz-expiration follows the tag filter', () => {
    expect(seen.header_tagged).toMatch(/^expiry-date="\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT", rule-id="tagged"$/);
    expect(seen.header_untagged).toBeNull();
  });

  it('the worker removes the noncurrent version, then the delete marker left alone', () => {
    expect(seen.versions_left).toBe(0);
    expect(seen.head_after).toBe(404);
  });

  it('DeleteBucketLifecycle: 204, and the configuration is gone', () => {
    expect(seen.delete).toBe(204);
    expect(seen.get_after_delete).toBe('404 NoSuchLifecycleConfiguration');
  });
});
