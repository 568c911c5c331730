/**
 * HTTPS on the server's port (`--tls-cert` / `--tls-key`), proved with real clients against
 * a certificate authority made for the test with the openssl CLI: the AWS SDK v3 (trusting
 * the CA through its https agent) and the aws CLI (`--ca-bundle`). SIGHUP reloads the
 * certificate files without dropping the listener: a connection opened before the reload
 * keeps working, new handshakes see the new certificate, and a reload with broken files
 * keeps serving the previous one.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { connect, type PeerCertificate } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  GetObjectCommand,
  PutObjectCommand,
  CreateBucketCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCESS_KEY,
  CLI,
  REGION,
  SECRET_KEY,
  startTestServer,
  type TestServer,
} from './harness.js';
import { botocoreEnv } from './support/aws-client-env.js';
import { mustRun, run } from './support/run-cli.js';
import { CLIENTS, clientSuite, onPath } from '../support/clients.js';

/** The openssl CLI makes the test CA and certificates (Node cannot issue X.509). */
const OPENSSL_SUITE = clientSuite({
  label: 'openssl',
  install: 'apt-get install openssl',
  enables: 'test/integration/tls.test.ts: HTTPS, certificate reload on SIGHUP',
  find: () => {
    const path = onPath('openssl');
    return path ? { path } : { problem: 'no openssl on PATH' };
  },
});
const AWS_CLI = clientSuite(CLIENTS.aws);

const work = mkdtempSync(join(tmpdir(), 'strata-tls-'));
const CA = join(work, 'ca.pem');
const CERT = join(work, 'server.pem');
const KEY = join(work, 'server.key');

function openssl(args: string[]): void {
  execFileSync(OPENSSL_SUITE.path, args, { cwd: work, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Issues a server certificate for 127.0.0.1/localhost signed by the test CA into `prefix`.pem/.key. */
function issue(prefix: string, cn: string): { cert: string; key: string } {
  const key = join(work, `${prefix}.key`);
  const csr = join(work, `${prefix}.csr`);
  const cert = join(work, `${prefix}.pem`);
  const ext = join(work, `${prefix}.ext`);
  writeFileSync(ext, 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  openssl([
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    key,
    '-out',
    csr,
    '-subj',
    `/CN=${cn}`,
  ]);
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    CA,
    '-CAkey',
    join(work, 'ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-out',
    cert,
    '-extfile',
    ext,
  ]);
  return { cert, key };
}

/** The leaf certificate a fresh TLS handshake with the server presents. */
function peerCertificate(port: number): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: '127.0.0.1', port, ca: readFileSync(CA), servername: 'localhost' },
      () => {
        const cert = socket.getPeerCertificate();
        socket.end();
        resolve(cert);
      }
    );
    socket.once('error', reject);
  });
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

let s: TestServer;
let gen1: { cert: string; key: string };
let gen2: { cert: string; key: string };

OPENSSL_SUITE.describe('TLS', () => {
  beforeAll(async () => {
    openssl([
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      CA,
      '-days',
      '2',
      '-subj',
      '/CN=Strata Test CA',
    ]);
    gen1 = issue('gen1', 'strata-gen-1');
    gen2 = issue('gen2', 'strata-gen-2');
    copyFileSync(gen1.cert, CERT);
    copyFileSync(gen1.key, KEY);
    s = await startTestServer({ child: true, env: { STRATA_TLS_CERT: CERT, STRATA_TLS_KEY: KEY } });
  });
  afterAll(async () => {
    await s?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('serves HTTPS on the port; the SDK v3 trusting the CA stores and reads back', async () => {
    expect(s.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const agent = new Agent({ ca: readFileSync(CA), keepAlive: true });
    const client = new S3Client({
      endpoint: s.url,
      region: REGION,
      forcePathStyle: true,
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
      requestHandler: { httpsAgent: agent },
    });
    await client.send(new CreateBucketCommand({ Bucket: 'secure' }));
    await client.send(
      new PutObjectCommand({ Bucket: 'secure', Key: 'hello.txt', Body: 'over TLS' })
    );
    const got = await client.send(new GetObjectCommand({ Bucket: 'secure', Key: 'hello.txt' }));
    expect(await got.Body!.transformToString()).toBe('over TLS');
    // An SDK that does not trust the CA is refused by its own TLS check.
    const untrusting = new S3Client({
      endpoint: s.url,
      region: REGION,
      forcePathStyle: true,
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
      maxAttempts: 1,
    });
    await expect(
      untrusting.send(new GetObjectCommand({ Bucket: 'secure', Key: 'hello.txt' }))
    ).rejects.toThrow(/certificate/i);
    client.destroy();
    untrusting.destroy();
    agent.destroy();
  });

  AWS_CLI.describe('with the aws CLI', () => {
    it('works with the aws CLI given --ca-bundle, and fails without it', async () => {
      const file = join(work, 'upload.txt');
      writeFileSync(file, 'from the aws cli');
      const env = botocoreEnv();
      await mustRun(
        AWS_CLI.path,
        ['s3', 'cp', file, 's3://secure/cli.txt', '--endpoint-url', s.url, '--ca-bundle', CA],
        { env }
      );
      const cat = await mustRun(
        AWS_CLI.path,
        ['s3', 'cp', 's3://secure/cli.txt', '-', '--endpoint-url', s.url, '--ca-bundle', CA],
        { env }
      );
      expect(cat.stdout).toBe('from the aws cli');
      const refused = await run(
        AWS_CLI.path,
        ['s3', 'ls', 's3://secure/', '--endpoint-url', s.url],
        {
          env: { ...env, AWS_MAX_ATTEMPTS: '1' },
        }
      );
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/SSL|certificate/i);
    });
  });

  it('reloads the certificate on SIGHUP without dropping the listener or open connections', async () => {
    const before = await peerCertificate(s.port);
    expect(before.subject.CN).toBe('strata-gen-1');
    // A keep-alive connection opened before the reload.
    const agent = new Agent({ ca: readFileSync(CA), keepAlive: true, maxSockets: 1 });
    const client = new S3Client({
      endpoint: s.url,
      region: REGION,
      forcePathStyle: true,
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
      requestHandler: { httpsAgent: agent },
    });
    await client.send(new PutObjectCommand({ Bucket: 'secure', Key: 'before', Body: '1' }));
    const sockets = () =>
      Object.values(agent.freeSockets).flat().length + Object.values(agent.sockets).flat().length;
    expect(sockets()).toBe(1);
    const socketBefore = Object.values(agent.freeSockets).flat()[0];

    copyFileSync(gen2.cert, CERT);
    copyFileSync(gen2.key, KEY);
    const mark = s.logs.length;
    s.child!.kill('SIGHUP');
    await until('the reload log line', () =>
      s.logs.slice(mark).some((l) => l.includes('"msg":"tls reloaded"'))
    );
    const after = await peerCertificate(s.port);
    expect(after.subject.CN).toBe('strata-gen-2');
    expect(after.fingerprint256).not.toBe(before.fingerprint256);
    // The old connection still serves, on the same socket, and the server is the same process.
    await client.send(new PutObjectCommand({ Bucket: 'secure', Key: 'after', Body: '2' }));
    expect(Object.values(agent.freeSockets).flat()[0]).toBe(socketBefore);
    expect(s.child!.exitCode).toBeNull();

    // A reload with a key that does not match keeps the certificate in use.
    copyFileSync(gen1.key, KEY);
    s.child!.kill('SIGHUP');
    await new Promise((r) => setTimeout(r, 500));
    expect((await peerCertificate(s.port)).subject.CN).toBe('strata-gen-2');
    const got = await client.send(new GetObjectCommand({ Bucket: 'secure', Key: 'after' }));
    expect(await got.Body!.transformToString()).toBe('2');
    client.destroy();
    agent.destroy();
  });

  it('refuses a mismatched or missing pair before touching anything', () => {
    const data = join(work, 'never-created');
    const r = (extra: string[]) => {
      try {
        execFileSync(process.execPath, [CLI, 'serve', '--port', '0', '--data', data, ...extra], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        return { code: 0, stderr: '' };
      } catch (err) {
        const e = err as { status: number; stderr: string };
        return { code: e.status, stderr: e.stderr };
      }
    };
    const mismatch = r(['--tls-cert', gen1.cert, '--tls-key', gen2.key]);
    expect(mismatch.code).toBe(2);
    expect(mismatch.stderr).toMatch(/does not match the certificate/);
    const missing = r(['--tls-cert', join(work, 'nope.pem'), '--tls-key', gen2.key]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--tls-cert: cannot read/);
    const notPem = r(['--tls-cert', join(work, 'gen1.ext'), '--tls-key', gen2.key]);
    expect(notPem.code).toBe(2);
    expect(notPem.stderr).toMatch(/no PEM certificate/);
    expect(() => readFileSync(data)).toThrow(/ENOENT/);
  });
});
