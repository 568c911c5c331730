/**
 * @module A real Ceph cluster (1 mon, 1 in-memory OSD, the RADOS Gateway) for the test files
 * of test/ceph/: started once per file in a temp directory, stopped and removed after.
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
  /** A bucket created for the test file. */
  bucket: string;
}

/**
 * Starts a cluster in a fresh temp directory and creates `bucket` in it. Throws with the
 * script's output when the cluster does not come up (and removes what it started).
 */
export async function startCeph(bucket = 'strata-ceph'): Promise<RunningCeph> {
  const cluster = await startCephCluster();
  try {
    await createCephBucket(cluster, bucket);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return { ...cluster, bucket };
}
