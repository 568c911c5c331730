/**
 * `strata serve` configuration: the option table resolved from flags, environment and config
 * file. Regression for issue 8 §7: unknown flags and stray arguments were ignored
 * (`--prot 9001` served on 9000, `serve ../dir` used ./data), `--pending-budget 0|64MiB|abc`
 * fell back to the default and a negative value refused every write, and config-file keys
 * spelled like the flags (or mistyped) were silently ignored.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULTS, SERVER_OPTIONS, resolveConfig } from '../../src/server/config.js';
import { MAX_CONFIG_FILE_BYTES } from '../../src/server/config-file.js';
import { OptionError } from '../../src/server/option-types.js';

const dir = mkdtempSync(join(tmpdir(), 'strata-cfg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(content: unknown): string {
  const path = join(dir, `c${n++}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

function refuses(args: string[], env: NodeJS.ProcessEnv, re: RegExp): void {
  let caught: unknown;
  try {
    resolveConfig(args, env);
  } catch (err) {
    caught = err;
  }
  expect(caught, `${args.join(' ')} should be refused`).toBeInstanceOf(OptionError);
  expect((caught as Error).message).toMatch(re);
}

describe('resolveConfig', () => {
  it('gives the defaults with no flags, env or file', () => {
    expect(resolveConfig([], {})).toEqual({
      host: '127.0.0.1',
      port: 9000,
      data: './data',
      log: 'info',
      pendingBytes: 64 * 1024 * 1024,
      historyBudget: 256 * 1024 * 1024,
      commitLog: 'on',
      directIo: 'auto',
      shutdownTimeout: 25_000,
      maxUploadsPerBucket: 10_000,
      uploadExpiry: 7 * 86_400_000,
      uploadSweepInterval: 10 * 60_000,
      gcInterval: 3_600_000,
      gcGrace: 3_600_000,
      lifecycleInterval: 3600_000,
      retention: 30 * 86_400_000,
      scrubInterval: 86_400_000,
      scrubRate: 64 * 2 ** 20,
      expiryInterval: 3_600_000,
      maxConnections: 1024,
      keyShare: 50,
      headerTimeoutMs: 20_000,
      bodyTimeoutMs: 20_000,
      bodyMinBytes: 16 * 1024,
      idleTimeoutMs: 60_000,
      sseCOverHttp: false,
    });
    expect(DEFAULTS).toMatchObject({ host: '127.0.0.1', port: 9000, data: './data', log: 'info' });
  });

  it('parses the retention window and the expiry interval (0 allowed for both) and refuses what makes no sense', () => {
    expect(resolveConfig(['--retention', '12h', '--expiry-interval', '0'], {})).toMatchObject({ retention: 12 * 3_600_000, expiryInterval: 0 });
    expect(resolveConfig([], { STRATA_RETENTION: '0', STRATA_EXPIRY_INTERVAL: '90m' })).toMatchObject({ retention: 0, expiryInterval: 90 * 60_000 });
    for (const args of [
      ['--retention', '-1d'],
      ['--retention', '36501d'],
      ['--retention', 'forever'],
      ['--expiry-interval', '8d'],
      ['--expiry-interval', 'soon'],
    ]) {
      expect(() => resolveConfig(args, {}), args.join(' ')).toThrow(OptionError);
    }
  });

  it('parses the multipart upload options and refuses what makes no sense', () => {
    const c = resolveConfig(['--max-uploads-per-bucket', '50', '--upload-expiry', '36h', '--upload-sweep-interval', '250ms'], {});
    expect(c).toMatchObject({ maxUploadsPerBucket: 50, uploadExpiry: 36 * 3_600_000, uploadSweepInterval: 250 });
    expect(resolveConfig([], { STRATA_UPLOAD_EXPIRY: '1d12h' }).uploadExpiry).toBe(36 * 3_600_000);
    for (const args of [
      ['--max-uploads-per-bucket', '0'],
      ['--max-uploads-per-bucket', '-5'],
      ['--max-uploads-per-bucket', '1e3'],
      ['--upload-expiry', '0'],
      ['--upload-expiry', '500ms'],
      ['--upload-expiry', '7'],
      ['--upload-expiry', '7 days'],
      ['--upload-sweep-interval', '0'],
      ['--upload-sweep-interval', '2d'],
    ]) {
      expect(() => resolveConfig(args, {}), args.join(' ')).toThrow();
    }
  });

  it('takes flags over environment over file over defaults, option by option', () => {
    const cfg = file({ port: 7000, host: '0.0.0.0', region: 'file-region', log: 'warn' });
    const env = { STRATA_CONFIG: cfg, STRATA_PORT: '8000', STRATA_HOST: '::1' };
    const c = resolveConfig(['--port', '9001'], env);
    expect(c).toMatchObject({
      port: 9001,
      host: '::1',
      region: 'file-region',
      log: 'warn',
      configFile: cfg,
    });
    expect(resolveConfig(['--config', cfg], {})).toMatchObject({ port: 7000, host: '0.0.0.0' });
    expect(resolveConfig(['--port=0', '--log=off'], {})).toMatchObject({ port: 0, log: 'off' });
  });

  it('treats an empty environment variable as unset', () => {
    expect(resolveConfig([], { STRATA_REGION: '', STRATA_PORT: '' })).toMatchObject({ port: 9000 });
    expect(resolveConfig([], { STRATA_REGION: '' }).region).toBeUndefined();
  });

  it('refuses unknown flags with a hint, repeated flags, and missing values', () => {
    refuses(['--prot', '9001'], {}, /unknown option --prot \(did you mean --port\?\)/);
    refuses(['--pending', '1MiB'], {}, /did you mean --pending-budget/);
    refuses(['-p', '9001'], {}, /unknown option -p/);
    refuses(['--port', '1', '--port', '2'], {}, /--port is given twice/);
    refuses(['--port'], {}, /--port needs a value/);
    refuses(['--data', '--port', '1'], {}, /--data needs a value/);
  });

  it('refuses stray positional arguments instead of serving ./data', () => {
    refuses(
      ['../dir'],
      {},
      /unexpected argument '\.\.\/dir' \(the repository is given with --data DIR\)/
    );
    refuses(['--port', '1', 'extra'], {}, /unexpected argument 'extra'/);
    refuses(['--', '--port'], {}, /unexpected argument '--port'/);
  });

  it('parses --pending-budget with units and refuses 0, negatives and garbage', () => {
    expect(resolveConfig(['--pending-budget', '64MiB'], {}).pendingBytes).toBe(64 * 2 ** 20);
    expect(resolveConfig(['--pending-budget', '1048576'], {}).pendingBytes).toBe(2 ** 20);
    expect(resolveConfig([], { STRATA_PENDING_BUDGET: '2GiB' }).pendingBytes).toBe(2 ** 31);
    expect(
      resolveConfig([], { STRATA_CONFIG: file({ 'pending-bytes': '512MiB' }) }).pendingBytes
    ).toBe(2 ** 29);
    expect(resolveConfig([], { STRATA_CONFIG: file({ pendingBytes: 4194304 }) }).pendingBytes).toBe(
      4 * 2 ** 20
    );
    refuses(['--pending-budget', '0'], {}, /--pending-budget: 0 is out of range/);
    refuses(['--pending-budget', 'abc'], {}, /--pending-budget: 'abc' is not a size/);
    refuses(['--pending-budget=-5'], {}, /out of range/);
    refuses(['--pending-budget', '-5'], {}, /out of range/);
    refuses(['--pending-budget', '1KiB'], {}, /out of range \(between 1MiB and 1TiB\)/);
    // The history budget: sizes with units, from flag or env; nonsense refused.
    expect(resolveConfig(['--history-budget', '1GiB'], {}).historyBudget).toBe(2 ** 30);
    expect(resolveConfig([], { STRATA_HISTORY_BUDGET: '512KiB' }).historyBudget).toBe(2 ** 19);
    refuses(['--history-budget', '0'], {}, /--history-budget: 0 is out of range/);
    refuses(['--history-budget', 'lots'], {}, /--history-budget: 'lots' is not a size/);
    refuses([], { STRATA_PENDING_BUDGET: '64XB' }, /STRATA_PENDING_BUDGET: '64XB' is not a size/);
  });

  it('parses --commit-log on|off from flag, env and config file, and refuses anything else', () => {
    expect(resolveConfig(['--commit-log', 'off'], {}).commitLog).toBe('off');
    expect(resolveConfig(['--commit-log=on'], { STRATA_COMMIT_LOG: 'off' }).commitLog).toBe('on');
    expect(resolveConfig([], { STRATA_COMMIT_LOG: 'off' }).commitLog).toBe('off');
    expect(resolveConfig([], { STRATA_CONFIG: file({ commitLog: 'off' }) }).commitLog).toBe('off');
    expect(resolveConfig([], { STRATA_CONFIG: file({ 'commit-log': 'off' }) }).commitLog).toBe('off');
    // The environment wins over the file.
    expect(resolveConfig([], { STRATA_COMMIT_LOG: 'on', STRATA_CONFIG: file({ commitLog: 'off' }) }).commitLog).toBe('on');
    refuses(['--commit-log', 'maybe'], {}, /--commit-log: 'maybe' is not one of on, off/);
    refuses(['--commit-log', 'OFF'], {}, /is not one of on, off/);
    refuses(['--commit-log', ''], {}, /--commit-log/);
    refuses([], { STRATA_COMMIT_LOG: 'x'.repeat(5000) }, /STRATA_COMMIT_LOG/);
    refuses([], { STRATA_CONFIG: file({ commitLog: false }) }, /commit-log: expected one of on, off, got boolean false/);
  });

  it('validates every value: port, host, log, region, base-domain', () => {
    refuses(['--port', '65536'], {}, /--port: 65536 is out of range/);
    refuses(['--port', '80a'], {}, /not a whole number/);
    refuses([], { STRATA_PORT: '-1' }, /STRATA_PORT/);
    refuses(['--host', 'bad host'], {}, /not a host name/);
    refuses(['--log', 'debug'], {}, /--log: 'debug' is not one of info, warn, off/);
    refuses(['--region', 'us/east'], {}, /not a region/);
    refuses(['--base-domain', '127.0.0.1'], {}, /IP address/);
    refuses(['--data', ''], {}, /--data: must not be empty/);
    expect(resolveConfig(['--host', '::'], {}).host).toBe('::');
    expect(resolveConfig(['--base-domain', 's3.example.com'], {}).baseDomain).toBe(
      's3.example.com'
    );
  });

  it('reports every bad value at once, from every source', () => {
    refuses(
      ['--port', 'x', '--log', 'y'],
      { STRATA_PENDING_BUDGET: '0' },
      /--port[\s\S]*--log[\s\S]*STRATA_PENDING_BUDGET/
    );
    // A bad value is an error even where a higher source overrides it.
    refuses(['--port', '9001'], { STRATA_PORT: 'nine' }, /STRATA_PORT/);
  });
});

describe('config file', () => {
  it('accepts keys spelled like the flags and the old camelCase names', () => {
    const kebab = file({
      'base-domain': 'a.example',
      'pending-bytes': '2MiB',
      'master-key-file': '/k',
    });
    expect(resolveConfig(['--config', kebab], {})).toMatchObject({
      baseDomain: 'a.example',
      pendingBytes: 2 ** 21,
      masterKeyFile: '/k',
    });
    const camel = file({ baseDomain: 'b.example', pendingBytes: 2 ** 21, masterKeyFile: '/k2' });
    expect(resolveConfig(['--config', camel], {})).toMatchObject({
      baseDomain: 'b.example',
      pendingBytes: 2 ** 21,
      masterKeyFile: '/k2',
    });
  });

  it('refuses unknown and misspelled keys, naming them', () => {
    refuses(['--config', file({ prot: 9001 })], {}, /unknown key 'prot' \(did you mean 'port'\?\)/);
    refuses(
      ['--config', file({ basedomain: 'x.example', port: 1 })],
      {},
      /unknown key 'basedomain'/
    );
    refuses(['--config', file({ port: 1, zzz: 1, yyy: 2 })], {}, /'zzz'.*'yyy'/);
    refuses(
      ['--config', file({ config: '/other.json' })],
      {},
      /'config' cannot be set in a config file/
    );
    refuses(
      ['--config', file({ 'base-domain': 'a.example', baseDomain: 'b.example' })],
      {},
      /'baseDomain' and 'base-domain' are the same option/
    );
  });

  it('refuses bad values in the file, naming the file and key', () => {
    const p = file({ port: '90000' });
    refuses(['--config', p], {}, new RegExp(`${p}: port: 90000 is out of range`));
    refuses(['--config', file({ port: 1.5 })], {}, /not a whole number/);
    refuses(['--config', file({ log: ['info'] })], {}, /got a list/);
    refuses(['--config', file({ region: null })], {}, /got null/);
  });

  it('refuses unreadable, malformed, oversized and non-regular files', () => {
    refuses(['--config', join(dir, 'missing.json')], {}, /cannot read config file .*missing\.json/);
    refuses(['--config', file('{"port": 9000,')], {}, /not valid JSON/);
    refuses(['--config', file('[1,2]')], {}, /must hold a JSON object/);
    refuses(['--config', file('"port"')], {}, /must hold a JSON object/);
    refuses(['--config', file('null')], {}, /must hold a JSON object/);
    refuses(
      ['--config', file(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString('latin1'))],
      {},
      /not valid JSON|not UTF-8/
    );
    refuses(
      ['--config', file(`{"port": 1, "x": "${'a'.repeat(MAX_CONFIG_FILE_BYTES)}"}`)],
      {},
      /limit is/
    );
    const sub = join(dir, 'a-directory');
    mkdirSync(sub);
    refuses(['--config', sub], {}, /not a regular file/);
    refuses(['--config', '/dev/zero'], {}, /not a regular file/);
    refuses(['--config', ''], {}, /--config: must not be empty/);
    // A UTF-8 byte-order mark is fine.
    expect(resolveConfig(['--config', file('\ufeff{"port": 1}')], {}).port).toBe(1);
  });

  it('reads credentials: one entry or a list, with optional admin: false', () => {
    const one = file({ credentials: { accessKeyId: 'AKIDONE', secretAccessKey: 's3cret' } });
    expect(resolveConfig(['--config', one], {}).credentials).toEqual([
      { accessKeyId: 'AKIDONE', secretAccessKey: 's3cret' },
    ]);
    const list = file({
      credentials: [
        { accessKeyId: 'S3TMAINACCESSKEY0001', secretAccessKey: 'a'.repeat(40) },
        { accessKeyId: 'S3TALTACCESSKEY00002', secretAccessKey: 'b'.repeat(40), admin: false },
      ],
    });
    expect(resolveConfig(['--config', list], {}).credentials).toEqual([
      { accessKeyId: 'S3TMAINACCESSKEY0001', secretAccessKey: 'a'.repeat(40) },
      { accessKeyId: 'S3TALTACCESSKEY00002', secretAccessKey: 'b'.repeat(40), admin: false },
    ]);
    // The environment pair wins over the file.
    expect(
      resolveConfig(['--config', list], { STRATA_ACCESS_KEY: 'AKENV', STRATA_SECRET_KEY: 'x' })
        .credentials
    ).toEqual([{ accessKeyId: 'AKENV', secretAccessKey: 'x' }]);
  });

  it('refuses malformed credentials', () => {
    const bad: [unknown, RegExp][] = [
      [[], /the list is empty/],
      ['AK:SECRET', /expected \{/],
      [
        [
          { accessKeyId: 'AK1', secretAccessKey: 's' },
          { accessKeyId: 'AK1', secretAccessKey: 't' },
        ],
        /AK1 is listed twice/,
      ],
      [{ accessKeyId: 'AK1' }, /secretAccessKey/],
      [{ accessKeyId: 'AK/1', secretAccessKey: 's' }, /accessKeyId/],
      [{ accessKeyId: 'AK1', secretAccessKey: ' s' }, /secretAccessKey/],
      [{ accessKeyId: 'AK1', secretAccessKey: 's\n' }, /secretAccessKey/],
      [{ accessKeyId: 'AK1', secretAccessKey: 's', admin: 'no' }, /admin must be true or false/],
      [{ accessKeyId: 'AK1', secretAccessKey: 's', Admin: false }, /unknown key\(s\) 'Admin'/],
      [{ accessKeyId: 12345, secretAccessKey: 's' }, /accessKeyId/],
      [
        Array.from({ length: 1001 }, (_, i) => ({ accessKeyId: `AK${i}xx`, secretAccessKey: 's' })),
        /more than 1000/,
      ],
    ];
    for (const [credentials, re] of bad) refuses(['--config', file({ credentials })], {}, re);
    refuses(
      [],
      { STRATA_ACCESS_KEY: 'AKONLY' },
      /set both STRATA_ACCESS_KEY and STRATA_SECRET_KEY/
    );
    refuses([], { STRATA_ACCESS_KEY: 'AK ONE', STRATA_SECRET_KEY: 's' }, /accessKeyId/);
  });

  it('touches nothing: resolving a config with a missing data directory creates nothing', () => {
    const data = join(dir, 'not-yet', 'data');
    const c = resolveConfig(['--data', data, '--pending-budget', '8MiB'], {});
    expect(c.data).toBe(data);
    expect(existsSync(join(dir, 'not-yet'))).toBe(false);
  });

  it('every option of the table has a unique flag, env name and help text', () => {
    const names = SERVER_OPTIONS.map((d) => d.name);
    expect(new Set(names).size).toBe(names.length);
    const envs = SERVER_OPTIONS.flatMap((d) => (d.env ? [d.env] : []));
    expect(new Set(envs).size).toBe(envs.length);
    for (const d of SERVER_OPTIONS) {
      expect(d.name).toMatch(/^[a-z][a-z0-9-]*$/);
      expect(d.help.length).toBeGreaterThan(5);
      if (d.default !== undefined)
        expect(d.type.parse(d.type.format(d.default as never), 'default')).toEqual(d.default);
    }
  });
});
