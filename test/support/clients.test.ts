/**
 * Optional clients (test/support/clients.ts, missing-clients-reporter.ts): a suite whose client
 * is missing is skipped without running its hooks and the run ends naming the install command;
 * STRATA_REQUIRE_CLIENTS=1 turns the same thing into a failure; the lookups pick a usable
 * program (a new enough aws CLI, the python3 that has a new enough boto3) and say why not.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLIENTS,
  awsCliUsable,
  clientSuite,
  clientsRequired,
  onPath,
  versionAtLeast,
} from './clients.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE_CONFIG = 'test/support/fixtures/clients.vitest.config.ts';
const work = mkdtempSync(join(tmpdir(), 'strata-clients-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Writes an executable shell script `dir/name` that prints `out` and exits with `code`. */
function fakeProgram(dir: string, name: string, out: string, code = 0): string {
  const p = join(dir, name);
  writeFileSync(p, `#!/bin/sh\nprintf '%s\\n' '${out}'\nexit ${code}\n`);
  chmodSync(p, 0o755);
  return p;
}

/** A new empty directory `name` under the test's work directory. */
function dirWith(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  return dir;
}

/** Runs vitest on the fixtures with `env` added; resolves with its exit code and output. */
function runFixtures(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', FIXTURE_CONFIG],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...env } }
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out }));
  });
}

describe('a suite whose client is missing, in a real vitest run', () => {
  it('is skipped with the install command shown, and its hooks do not run', async () => {
    const { code, out } = await runFixtures({ STRATA_REQUIRE_CLIENTS: '' });
    expect(code, out).toBe(0);
    expect(out).not.toContain('of a skipped suite ran');
    expect(out).toMatch(/Tests\s+1 passed \| 2 skipped/);
    expect(out).toContain(
      'test/support/fixtures/missing-client.fixture.ts: strata-fixture-client is not available ' +
        '(no strata-fixture-client on PATH); install it with: apt-get install strata-fixture-client'
    );
    expect(out).toContain('Skipped 1 suite(s): a client they drive is not installed');
  });

  it('fails the test file when STRATA_REQUIRE_CLIENTS=1, naming the install command', async () => {
    const { code, out } = await runFixtures({ STRATA_REQUIRE_CLIENTS: '1' });
    expect(code).toBe(1);
    expect(out).toMatch(/FAIL\s+test\/support\/fixtures\/missing-client\.fixture\.ts/);
    expect(out).toContain(
      'install it with: apt-get install strata-fixture-client ' +
        '(STRATA_REQUIRE_CLIENTS=1: a missing client is a failure)'
    );
    // The present client's suite still runs and passes.
    expect(out).toMatch(/Tests\s+1 passed/);
    expect(out).not.toContain('Skipped 1 suite(s)');
  });
});

describe('clientSuite and STRATA_REQUIRE_CLIENTS', () => {
  const absent = {
    label: 'x',
    install: 'apt-get install x',
    enables: '',
    find: () => ({ problem: 'no x on PATH' }),
  };

  it('accepts 1 (required) and unset, empty or 0 (not); refuses anything else', () => {
    expect(clientsRequired({})).toBe(false);
    expect(clientsRequired({ STRATA_REQUIRE_CLIENTS: '' })).toBe(false);
    expect(clientsRequired({ STRATA_REQUIRE_CLIENTS: '0' })).toBe(false);
    expect(clientsRequired({ STRATA_REQUIRE_CLIENTS: '1' })).toBe(true);
    for (const typo of ['true', 'yes', '2', ' 1']) {
      expect(() => clientsRequired({ STRATA_REQUIRE_CLIENTS: typo })).toThrow(/must be 1 or 0/);
    }
  });

  it('a missing client: skipped (path throws) unless required (throws at once)', () => {
    const s = clientSuite(absent, {});
    expect(s.missing).toBe('x is not available (no x on PATH); install it with: apt-get install x');
    expect(() => s.path).toThrow(/x is missing/);
    expect(() => clientSuite(absent, { STRATA_REQUIRE_CLIENTS: '1' })).toThrow(
      /apt-get install x \(STRATA_REQUIRE_CLIENTS=1/
    );
  });

  it('every known client names an install command and what it enables', () => {
    for (const spec of Object.values(CLIENTS)) {
      expect(spec.install).toMatch(/^(apt-get|pip) install \S+/);
      expect(spec.enables).toMatch(/^test\/integration\/[\w-]+\.test\.ts: /);
    }
  });
});

describe('finding a usable program', () => {
  it('onPath finds executables only, in PATH order', () => {
    const a = dirWith('path-a');
    const b = dirWith('path-b');
    writeFileSync(join(a, 'tool'), 'not executable');
    fakeProgram(b, 'tool', '');
    expect(onPath('tool', `${a}:${b}`)).toBe(join(b, 'tool'));
    expect(onPath('tool', `${a}`)).toBeUndefined();
    expect(onPath('tool', '')).toBeUndefined();
  });

  it('versionAtLeast compares numerically, part by part', () => {
    expect(versionAtLeast('1.36.0', [1, 36])).toBe(true);
    expect(versionAtLeast('1.43.11', [1, 36])).toBe(true);
    expect(versionAtLeast('1.9.99', [1, 36])).toBe(false);
    expect(versionAtLeast('1.29.27+repack', [1, 36])).toBe(false);
    expect(versionAtLeast('2', [1, 36])).toBe(true);
    expect(versionAtLeast('garbage', [1, 36])).toBe(false);
  });

  it('the aws CLI must be v1 with the 2025 checksum defaults (>= 1.37)', () => {
    const v1 = 'aws-cli/1.45.11 Python/3.11.7 Linux/6.1 botocore/1.43.11';
    expect(awsCliUsable(v1)).toEqual({ ok: true, version: '1.45.11' });
    expect(awsCliUsable('aws-cli/1.37.0 Python/3.11 Linux botocore/1.36.0').ok).toBe(true);
    expect(awsCliUsable('aws-cli/1.36.40 Python/3.11 Linux botocore/1.35.99').ok).toBe(false);
    // v2 (Debian's package) sends CRC64NVME part checksums and no If-Match on ranged GETs.
    expect(awsCliUsable('aws-cli/2.23.6 Python/3.13.5 Linux/6.12 source/x86_64.debian.13')).toEqual(
      { ok: false, version: '2.23.6' }
    );
    expect(awsCliUsable('command not found')).toEqual({ ok: false, version: 'unknown' });
  });

  it('an old or v2 aws on PATH is reported as such; a new v1 is used', () => {
    const v2 = dirWith('aws-v2');
    fakeProgram(v2, 'aws', 'aws-cli/2.23.6 Python/3.13.5 Linux/6.12 source/x86_64.debian.13');
    const old = dirWith('aws-old');
    fakeProgram(old, 'aws', 'aws-cli/1.29.0 Python/3.11.2 Linux/6.1.0 botocore/1.31.0');
    const fresh = dirWith('aws-new');
    fakeProgram(fresh, 'aws', 'aws-cli/1.45.11 Python/3.11.7 Linux/6.1 botocore/1.43.11');
    const saved = process.env.PATH;
    try {
      process.env.PATH = `${v2}:${old}`;
      expect(CLIENTS.aws.find()).toEqual({
        problem:
          `${join(v2, 'aws')} is aws-cli 2.23.6, not v1, ` +
          `${join(old, 'aws')} is aws-cli 1.29.0, too old`,
      });
      process.env.PATH = `${v2}:${old}:${fresh}`;
      expect(CLIENTS.aws.find()).toEqual({ path: join(fresh, 'aws') });
    } finally {
      process.env.PATH = saved;
    }
  });

  it('boto3: the first python3 with botocore >= 1.36 wins, others are named', () => {
    const old = dirWith('py-old');
    fakeProgram(old, 'python3', '1.29.27');
    const broken = dirWith('py-none');
    fakeProgram(broken, 'python3', "ModuleNotFoundError: No module named 'boto3'", 1);
    const fresh = dirWith('py-new');
    fakeProgram(fresh, 'python3', '1.43.11');
    const saved = process.env.PATH;
    try {
      process.env.PATH = `${old}:${broken}:${fresh}`;
      expect(CLIENTS.boto3.find()).toEqual({ path: join(fresh, 'python3') });
      process.env.PATH = `${old}:${broken}`;
      const r = CLIENTS.boto3.find();
      // /usr/bin/python3 is tried last; what it has depends on the machine.
      if ('problem' in r) {
        expect(r.problem).toContain(`${join(old, 'python3')} has botocore 1.29.27`);
        expect(r.problem).toContain(`${join(broken, 'python3')} has no boto3`);
      } else {
        expect(r.path).toBe('/usr/bin/python3');
      }
    } finally {
      process.env.PATH = saved;
    }
  });
});
