/**
 * Object Lock with boto3 (two keys: the admin, and a writer holding read and write on the
 * bucket) against a real Strata server. The scenario runs in object_lock_boto3.py, which
 * prints what it observed as JSON; every assertion is here. Proves, with botocore's own
 * serialisation of lock headers, retention documents and the bypass header: a COMPLIANCE
 * version (the bucket's default retention) is removed by nobody, bypass or not, and its
 * retention is extended but never shortened; GOVERNANCE yields only to the admin's bypass,
 * not the writer's; a legal hold blocks even the bypass until an owner clears it (the writer
 * cannot); DeleteObjects fails the locked version alone; a locked PUT without a digest is
 * refused, with Content-MD5 accepted; versioning cannot be suspended, the bucket not deleted.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ACCESS_KEY, SECRET_KEY, startTestServer, type TestServer } from './harness.js';
import { adminRequest } from '../../src/admin/client.js';
import { botocoreEnv } from './support/aws-client-env.js';
import { mustRun } from './support/run-cli.js';
import { CLIENTS, clientSuite } from '../support/clients.js';

const BOTO3 = clientSuite(CLIENTS.boto3);
const SCRIPT = fileURLToPath(new URL('./object_lock_boto3.py', import.meta.url));
const WRITER = ['OLBOTOWRITER00000001', 'boto-writer-secret-0123456789-abcdefghij'] as const;
const BUCKET = 'boto3-object-lock';

let s: TestServer;
let created: Record<string, unknown>;
/** What object_lock_boto3.py observed (see the script); error codes or 'ok'. */
interface Seen {
  lock_config_rule: unknown;
  c_head: { mode: string; until_minus_modified_s: number };
  c_delete_version: Record<string, string>;
  c_marker: boolean;
  c_shorten: string;
  c_extend: string;
  c_retention: string;
  c_expected: string;
  c_versions: [boolean, boolean][];
  g_delete_version: Record<string, string>;
  h_delete_held: string;
  h_writer_clears: string;
  h_legal_hold: unknown;
  h_delete_cleared: string;
  multi: unknown;
  c_current_again: boolean;
  bare_put: string;
  bare_put_md5: string;
  suspend: string;
  delete_bucket: string;
}
let seen: Seen;

async function scenario(phase: 'create' | 'lock'): Promise<Record<string, unknown>> {
  const cfg = JSON.stringify({ endpoint: s.url, bucket: BUCKET, admin: [ACCESS_KEY, SECRET_KEY], writer: WRITER, phase });
  const r = await mustRun(BOTO3.path!, [SCRIPT, cfg], { env: botocoreEnv() });
  try {
    return JSON.parse(r.stdout) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`object_lock_boto3.py (${phase}) printed no JSON: ${String(e)}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
  }
}

beforeAll(async () => {
  if (!BOTO3.path) return;
  s = await startTestServer({
    config: { credentials: [{ accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, { accessKeyId: WRITER[0], secretAccessKey: WRITER[1], admin: false }] },
  });
  created = await scenario('create');
  const api = { endpoint: s.url, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } };
  await adminRequest(api, 'POST', ['keys', WRITER[0], 'grant'], { bucket: BUCKET, read: true, write: true });
  seen = (await scenario('lock')) as unknown as Seen;
}, 120_000);
afterAll(async () => {
  await s?.stop();
});

BOTO3.describe('Object Lock with boto3', () => {
  it('CreateBucket with ObjectLockEnabledForBucket: versioning Enabled, lock enabled; the default rule reads back', () => {
    expect(created).toMatchObject({ versioning: 'Enabled', lock_config: { ObjectLockEnabled: 'Enabled' } });
    expect(seen.lock_config_rule).toEqual({ ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 1 } } });
  });

  it('COMPLIANCE (the default retention): removed by nobody, a DELETE makes a marker, extended but never shortened', () => {
    expect(seen.c_head.mode).toBe('COMPLIANCE');
    // LastModified is whole seconds; the retention counts from the commit's millisecond.
    expect(seen.c_head.until_minus_modified_s).toBeGreaterThanOrEqual(86_400);
    expect(seen.c_head.until_minus_modified_s).toBeLessThan(86_401);
    expect(seen.c_delete_version).toEqual({ admin: 'AccessDenied', admin_bypass: 'AccessDenied', writer_bypass: 'AccessDenied' });
    expect(seen.c_marker).toBe(true);
    expect(seen.c_shorten).toBe('AccessDenied');
    expect(seen.c_extend).toBe('ok');
    expect(seen.c_retention).toBe(seen.c_expected);
    expect(seen.c_versions).toEqual([[true, false]]);
  });

  it('GOVERNANCE: only the bypass of a key allowed to bypass removes the version', () => {
    expect(seen.g_delete_version).toEqual({ admin: 'AccessDenied', writer_bypass: 'AccessDenied', admin_bypass: 'ok' });
  });

  it('legal hold: blocks even the bypass; the writer cannot clear it; once cleared the version goes', () => {
    expect(seen.h_delete_held).toBe('AccessDenied');
    expect(seen.h_writer_clears).toBe('AccessDenied');
    expect(seen.h_legal_hold).toEqual({ Status: 'OFF' });
    expect(seen.h_delete_cleared).toBe('ok');
  });

  it('DeleteObjects: the locked version fails alone, its delete marker is removed, the object is current again', () => {
    expect(seen.multi).toEqual({ deleted: [['c', true, true]], errors: [['c', true, 'AccessDenied']] });
    expect(seen.c_current_again).toBe(true);
  });

  it('a locked PUT needs Content-MD5 or a checksum; versioning stays Enabled; the bucket stays', () => {
    expect(seen.bare_put).toBe('InvalidRequest');
    expect(seen.bare_put_md5).toBe('ok');
    expect(seen.suspend).toBe('InvalidBucketState');
    expect(seen.delete_bucket).toBe('BucketNotEmpty');
  });
});
