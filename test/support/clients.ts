/**
 * @module Optional external clients: the programs some integration suites drive that npm
 * cannot install (rclone, restic, s3cmd, the aws CLI, python3 with boto3).
 *
 * A suite wraps its tests in `clientSuite(CLIENTS.x).describe(...)`. When the client is
 * usable, that is a plain describe(). When it is not, the suite is skipped (its hooks do not
 * run) and every skipped test carries `meta.missingClient`: what is missing and the exact
 * command that installs it, which missing-clients-reporter.ts prints at the end of the run.
 * With STRATA_REQUIRE_CLIENTS=1 (.ci/run sets it after installing them) a missing client
 * instead fails the test file at collection, naming the same command, so CI never skips.
 *
 * Clients are looked up once, when the test file is collected (before any server starts, so
 * the synchronous probes here stall nothing).
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /** Set on tests skipped because a client is missing: what, and how to install it. */
    missingClient?: string;
  }
}

/** The environment variable that turns a missing client into a failure. */
export const REQUIRE_CLIENTS_VAR = 'STRATA_REQUIRE_CLIENTS';
/** Longest a version probe (`aws --version`, importing boto3) may take, ms. */
const PROBE_TIMEOUT_MS = 30_000;

/** Where a client was found, or why no usable one was. */
export type Lookup = { path: string } | { problem: string };

export interface ClientSpec {
  /** What messages call it. */
  label: string;
  /** The exact command(s) that install a usable version. */
  install: string;
  /** What the suites that drive it prove (the README lists the same). */
  enables: string;
  /** Finds a usable program on this machine. Never throws. */
  find(): Lookup;
}

/**
 * The botocore release that made CRC32 request checksums and response validation the default
 * (January 2025); the aws CLI and boto3 suites assert those defaults on the wire.
 */
const BOTOCORE_CHECKSUM_DEFAULTS: readonly number[] = [1, 36];

export const CLIENTS = {
  rclone: {
    label: 'rclone',
    install: 'apt-get install rclone',
    enables:
      'test/integration/rclone.test.ts: copy, check, sync and purge of a tree; test/integration/versions-clients.test.ts: --s3-versions, --s3-version-at, cleanup-hidden',
    find: () => program('rclone'),
  },
  restic: {
    label: 'restic',
    install: 'apt-get install restic',
    enables: 'test/integration/restic.test.ts: backup, check --read-data, restore, prune',
    find: () => program('restic'),
  },
  s3cmd: {
    label: 's3cmd',
    install: 'apt-get install s3cmd',
    enables: 'test/integration/s3cmd.test.ts: mb, put (multipart), ls, get, del, rb',
    find: () => program('s3cmd'),
  },
  aws: {
    label: 'the aws CLI v1 (>= 1.37)',
    // PyPI's awscli is v1. Debian's awscli package is v2, whose defaults differ on the wire
    // (CRC64NVME part checksums, ranged downloads without If-Match): the suite asserts v1's.
    install: "pip install 'awscli>=1.37' (v1: Debian's awscli package is v2, which differs)",
    enables:
      'test/integration/aws-cli.test.ts: aws s3 and s3api with the 2025 checksum defaults; test/integration/versions-clients.test.ts: s3api list-object-versions, get-object --version-id',
    find: findAwsCli,
  },
  boto3: {
    label: 'python3 with boto3 >= 1.36',
    install:
      "apt-get install python3-boto3 (Debian 13+; on older systems: pip install 'boto3>=1.36')",
    enables:
      'test/integration/boto3.test.ts: boto3 with default and when_required checksums; test/integration/surface-boto3.test.ts: presigned POST, metadata, conditional writes, attributes; test/integration/versions-clients.test.ts: versions, restore by copy, version-by-version cleanup',
    find: findBoto3Python,
  },
} satisfies Record<string, ClientSpec>;

/**
 * Whether a missing client fails instead of skipping: STRATA_REQUIRE_CLIENTS is '1' (yes) or
 * unset, empty or '0' (no). Throws on any other value, so that a typo in CI cannot quietly
 * turn the requirement off.
 */
export function clientsRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env[REQUIRE_CLIENTS_VAR];
  if (v === undefined || v === '' || v === '0') return false;
  if (v === '1') return true;
  throw new Error(`${REQUIRE_CLIENTS_VAR} must be 1 or 0, not ${JSON.stringify(v)}`);
}

/** The one line that says what is missing and how to install it. */
export function missingMessage(spec: ClientSpec, problem: string): string {
  return `${spec.label} is not available (${problem}); install it with: ${spec.install}`;
}

export interface ClientSuite {
  /** The program to run. Throws if the client is missing (the suite is skipped then). */
  readonly path: string;
  /** Why the client is unusable and how to install it; undefined when it is usable. */
  readonly missing: string | undefined;
  /** describe(), skipped with `meta.missingClient` when the client is missing. */
  describe(title: string, fn: () => void): void;
}

/**
 * Looks `spec` up for the calling test file (call it at the top level).
 * @throws Error when the client is missing and clients are required (see
 *   {@link clientsRequired}): the test file then fails with the install command.
 */
export function clientSuite(spec: ClientSpec, env: NodeJS.ProcessEnv = process.env): ClientSuite {
  const found = spec.find();
  const missing = 'problem' in found ? missingMessage(spec, found.problem) : undefined;
  if (missing && clientsRequired(env)) {
    throw new Error(`${missing} (${REQUIRE_CLIENTS_VAR}=1: a missing client is a failure)`);
  }
  return {
    get path(): string {
      if ('path' in found) return found.path;
      throw new Error(`${spec.label} is missing; its suite should have been skipped`);
    },
    missing,
    describe(title, fn) {
      if (missing) describe.skip(title, { meta: { missingClient: missing } }, fn);
      else describe(title, fn);
    },
  };
}

/** The absolute path of an executable `name` on PATH, or undefined. */
export function onPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

function program(name: string): Lookup {
  const path = onPath(name);
  return path ? { path } : { problem: `no ${name} on PATH` };
}

/** Whether dotted `version` is at least `min` (compared part by part, numerically). */
export function versionAtLeast(version: string, min: readonly number[]): boolean {
  const parts = version.split('.').map((p) => Number.parseInt(p, 10));
  for (let i = 0; i < min.length; i++) {
    const v = Number.isNaN(parts[i]) || parts[i] === undefined ? 0 : parts[i];
    if (v !== min[i]) return v > min[i];
  }
  return true;
}

/**
 * `aws --version` prints `aws-cli/1.45.11 Python/3.11.7 Linux/… botocore/1.43.11` (v1) or
 * `aws-cli/2.23.6 Python/3.13.5 Linux/…` (v2). The suite drives v1 from 1.37, the first with
 * botocore's 2025 checksum defaults.
 */
export function awsCliUsable(versionOutput: string): { ok: boolean; version: string } {
  const m = /aws-cli\/(\d+\.\d+(?:\.\d+)?)/.exec(versionOutput);
  if (!m) return { ok: false, version: 'unknown' };
  const version = m[1];
  return { ok: version.startsWith('1.') && versionAtLeast(version, [1, 37]), version };
}

/** The first aws on PATH that is a usable v1 (a v2 earlier on PATH, e.g. Debian's, is passed). */
function findAwsCli(): Lookup {
  const problems: string[] = [];
  for (const path of everyOnPath('aws')) {
    const r = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS });
    const { ok, version } = awsCliUsable(`${r.stdout ?? ''} ${r.stderr ?? ''}`);
    if (ok) return { path };
    const why = version.startsWith('1.') ? 'too old' : 'not v1';
    problems.push(`${path} is aws-cli ${version}, ${why}`);
  }
  return { problem: problems.length ? problems.join(', ') : 'no aws on PATH' };
}

/** Every executable `name` on PATH, in order, each real program once. */
function everyOnPath(name: string, path = process.env.PATH ?? ''): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  for (const dir of path.split(delimiter)) {
    const p = join(dir, name);
    if (!dir || !isExecutable(p)) continue;
    // /bin is often /usr/bin (merged /usr): probe each real program once.
    const real = realpathSync(p);
    if (seen.has(real)) continue;
    seen.add(real);
    found.push(p);
  }
  return found;
}

/**
 * The first python3 that imports boto3 with botocore >= 1.36: each python3 on PATH in order,
 * then /usr/bin/python3 (where the distribution's python3-boto3 installs, which a python3
 * earlier on PATH, e.g. pyenv's, would not see).
 */
function findBoto3Python(): Lookup {
  const candidates = [...everyOnPath('python3')];
  if (isExecutable('/usr/bin/python3')) {
    const real = realpathSync('/usr/bin/python3');
    if (!candidates.some((c) => realpathSync(c) === real)) candidates.push('/usr/bin/python3');
  }
  const problems: string[] = [];
  for (const py of candidates) {
    const r = spawnSync(py, ['-c', 'import boto3, botocore; print(botocore.__version__)'], {
      encoding: 'utf8',
      timeout: PROBE_TIMEOUT_MS,
    });
    const version = r.status === 0 ? r.stdout.trim() : undefined;
    if (version && versionAtLeast(version, BOTOCORE_CHECKSUM_DEFAULTS)) return { path: py };
    problems.push(version ? `${py} has botocore ${version}` : `${py} has no boto3`);
  }
  return { problem: problems.length ? problems.join(', ') : 'no python3' };
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
