/**
 * @module A real Ceph cluster (1 mon, 1 in-memory OSD, the RADOS Gateway) for the test files
 * of test/ceph/: started once per file in a temp directory, stopped and removed after.
 *
 * Ceph comes from Debian packages, which npm cannot install: a file wraps its tests in
 * `cephSuite.describe(...)` (test/support/clients.ts), so without the packages the suite is
 * skipped with the install command (missing-clients-reporter prints it), and with
 * STRATA_REQUIRE_CLIENTS=1 (.ci/run) the file fails instead. The cluster is made by
 * test/ceph/scripts/start-ceph.sh (memstore OSD, no manager: the leanest cluster that serves S3).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { clientSuite, onPath, type ClientSpec } from './clients.js';
import { ROOT } from '../integration/harness.js';

const run = promisify(execFile);

/** The programs start-ceph.sh needs. */
const CEPH_PROGRAMS = [
  'ceph-mon',
  'ceph-osd',
  'radosgw',
  'radosgw-admin',
  'ceph',
  'monmaptool',
  'ceph-authtool',
  'curl',
  'uuidgen',
];

export const CEPH: ClientSpec = {
  label: 'Ceph with the RADOS Gateway (Debian packages)',
  install:
    'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ' +
    'ceph-mon ceph-mgr ceph-osd radosgw ceph-common',
  enables:
    'test/ceph/*.test.ts: the s3 provider contract, anchor races, a large repository, kills and GC on Ceph RGW',
  find() {
    const missing = CEPH_PROGRAMS.filter((p) => !onPath(p));
    return missing.length === 0
      ? { path: onPath('radosgw')! }
      : { problem: `missing ${missing.join(', ')}` };
  },
};

/** The suite wrapper of every test/ceph file (call at the top level of the file). */
export const cephSuite = clientSuite(CEPH);

const SCRIPTS = join(ROOT, 'test/ceph/scripts');
/** Starting a memstore cluster takes ~15-20 s on an idle machine; allow for a busy one. */
export const CEPH_START_TIMEOUT_MS = 240_000;

export interface RunningCeph {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A bucket created for the test file. */
  bucket: string;
  /** The cluster's directory (logs under log/). */
  dir: string;
  stop(): Promise<void>;
}

/** Two consecutive free TCP ports on 127.0.0.1 (RGW on the first, the mon on the second). */
async function freePortPair(): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    if (port >= 65535) continue;
    const next = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port + 1, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (next) return port;
  }
  throw new Error('no pair of free ports');
}

/**
 * Starts a cluster in a fresh temp directory and creates `bucket` in it. Throws with the
 * script's output when the cluster does not come up (and removes what it started).
 */
export async function startCeph(bucket = 'strata-ceph'): Promise<RunningCeph> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-ceph-'));
  const port = await freePortPair();
  const stop = async (): Promise<void> => {
    await run('bash', [join(SCRIPTS, 'stop-ceph.sh'), dir, '--purge'], {
      timeout: 120_000,
    }).catch(() => {});
  };
  try {
    await run('bash', [join(SCRIPTS, 'start-ceph.sh'), dir, String(port)], {
      timeout: CEPH_START_TIMEOUT_MS,
      env: { ...process.env, CEPH_OBJECTSTORE: 'memstore', CEPH_OSD_SIZE: '4G', CEPH_MGR: '0' },
    });
  } catch (err) {
    await stop();
    const e = err as { stderr?: string; message: string };
    throw new Error(`start-ceph.sh failed: ${e.message}\n${e.stderr ?? ''}`);
  }
  const env = Object.fromEntries(
    readFileSync(join(dir, 's3.env'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)])
  );
  const ceph: RunningCeph = {
    endpoint: env.S3_ENDPOINT,
    accessKeyId: env.AWS_ACCESS_KEY_ID,
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
    bucket,
    dir,
    stop,
  };
  try {
    await createBucket(ceph, bucket);
  } catch (err) {
    await stop();
    throw err;
  }
  return ceph;
}

/** Creates another bucket on the cluster. */
export async function createBucket(ceph: RunningCeph, bucket: string): Promise<void> {
  const client = new S3Client({
    endpoint: ceph.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: ceph.accessKeyId, secretAccessKey: ceph.secretAccessKey },
  });
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    client.destroy();
  }
}
