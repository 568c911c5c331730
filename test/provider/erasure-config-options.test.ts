/**
 * `--erasure k+m` wiring (server/erasure-option.ts, server/config.ts): flag, STRATA_ERASURE and
 * the config file's `erasure` section resolve into one set-up; several domains without
 * --erasure and --erasure with one directory are refused; every verb with --data refuses the
 * same way through the real `strata` command (dist/, exit code 2, nothing created).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/cli/args.js';
import { configFromArgs, resolveConfig, SERVER_OPTIONS } from '../../src/server/config.js';
import { erasureSetup, erasureSetupForVerb } from '../../src/server/erasure-option.js';
import { OptionError } from '../../src/server/option-types.js';
import type { OptionDef } from '../../src/server/options.js';
import { homeDirectory } from '../../src/store/open.js';
import { CLI } from '../integration/harness.js';

const tmp = mkdtempSync(join(tmpdir(), 'strata-ec-opt-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function optionError(fn: () => unknown, re: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(OptionError);
  expect((caught as Error).message).toMatch(re);
}

describe('strata serve --erasure', () => {
  it('resolves --data with braces and --erasure into a six-domain (4,2) set', () => {
    const c = resolveConfig(['--data', `${tmp}/disk{1...6}`, '--erasure', '4+2'], {});
    expect(c.erasure).toBe('4+2');
    expect(c.erasureConfig!.k).toBe(4);
    expect(c.erasureConfig!.m).toBe(2);
    expect(c.erasureConfig!.domains.map((d) => d.url)).toEqual([1, 2, 3, 4, 5, 6].map((i) => `${tmp}/disk${i}`));
    expect(homeDirectory(c.data, c.erasureConfig)).toBe(`${tmp}/disk1`);
    expect(resolveConfig(['--data', '/srv/repo'], {}).erasureConfig).toBeUndefined();
  });

  it('takes STRATA_ERASURE from the environment; the flag wins over it', () => {
    const env = { STRATA_ERASURE: '3+1', STRATA_DATA_DIR: `${tmp}/e{1...5}` };
    expect(resolveConfig([], env).erasureConfig!.k).toBe(3);
    expect(resolveConfig(['--erasure', '2+2'], env).erasureConfig!.m).toBe(2);
  });

  it('refuses braces without --erasure, --erasure with one directory, and a bad k+m', () => {
    optionError(() => resolveConfig(['--data', '/mnt/disk{1...6}'], {}), /--data "\/mnt\/disk\{1\.\.\.6\}" names several failure domains: add --erasure k\+m/);
    optionError(() => resolveConfig(['--data', '/mnt/a,/mnt/b,/mnt/c'], {}), /names several failure domains/);
    optionError(() => resolveConfig(['--data', '/srv/repo', '--erasure', '4+2'], {}), /erasure 4\+2 needs several domains/);
    optionError(() => resolveConfig(['--data', '/mnt/disk{1...6}', '--erasure', '4-2'], {}), /--erasure: '4-2' is not an erasure spec: give k\+m/);
    optionError(() => resolveConfig(['--data', '/mnt/disk{1...6}', '--erasure', '5+2'], {}), /erasure 5\+2: 7 fragments need 7 distinct eligible domains, have 6/);
    optionError(() => resolveConfig(['--data', '/mnt/disk{1...100000}', '--erasure', '4+2'], {}), /at most 1024/);
    optionError(() => erasureSetup({ data: '/d{1...3}' }), /names several failure domains/);
  });

  it('reads the config file section: labels and policy, --erasure overriding k+m, errors naming the file', () => {
    const file = join(tmp, 'strata.json');
    const domains = [1, 2, 3, 4, 5, 6].map((i) => ({ id: `disk${i}`, url: `${tmp}/f${i}`, labels: { zone: `z${i % 3}` } }));
    writeFileSync(file, JSON.stringify({ port: 9100, erasure: { k: 2, m: 1, domains, policy: { spread: [{ label: 'zone', max: 1 }] }, cellSize: '128KiB' } }));
    const parsed = (args: string[]) => parseArgs(args, { options: SERVER_OPTIONS as readonly OptionDef<never>[] });
    const c = configFromArgs(parsed(['--config', file]), {});
    expect(c.port).toBe(9100);
    expect(c.erasureConfig!.domains[2]).toEqual({ id: 'disk3', url: `${tmp}/f3`, labels: { zone: 'z0' } });
    expect(c.erasureConfig!.policy).toEqual({ spread: [{ label: 'zone', max: 1 }] });
    expect(c.erasureConfig!.cellSize).toBe(131072);
    // 4+2 needs 6 zones with at most one fragment per zone; the file has 3.
    optionError(() => configFromArgs(parsed(['--config', file, '--erasure', '4+2']), {}), /spread zone max 1 needs 6 zones, have 3/);
    writeFileSync(file, JSON.stringify({ erasure: '4+2' }));
    optionError(() => configFromArgs(parsed(['--config', file]), {}), new RegExp(`${file}: erasure: expected an object`));
    writeFileSync(file, JSON.stringify({ erasure: { k: 2, m: 1, domains, disks: 3 } }));
    optionError(() => configFromArgs(parsed(['--config', file]), {}), /unknown key "disks"/);
  });
});

describe('admin verbs: --config gives them the server\'s erasure section', () => {
  it('reads domains, labels and policy from the file; --erasure overrides k+m; the file is checked as serve checks it', async () => {
    const file = join(tmp, 'verb.json');
    const domains = [1, 2, 3, 4].map((i) => ({ id: `x${i}`, url: `${tmp}/vx${i}`, labels: { host: `h${i}` } }));
    writeFileSync(file, JSON.stringify({ port: 9000, credentials: [], erasure: { k: 2, m: 1, domains, policy: { spread: [{ label: 'host', max: 1 }] } } }));
    const c = (await erasureSetupForVerb({ data: './data', configFile: file }))!;
    expect(c.domains.map((d) => d.id)).toEqual(['x1', 'x2', 'x3', 'x4']);
    expect(c.policy.spread).toEqual([{ label: 'host', max: 1 }]);
    expect((await erasureSetupForVerb({ data: './data', configFile: file, erasure: '3+1' }))!.k).toBe(3);
    expect(await erasureSetupForVerb({ data: './data' })).toBeUndefined();
    writeFileSync(file, JSON.stringify({ prot: 9000 }));
    await expect(erasureSetupForVerb({ data: './data', configFile: file })).rejects.toThrow(/unknown key 'prot' \(did you mean 'port'\?\)/);
    writeFileSync(file, JSON.stringify({ erasure: { k: 2, m: 1, domains, policy: { spread: [{ label: 'rack', max: 1 }] } } }));
    await expect(erasureSetupForVerb({ data: './data', configFile: file })).rejects.toThrow(/spread rack: domain x1 has no rack label/);
    await expect(erasureSetupForVerb({ data: './data', configFile: join(tmp, 'missing.json') })).rejects.toThrow(/cannot read config file/);
  });
});

describe('every verb with --data refuses an erasure set-up it cannot use, before touching anything', () => {
  const verbs: string[][] = [
    ['serve', '--port', '0'],
    ['verify'],
    ['gc', '--dry-run'],
    ['expire'],
    ['lifecycle', 'run'],
    ['keys', 'list'],
    ['fork', 'a', 'b'],
    ['history', 'bucket'],
    ['restore', 'bucket', '--to', '1h'],
  ];
  it.each(verbs)('strata %s', (...argv) => {
    const base = join(tmp, `v-${argv[0]}`);
    const run = (extra: string[]) => spawnSync(process.execPath, [CLI, ...argv, ...extra], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' }, timeout: 20_000 });
    const a = run(['--data', `${base}/disk{1...6}`]);
    expect(a.status).toBe(2);
    expect(a.stderr).toMatch(/names several failure domains: add --erasure k\+m/);
    if (argv[0] === 'serve' || argv[0] === 'gc') {
      // The other refusals come from the same resolution; two verbs show it end to end.
      const b = run(['--data', `${base}/one`, '--erasure', '4+2']);
      expect(b.status).toBe(2);
      expect(b.stderr).toMatch(/erasure 4\+2 needs several domains/);
      const c = run(['--data', `${base}/disk{1...3}`, '--erasure', '4+2']);
      expect(c.status).toBe(2);
      expect(c.stderr).toMatch(/6 fragments need 6 distinct eligible domains, have 3 of 3/);
    }
    expect(existsSync(base)).toBe(false);
  });
});
