/**
 * Runs s3rver (a devDependency) as a second S3 server for the s3 provider tests: a
 * child process on 127.0.0.1, a random free port, a temp directory, one bucket.
 * On Node 20 s3rver needs --openssl-legacy-provider (its list continuation tokens
 * use a cipher OpenSSL 3 only offers there).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const S3RVER_BUCKET = 'strata';
/** s3rver's built-in account. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface RunningS3rver {
  endpoint: string;
  dir: string;
  stop(): Promise<void>;
}

/** Longest wait for s3rver to report its port. */
const START_TIMEOUT_MS = 20_000;

export async function startS3rver(): Promise<RunningS3rver> {
  const dir = await mkdtemp(join(tmpdir(), 'strata-s3rver-'));
  const bin = createRequire(import.meta.url).resolve('s3rver/bin/s3rver.js');
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--openssl-legacy-provider',
      bin,
      '-d',
      dir,
      '-a',
      '127.0.0.1',
      '-p',
      '0',
      '--silent',
      '--configure-bucket',
      S3RVER_BUCKET,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] }
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const endpoint = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`s3rver did not start: ${out}`)),
      START_TIMEOUT_MS
    );
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /listening on ([\d.]+):(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(`http://${m[1]}:${m[2]}`);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`s3rver exited with ${code}: ${out}`));
    });
  });
  return {
    endpoint,
    dir,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
