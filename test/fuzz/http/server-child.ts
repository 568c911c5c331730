/**
 * @module The server under fuzz: `strata serve` in a child process (so a crash is seen as an
 * exit, and its memory can be measured apart from the fuzzer's), on 127.0.0.1:0 with a fresh
 * data directory and fixed credentials.
 *
 * Memory: the child runs with `--expose-gc` and a preload that, on SIGUSR2, collects garbage
 * and prints `process.memoryUsage()`; RSS is also read from /proc/<pid>/status. The server
 * itself is unchanged.
 *
 * Logs: the server runs at `warn`, so its stdout carries only warnings and errors; lines
 * with `"msg":"internal error"` are collected (each one is a failure for the fuzzer).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The child's --metrics-token (/metrics is not public); fetch /metrics with {@link FUZZ_METRICS_AUTH}. */
export const FUZZ_METRICS_TOKEN = 'strata-fuzz-metrics-token-0123456789';
export const FUZZ_METRICS_AUTH = { authorization: `Bearer ${FUZZ_METRICS_TOKEN}` };

/** What the preload prints on SIGUSR2, before the JSON of process.memoryUsage(). */
const MEMORY_TAG = 'STRATA-FUZZ-MEMORY ';

const PRELOAD = `
process.on('SIGUSR2', () => {
  for (let i = 0; i < 3; i++) globalThis.gc?.();
  process.stderr.write(${JSON.stringify(MEMORY_TAG)} + JSON.stringify(process.memoryUsage()) + '\\n');
});
`;

export interface MemorySample {
  /** Resident set size, bytes (from /proc after the collection). */
  rss: number;
  /** V8 heap committed (used and free pages). */
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export interface ServerChild {
  url: string;
  port: number;
  pid: number;
  /** Internal-error log lines seen so far (JSON). */
  internalErrors: string[];
  /** Set once the process has exited (a crash, unless we stopped it). */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** The last few KiB of stderr (for crash reports). */
  stderrTail(): string;
  /** Collects garbage in the child and returns its memory afterwards. */
  measure(): Promise<MemorySample>;
  stop(): Promise<void>;
}

export interface ServerChildOptions {
  /** A JavaScript file runnable by node that implements `serve` (the bundled strata CLI). */
  entry: string;
  accessKey: string;
  secretKey: string;
  /** The server's pending-write budget, bytes (small values exercise SlowDown). */
  pendingBytes?: number;
  /** Enables virtual-hosted-style requests under this domain. */
  baseDomain?: string;
}

/** RSS of `pid` in bytes, from /proc (Linux); 0 where unavailable. */
export function rssOf(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export async function startServerChild(opts: ServerChildOptions): Promise<ServerChild> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-fuzz-'));
  const preload = join(dir, 'gc-probe.mjs');
  writeFileSync(preload, PRELOAD);
  const data = join(dir, 'data');
  const child: ChildProcess = spawn(
    process.execPath,
    ['--expose-gc', '--import', preload, opts.entry, 'serve', '--host', '127.0.0.1', '--port', '0', '--data', data],
    {
      env: {
        ...process.env,
        STRATA_ACCESS_KEY: opts.accessKey,
        STRATA_SECRET_KEY: opts.secretKey,
        STRATA_LOG: 'warn',
        STRATA_METRICS_TOKEN: FUZZ_METRICS_TOKEN,
        ...(opts.pendingBytes ? { STRATA_PENDING_BYTES: String(opts.pendingBytes) } : {}),
        ...(opts.baseDomain ? { STRATA_BASE_DOMAIN: opts.baseDomain } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }
  );
  let stderr = '';
  let stdoutRest = '';
  const memoryWaiters: ((m: Omit<MemorySample, 'rss'>) => void)[] = [];
  const state: ServerChild = {
    url: '',
    port: 0,
    pid: child.pid!,
    internalErrors: [],
    exit: undefined,
    stderrTail: () => stderr.slice(-4096),
    async measure() {
      const sample = new Promise<Omit<MemorySample, 'rss'>>((resolve) => memoryWaiters.push(resolve));
      child.kill('SIGUSR2');
      const m = await sample;
      return { ...m, rss: rssOf(child.pid!) };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  child.on('exit', (code, signal) => (state.exit = { code, signal }));
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    const lines = (stdoutRest + d).split('\n');
    stdoutRest = lines.pop()!;
    for (const line of lines) if (line.includes('"msg":"internal error"')) state.internalErrors.push(line);
  });
  let stderrRest = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    const lines = (stderrRest + d).split('\n');
    stderrRest = lines.pop()!;
    for (const line of lines) {
      if (line.startsWith(MEMORY_TAG)) {
        const m = JSON.parse(line.slice(MEMORY_TAG.length)) as Omit<MemorySample, 'rss'>;
        memoryWaiters.shift()?.(m);
      } else stderr = (stderr + line + '\n').slice(-65536);
    }
  });
  state.url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 30_000);
    const onData = () => {
      const m = /Strata S3 server on (http:\/\/[^\s]+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        child.stderr!.off('data', onData);
        resolve(m[1]!);
      }
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${stderr}`));
    });
  });
  state.port = Number(new URL(state.url).port);
  return state;
}
