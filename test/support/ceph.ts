/**
 * @module A real Ceph cluster (1 mon, 1 in-memory OSD, the RADOS Gateway) for the test files
 * of test/ceph/: one per vitest run, shared by the files (each gets its own bucket), started by
 * the first file that needs it and stopped with its temp directory when the run ends
 * (test/support/ceph-shared.ts, ceph-global-setup.ts). Outside a run with that globalSetup the
 * file starts its own cluster and stops it in stop().
 *
 * Ceph comes from Debian packages, which npm cannot install: a file wraps its tests in
 * `cephSuite.describe(...)` (test/support/clients.ts), so without the packages the suite is
 * skipped with the install command (missing-clients-reporter prints it), and with
 * STRATA_REQUIRE_CLIENTS=1 (.ci/run) the file fails instead. The cluster is made by
 * test/ceph/scripts/start-ceph.sh through bench/providers-ceph.ts (memstore OSD, no manager:
 * the leanest cluster that serves S3).
 */
import {
  CEPH_START_TIMEOUT_MS,
  createCephBucket,
  startCephCluster,
  type CephCluster,
} from '../../bench/providers-ceph.js';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { sharedCephCluster } from './ceph-shared.js';
import { clientSuite, onPath, type ClientSpec } from './clients.js';

export { CEPH_START_TIMEOUT_MS };

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

export interface RunningCeph extends CephCluster {
  /** A bucket created for the test file (a fresh name per call: files never share one). */
  bucket: string;
}

/**
 * The run's cluster (started now if no file has started it yet) with a fresh bucket
 * `<prefix>-<random>` created in it. stop() of the result stops nothing while the cluster is
 * shared (the run's teardown does); a file run without the globalSetup gets a cluster of its
 * own, which stop() stops and removes.
 * @throws Error with the script's output when the cluster does not come up (what it started is
 *   removed), or when the bucket cannot be created.
 */
export async function startCeph(prefix = 'strata-ceph'): Promise<RunningCeph> {
  const bucket = `${prefix}-${randomBytes(4).toString('hex')}`;
  const run = inject('cephRun');
  const cluster: CephCluster = run
    ? { ...(await sharedCephCluster(run.dir, run.ownerPid)), stop: async () => {} }
    : await startCephCluster();
  try {
    await createCephBucket(cluster, bucket);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return { ...cluster, bucket };
}
