import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commandShebang, missingNodeEnv, missingNodeFlags, NODE_ENV, NODE_FLAGS } from '../../src/cli/node-flags.js';

const ROOT = new URL('../../', import.meta.url);

describe('node flags of the strata command', () => {
  it('are what the shebang of the command and npm start pass', () => {
    const shebang = readFileSync(new URL('src/cli/main.ts', ROOT), 'utf8').split('\n')[0];
    expect(shebang).toBe(commandShebang());
    expect(shebang).toBe(`#!/usr/bin/env -S GLIBC_TUNABLES=${NODE_ENV.GLIBC_TUNABLES} node ${NODE_FLAGS.join(' ')}`);
    const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe(`exec env GLIBC_TUNABLES=${NODE_ENV.GLIBC_TUNABLES} node ${NODE_FLAGS.join(' ')} dist/src/cli/main.js serve`);
    expect(NODE_FLAGS).toContain('--initial-old-space-size=64');
  });

  it('names the flags node was started without', () => {
    expect(missingNodeFlags([])).toEqual([...NODE_FLAGS]);
    expect(missingNodeFlags(['--enable-source-maps', ...NODE_FLAGS])).toEqual([]);
    // A different value is not the flag.
    expect(missingNodeFlags(['--initial-old-space-size=8'])).toEqual(['--initial-old-space-size=64']);
  });

  it('names the environment node was started without, or with another value', () => {
    const want = `GLIBC_TUNABLES=${NODE_ENV.GLIBC_TUNABLES}`;
    expect(missingNodeEnv({})).toEqual([want]);
    expect(missingNodeEnv({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' })).toEqual([want]);
    expect(missingNodeEnv({ ...NODE_ENV, PATH: '/bin' })).toEqual([]);
  });
});
