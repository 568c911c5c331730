/**
 * @module Running external command-line clients (rclone, s3cmd, restic, bun) from tests.
 *
 * Always asynchronous: the server under test usually runs in the vitest process, so a
 * blocking spawnSync would stall it and deadlock the client. Every run has a timeout, and
 * a failed run throws with the command line and both output streams, which is what one
 * needs to read a CI failure.
 */
import { spawn } from 'node:child_process';
import { onPath } from '../../support/clients.js';

/** Longest a single client invocation may take before it is killed, ms. */
export const CLI_TIMEOUT_MS = 60_000;

export interface CliResult {
  code: number | null;
  stdout: string;
  /** stdout as bytes (for clients that print file content, e.g. `rclone cat`). */
  stdoutBytes: Buffer;
  stderr: string;
}

export interface CliOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string;
  timeoutMs?: number;
}

/** Runs `cmd args`; resolves with the exit code and output (never rejects on a non-zero exit). */
export function run(cmd: string, args: readonly string[], opts: CliOptions): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      env: opts.env,
      cwd: opts.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: opts.timeoutMs ?? CLI_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (signal)
        stderr += `\n[killed by ${signal}: timeout ${opts.timeoutMs ?? CLI_TIMEOUT_MS} ms?]`;
      const stdoutBytes = Buffer.concat(out);
      resolve({ code, stdout: stdoutBytes.toString('utf8'), stdoutBytes, stderr });
    });
  });
}

/** Like {@link run}, but throws (with the full output) unless the exit code is 0. */
export async function mustRun(
  cmd: string,
  args: readonly string[],
  opts: CliOptions
): Promise<CliResult> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) {
    throw new Error(
      `${cmd} ${args.join(' ')} exited with ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`
    );
  }
  return r;
}

/**
 * The absolute path of `name` on PATH. Throws, naming the Debian package, when it is not
 * installed. A suite whose client may be absent declares it with clientSuite()
 * (test/support/clients.ts) instead, which skips with the install command, or fails only when
 * STRATA_REQUIRE_CLIENTS=1.
 */
export function requireTool(name: string, debianPackage = name): string {
  const path = onPath(name);
  if (path) return path;
  throw new Error(`${name} is not installed (apt-get install ${debianPackage})`);
}

/**
 * The environment for an external client: this process's, without any AWS_*, RCLONE_*,
 * RESTIC_* or S3CMD_* variable a developer or the machine may have set (AWS_CA_BUNDLE, for
 * one, makes rclone refuse to start on plain HTTP) and without proxy settings (the server is
 * on loopback), plus `extra`.
 */
export function clientEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(AWS|RCLONE|RESTIC|S3CMD)_/.test(k) || /^(http|https|all|no)_proxy$/i.test(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}
