/**
 * The connection-limit options of `strata serve` (--max-connections, --header-timeout,
 * --body-timeout, --body-min-bytes): from flags, environment and config file in that order
 * of precedence, 0 accepted (turns a limit off), and anything else that is not a
 * non-negative number refused with a message naming the option — never a silent default.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../../src/server/config.js';

describe('connection limit options', () => {
  it('are read from flags, then environment, then the config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-cfg-'));
    try {
      const file = join(dir, 'c.json');
      writeFileSync(file, JSON.stringify({ maxConnections: 7, headerTimeout: 3, bodyTimeout: 4, bodyMinBytes: 5 }));
      expect(resolveConfig(['--config', file], {})).toMatchObject({ maxConnections: 7, headerTimeoutSeconds: 3, bodyTimeoutSeconds: 4, bodyMinBytes: 5 });
      const env = { STRATA_MAX_CONNECTIONS: '70', STRATA_HEADER_TIMEOUT: '0.5', STRATA_BODY_TIMEOUT: '0', STRATA_BODY_MIN_BYTES: '1' };
      expect(resolveConfig(['--config', file], env)).toMatchObject({ maxConnections: 70, headerTimeoutSeconds: 0.5, bodyTimeoutSeconds: 0, bodyMinBytes: 1 });
      const flags = ['--max-connections', '700', '--header-timeout=30', '--body-timeout', '60', '--body-min-bytes', '65536'];
      expect(resolveConfig([...flags, '--config', file], env)).toMatchObject({ maxConnections: 700, headerTimeoutSeconds: 30, bodyTimeoutSeconds: 60, bodyMinBytes: 65536 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are absent unless given (the server then uses its defaults)', () => {
    const c = resolveConfig([], {});
    expect(c.maxConnections).toBeUndefined();
    expect(c.headerTimeoutSeconds).toBeUndefined();
    expect(c.bodyTimeoutSeconds).toBeUndefined();
    expect(c.bodyMinBytes).toBeUndefined();
  });

  it('refuse negative, non-numeric, fractional counts and out-of-range values', () => {
    for (const [flag, value] of [
      ['--max-connections', '-1'],
      ['--max-connections', '1.5'],
      ['--max-connections', 'many'],
      ['--header-timeout', '-3'],
      ['--header-timeout', 'abc'],
      ['--header-timeout', '100000'],
      ['--body-timeout', ''],
      ['--body-timeout', 'Infinity'],
      ['--body-min-bytes', '16KiB'],
      ['--body-min-bytes', '1e400'],
    ]) {
      expect(() => resolveConfig([`${flag}=${value}`], {}), `${flag} ${value}`).toThrow(new RegExp(`invalid ${flag}`));
    }
  });
});
