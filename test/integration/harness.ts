/**
 * @module Integration-test harness: a real Strata server on 127.0.0.1 (random port, temp
 * data directory, fixed test credentials), in-process or as a child process, stopped and
 * cleaned up when the test ends. Also the environment external clients need (aws, boto3,
 * rclone, s3cmd, restic).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type RunningServer } from '../../src/server/server.js';
import type { ServerConfig } from '../../src/server/config.js';

type StartOptions = NonNullable<Parameters<typeof startServer>[1]>;

export const ACCESS_KEY = 'STRATATESTACCESSKEY1';
export const SECRET_KEY = 'strata-test-secret-key-0123456789abcdef';
export const REGION = 'us-east-1';
/** The test servers' --metrics-token (/metrics is not public). */
export const METRICS_TOKEN = 'strata-test-metrics-token-0123456789';
/** Headers that open /metrics on a test server. */
export const METRICS_AUTH = { authorization: `Bearer ${METRICS_TOKEN}` };
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = join(ROOT, 'dist/src/cli/main.js');

/** Removes a test data directory and the master key generated beside it. */
export function removeDataDir(dataDir: string): void {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(`${dataDir}.master-key`, { force: true });
}

export interface TestServer {
  url: string;
  port: number;
  dataDir: string;
  /** Server log lines (JSON) captured so far. */
  logs: string[];
  /** The in-process server (undefined for a child process). */
  server?: RunningServer;
  child?: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts a server on 127.0.0.1:0 with the test credentials and a fresh data directory
 * (or `dataDir`). `child: true` runs `node dist/src/cli/main.js serve` (or another runtime,
 * e.g. bun) instead of starting it in this process. `config` adds options to an in-process server.
 */
export async function startTestServer(
  opts: {
    child?: boolean;
    runtime?: string;
    dataDir?: string;
    env?: Record<string, string>;
    baseDomain?: string;
    config?: Partial<ServerConfig>;
    /** Repository tuning of an in-process server (startServer's `store`). */
    store?: StartOptions['store'];
    /** A child server: further `serve` options (e.g. ['--erasure', '4+2']). */
    args?: string[];
    /** A child server: the command before the CLI script instead of `runtime` (e.g. a shell
     * that lowers a limit, then execs node). */
    launcher?: string[];
  } = {}
): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'strata-it-'));
  const ownsDir = opts.dataDir === undefined;
  const logs: string[] = [];
  if (!opts.child) {
    const server = await startServer(
      {
        host: '127.0.0.1',
        port: 0,
        data: dataDir,
        log: 'info',
        credentials: [{ accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }],
        metricsToken: METRICS_TOKEN,
        ...(opts.baseDomain ? { baseDomain: opts.baseDomain } : {}),
        ...opts.config,
      },
      { write: (line) => logs.push(line), ...(opts.store ? { store: opts.store } : {}) }
    );
    return {
      url: server.url,
      port: server.port,
      dataDir,
      logs,
      server,
      stop: async () => {
        await server.close();
        if (ownsDir) removeDataDir(dataDir);
      },
    };
  }
  const [command, ...before] = opts.launcher ?? [opts.runtime ?? process.execPath];
  const child = spawn(command!, [...before, CLI, 'serve', '--host', '127.0.0.1', '--port', '0', '--data', dataDir, ...(opts.args ?? [])], {
    env: { ...process.env, STRATA_ACCESS_KEY: ACCESS_KEY, STRATA_SECRET_KEY: SECRET_KEY, STRATA_METRICS_TOKEN: METRICS_TOKEN, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${buf}`)), 30_000);
    const onData = (d: Buffer) => {
      buf += d.toString();
      for (const line of buf.split('\n')) {
        if (line.includes('"msg":"listening"')) {
          clearTimeout(timer);
          child.stdout!.off('data', onData);
          // The lines up to here (start-up warnings among them) are kept as well.
          logs.push(...buf.split('\n').filter((l) => l.startsWith('{')));
          resolve((JSON.parse(line) as { url: string }).url);
          return;
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (buf += d.toString()));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${buf}`)));
  });
  child.stdout!.on('data', (d: Buffer) => logs.push(...d.toString().split('\n').filter(Boolean)));
  return {
    url,
    port: Number(new URL(url).port),
    dataDir,
    logs,
    child,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      if (ownsDir) removeDataDir(dataDir);
    },
  };
}

/** Environment for AWS-style CLIs (aws, boto3) talking to `url`. */
export function awsEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    AWS_ACCESS_KEY_ID: ACCESS_KEY,
    AWS_SECRET_ACCESS_KEY: SECRET_KEY,
    AWS_DEFAULT_REGION: REGION,
    AWS_REGION: REGION,
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_EC2_METADATA_DISABLED: 'true',
    ...extra,
  };
}
