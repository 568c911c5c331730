/**
 * The connection-limit options of `strata serve` (--max-connections, --header-timeout,
 * --body-timeout, --body-min-bytes) in the option table: read from flags, environment and
 * config file in that order, with their defaults when absent, durations and sizes with
 * units, 0 accepted where it turns a limit off, and everything else refused with a message
 * naming the option — never a silent default.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../../src/server/config.js';
import { CONNECTION_DEFAULTS } from '../../src/server/connection-guard.js';

describe('connection limit options', () => {
  it('are read from flags, then environment, then the config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-cfg-'));
    try {
      const file = join(dir, 'c.json');
      writeFileSync(file, JSON.stringify({ 'max-connections': 7, headerTimeout: '3s', 'body-timeout': '4s', bodyMinBytes: 5 }));
      expect(resolveConfig(['--config', file], {})).toMatchObject({ maxConnections: 7, headerTimeoutMs: 3000, bodyTimeoutMs: 4000, bodyMinBytes: 5 });
      const env = { STRATA_MAX_CONNECTIONS: '70', STRATA_HEADER_TIMEOUT: '500ms', STRATA_BODY_TIMEOUT: '0', STRATA_BODY_MIN_BYTES: '1' };
      expect(resolveConfig(['--config', file], env)).toMatchObject({ maxConnections: 70, headerTimeoutMs: 500, bodyTimeoutMs: 0, bodyMinBytes: 1 });
      const flags = ['--max-connections', '0', '--header-timeout=30s', '--body-timeout', '1m', '--body-min-bytes', '64KiB'];
      expect(resolveConfig([...flags, '--config', file], env)).toMatchObject({ maxConnections: 0, headerTimeoutMs: 30_000, bodyTimeoutMs: 60_000, bodyMinBytes: 65_536 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('take the guard defaults when absent', () => {
    const c = resolveConfig([], {});
    expect(c.maxConnections).toBe(CONNECTION_DEFAULTS.maxConnections);
    expect(c.headerTimeoutMs).toBe(CONNECTION_DEFAULTS.headerTimeoutMs);
    expect(c.bodyTimeoutMs).toBe(CONNECTION_DEFAULTS.bodyWindowMs);
    expect(c.bodyMinBytes).toBe(CONNECTION_DEFAULTS.bodyMinBytes);
    expect(c.idleTimeoutMs).toBe(CONNECTION_DEFAULTS.idleTimeoutMs);
    expect(resolveConfig(['--idle-timeout', '90s'], {}).idleTimeoutMs).toBe(90_000);
    expect(resolveConfig([], { STRATA_IDLE_TIMEOUT: '2m' }).idleTimeoutMs).toBe(120_000);
  });

  it('refuse negative, non-numeric, unitless durations and out-of-range values', () => {
    for (const [flag, value] of [
      ['--max-connections', '-1'],
      ['--max-connections', '1.5'],
      ['--max-connections', 'many'],
      ['--header-timeout', '20'], // seconds or milliseconds would be a guess
      ['--header-timeout', '-3s'],
      ['--header-timeout', '2d'],
      ['--body-timeout', ''],
      ['--body-timeout', 'soon'],
      ['--body-min-bytes', '0'],
      ['--body-min-bytes', '16 lots'],
      ['--idle-timeout', '0'], // 0 would keep idle connections forever
      ['--idle-timeout', '5'],
    ]) {
      expect(() => resolveConfig([`${flag}=${value}`], {}), `${flag} ${value}`).toThrow(new RegExp(flag));
    }
  });
});
