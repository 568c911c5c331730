/**
 * The npm-shipped Chromium (test/support/npm-chromium.ts, chromium.ts): unpacking is atomic
 * under concurrent workers, cleans up after killed runs and old versions, and gives a binary
 * that starts with the libraries bundled in the package ahead of any the system has.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseChromium } from './chromium.js';
import { unpackNpmChromium, NPM_CHROMIUM_CACHE } from './npm-chromium.js';

const cache = mkdtempSync(join(tmpdir(), 'strata-npm-chromium-'));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

const withEnv = async <T>(vars: Record<string, string | undefined>, fn: () => Promise<T>) => {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (v: Record<string, string | undefined>) => {
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) delete process.env[k];
      else process.env[k] = x;
    }
  };
  set(vars);
  try {
    return await fn();
  } finally {
    set(saved);
  }
};

describe('npm Chromium unpacking', () => {
  it('two concurrent first uses leave one complete copy and clear dead leftovers', async () => {
    // Leftovers: a partial directory of a run killed an hour ago, a copy of another version,
    // and a partial directory a live worker may still be writing (young: kept).
    const dead = join(cache, '146.0.0.partial-1-deadbeef');
    const live = join(cache, '147.0.0.partial-2-cafebabe');
    for (const d of [dead, live, join(cache, '146.0.0')]) mkdirSync(d);
    writeFileSync(join(cache, '146.0.0', 'chromium'), 'old');
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(dead, hourAgo, hourAgo);

    const [a, b] = await Promise.all([unpackNpmChromium(cache), unpackNpmChromium(cache)]);
    expect(b).toEqual(a);
    expect(readdirSync(cache).sort()).toEqual([a.version, '147.0.0.partial-2-cafebabe'].sort());
    expect(readdirSync(join(cache, a.version)).sort()).toEqual(['chromium', 'lib']);

    // A truncated or foreign binary would not print its version; the major version is the
    // package's (the package is versioned after the Chromium it ships).
    const out = execFileSync(a.executablePath, ['--version'], {
      env: { ...process.env, LD_LIBRARY_PATH: a.libraryPath },
      encoding: 'utf8',
    });
    expect(out).toMatch(new RegExp(`^Chromium ${a.version.split('.')[0]}\\.`));

    // Found again without unpacking: the same answer, and the live partial is still left alone.
    expect(await unpackNpmChromium(cache)).toEqual(a);
    expect(readdirSync(cache)).toContain('147.0.0.partial-2-cafebabe');
  });

  it('resolves NSS, NSPR and expat from the bundled libraries before the system ones', async () => {
    const c = await unpackNpmChromium(cache);
    const ldd = execFileSync('ldd', [c.executablePath], {
      env: { ...process.env, LD_LIBRARY_PATH: c.libraryPath },
      encoding: 'utf8',
    });
    expect(ldd).not.toContain('not found');
    for (const lib of ['libnss3.so', 'libnspr4.so', 'libnssutil3.so', 'libexpat.so.1']) {
      expect(ldd).toContain(`${lib} => ${join(c.libraryPath, lib)}`);
    }
  });
});

describe('which browser the tests launch', () => {
  it('is the npm one by default, with its libraries first on LD_LIBRARY_PATH', async () => {
    const choice = await withEnv({ CHROMIUM_PATH: undefined, LD_LIBRARY_PATH: '/x/y' }, () =>
      chooseChromium()
    );
    expect(choice.source).toBe('npm');
    expect(choice.executablePath.startsWith(NPM_CHROMIUM_CACHE)).toBe(true);
    expect(choice.env.LD_LIBRARY_PATH).toBe(`${join(choice.executablePath, '..', 'lib')}:/x/y`);
  });

  it('is CHROMIUM_PATH when that is set, with the environment untouched', async () => {
    const choice = await withEnv(
      { CHROMIUM_PATH: '/opt/some/chrome', LD_LIBRARY_PATH: undefined },
      () => chooseChromium()
    );
    expect(choice).toMatchObject({ source: 'CHROMIUM_PATH', executablePath: '/opt/some/chrome' });
    expect(choice.env.LD_LIBRARY_PATH).toBeUndefined();
  });
});
