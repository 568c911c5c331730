/**
 * @module Starting and stopping a throwaway Ceph cluster with the RADOS Gateway (1 mon, 1
 * memstore OSD, no manager) for bench:providers and the test/ceph lane
 * (test/support/ceph.ts wraps it). The cluster is made by test/ceph/scripts/start-ceph.sh in
 * a fresh temp directory and removed by stop().
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** test/ceph/scripts, found from bench/ (tsx, vitest) or dist/bench/ (built). */
const SCRIPTS = (() => {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const rel of ['../test/ceph/scripts', '../../test/ceph/scripts']) {
    if (existsSync(join(here, rel, 'start-ceph.sh'))) return join(here, rel);
  }
  return join(here, '../test/ceph/scripts');
})();

/** Starting a memstore cluster takes ~15-30 s on a shared machine; allow for a busy one. */
export const CEPH_START_TIMEOUT_MS = 240_000;

export interface CephCluster {
  /** `http://127.0.0.1:<port>` of the RADOS Gateway. */
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The cluster's directory (logs under log/). */
  dir: string;
  /** Stops every daemon and removes the directory; never throws. */
  stop(): Promise<void>;
}

/** Two consecutive free TCP ports on 127.0.0.1 (RGW on the first, the mon on the second). */
async function freePortPair(): Promise<number> {
  const tryListen = (port: number) =>
    new Promise<number | undefined>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(undefined));
      s.listen(port, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
  for (let i = 0; i < 20; i++) {
    const port = await tryListen(0);
    if (port === undefined || port >= 65535) continue;
    if ((await tryListen(port + 1)) !== undefined) return port;
  }
  throw new Error('no pair of free ports on 127.0.0.1');
}

/**
 * Starts a cluster (Debian's ceph-mon, ceph-osd, radosgw, ceph-common must be installed).
 * Throws with the script's stderr when it does not come up, after removing what it started.
 */
export async function startCephCluster(): Promise<CephCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-ceph-'));
  const port = await freePortPair();
  const stop = async (): Promise<void> => {
    await run('bash', [join(SCRIPTS, 'stop-ceph.sh'), dir, '--purge'], { timeout: 120_000 }).catch(
      () => {}
    );
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
  return {
    endpoint: env.S3_ENDPOINT,
    accessKeyId: env.AWS_ACCESS_KEY_ID,
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
    dir,
    stop,
  };
}

/** Creates `bucket` on an S3 endpoint (the cluster) with one signed PUT (our own SigV4 client). */
export async function createCephBucket(
  cluster: Pick<CephCluster, 'endpoint' | 'accessKeyId' | 'secretAccessKey'>,
  bucket: string
): Promise<void> {
  const { signRequest } = await import('../src/sigv4/index.js');
  const host = new URL(cluster.endpoint).host;
  const signed = signRequest(
    { method: 'PUT', path: `/${bucket}`, headers: { host } },
    {
      credentials: { accessKeyId: cluster.accessKeyId, secretAccessKey: cluster.secretAccessKey },
      region: 'us-east-1',
      service: 's3',
    }
  );
  const res = await fetch(`${cluster.endpoint}/${bucket}`, {
    method: 'PUT',
    headers: { ...signed.headers },
  });
  if (res.status !== 200) throw new Error(`create bucket ${bucket}: HTTP ${res.status} ${await res.text()}`);
}
