/**
 * Start-up keys, the metrics options, and the bearer-token check.
 *
 * Proves that configured credentials are ensured in the repository (admin unless
 * `"admin": false`, `createBucket` and `name` honoured), that a second start with the same
 * secret passes and with another secret is refused, that a configured capability differing
 * from the stored key is reported (the repository stays in force), that a fresh local
 * repository generates one admin pair into strata-credentials.json (and the next start
 * reuses it), that a repository elsewhere needs given credentials unless it holds keys; that
 * the config file's credentials entries, --metrics-token and --metrics-listen are validated
 * (malformed, hostile and boundary values); and that bearer tokens are parsed strictly and
 * compared exactly.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { Store } from '../../src/store/store.js';
import { KeyRegistry } from '../../src/store/keys-registry.js';
import { createSealer } from '../../src/store/keys-seal.js';
import { bootstrapKeys, CREDENTIALS_FILE } from '../../src/server/credentials.js';
import { resolveConfig } from '../../src/server/config.js';
import { parseListen } from '../../src/server/metrics-options.js';
import { bearerToken, tokenMatches } from '../../src/server/internal-endpoints.js';
import { recordSyncs } from '../support/sync-recorder.js';

const sealer = createSealer({ key: Buffer.alloc(32, 3), id: 'boot', source: 'test' });
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function registry(): Promise<KeyRegistry> {
  return new KeyRegistry(await Store.open(await createMemoryProvider({})), sealer);
}

describe('bootstrapKeys', () => {
  it('ensures configured keys with their capabilities', async () => {
    const reg = await registry();
    const given = [
      { accessKeyId: 'BOOTADMIN0001', secretAccessKey: 'boot-admin-secret-01' },
      { accessKeyId: 'BOOTALT000002', secretAccessKey: 'boot-alt-secret-0002', admin: false, name: 'alt user' },
      { accessKeyId: 'BOOTNOBKT0003', secretAccessKey: 'boot-nob-secret-0003', admin: false, createBucket: false },
    ];
    const r = await bootstrapKeys(reg, given, undefined);
    expect(r).toEqual({ list: given, created: false, warnings: [] });
    expect(reg.list().map((k) => [k.id, k.name, k.admin, k.createBucket])).toEqual([
      ['BOOTADMIN0001', 'BOOTADMIN0001', true, true],
      ['BOOTALT000002', 'alt user', false, true],
      ['BOOTNOBKT0003', 'BOOTNOBKT0003', false, false],
    ]);
    expect(reg.get('BOOTALT000002')).toBe('boot-alt-secret-0002');
    // A second start: same secrets pass; a changed capability is reported, not applied.
    const again = await bootstrapKeys(reg, [given[0]!, { ...given[1]!, admin: true }], undefined);
    expect(again.warnings).toEqual([expect.stringMatching(/BOOTALT000002: the configured admin differ/)]);
    expect(reg.key('BOOTALT000002')!.admin).toBe(false);
    await expect(bootstrapKeys(reg, [{ ...given[0]!, secretAccessKey: 'another-secret-0001' }], undefined)).rejects.toThrow(/differs from the one in the repository/);
    await expect(bootstrapKeys(reg, [{ ...given[0]!, secretAccessKey: 'boot-admin-secret-0' }], undefined)).rejects.toThrow(/differs/);
  });

  it('refuses malformed configured keys before storing anything', async () => {
    const reg = await registry();
    await expect(bootstrapKeys(reg, [{ accessKeyId: 'has space', secretAccessKey: 'long-enough-secret' }], undefined)).rejects.toThrow(/access key id/);
    await expect(bootstrapKeys(reg, [{ accessKeyId: 'SPACEDSECRET', secretAccessKey: ' spaced ' }], undefined)).rejects.toThrow(/secret key/);
    const good = { accessKeyId: 'GOODKEY00001', secretAccessKey: 'good-secret-000001' };
    await expect(bootstrapKeys(reg, [good, { accessKeyId: 'BADNAME00002', secretAccessKey: 'long-enough-secret', name: '' }], undefined)).rejects.toThrow(/key name/);
    expect(reg.list()).toEqual([]);
  });

  it('generates one admin pair for a fresh local repository, and reuses it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-boot-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const reg = await registry();
    const first = await bootstrapKeys(reg, undefined, dir);
    expect(first.created).toBe(true);
    const file = JSON.parse(readFileSync(join(dir, CREDENTIALS_FILE), 'utf8')) as { accessKeyId: string; secretAccessKey: string };
    expect(first.list).toEqual([file]);
    expect(reg.key(file.accessKeyId)!.admin).toBe(true);
    expect(reg.get(file.accessKeyId)).toBe(file.secretAccessKey);
    const second = await bootstrapKeys(reg, undefined, dir);
    expect(second).toEqual({ list: [file], created: false, warnings: [] });
    expect(reg.list()).toHaveLength(1);
  });

  it('makes the generated credentials file durable (its bytes, then its directory entry) before the key is stored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-boot-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const reg = await registry();
    const rec = await recordSyncs();
    let keysWhenSynced: number[] = [];
    const realCreate = reg.create.bind(reg);
    reg.create = async (...args: Parameters<KeyRegistry['create']>) => {
      keysWhenSynced = [rec.synced.length];
      return realCreate(...args);
    };
    try {
      const first = await bootstrapKeys(reg, undefined, dir);
      expect(first.created).toBe(true);
      // Both syncs happened before the key was committed (the memory provider syncs nothing).
      expect(rec.synced).toEqual([join(dir, CREDENTIALS_FILE), dir]);
      expect(keysWhenSynced).toEqual([2]);
    } finally {
      rec.restore();
    }
  });

  it('never brings back a deleted key, configured or generated (regression: a restart re-created it, admin)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-boot-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const reg = await registry();
    const first = await bootstrapKeys(reg, undefined, dir);
    const generated = first.list[0]!;
    const configured = { accessKeyId: 'BOOTLEAKED001', secretAccessKey: 'boot-leaked-secret-1' };
    await bootstrapKeys(reg, [configured], undefined);
    await reg.create({ id: 'NEWADMINKEY01', admin: true });
    await reg.delete(generated.accessKeyId);
    await reg.delete(configured.accessKeyId);
    // The next starts still name both: neither is re-created, each is reported.
    const fromFile = await bootstrapKeys(reg, undefined, dir);
    expect(fromFile.list).toEqual([]);
    expect(fromFile.warnings).toEqual([expect.stringMatching(new RegExp(`access key ${generated.accessKeyId} was deleted from the repository and is not re-created`))]);
    const fromConfig = await bootstrapKeys(reg, [configured, { accessKeyId: 'BOOTFRESH0002', secretAccessKey: 'boot-fresh-secret-2' }], undefined);
    expect(fromConfig.list.map((c) => c.accessKeyId)).toEqual(['BOOTFRESH0002']);
    expect(fromConfig.warnings).toEqual([expect.stringMatching(/access key BOOTLEAKED001 was deleted/)]);
    for (const id of [generated.accessKeyId, configured.accessKeyId]) {
      expect(reg.key(id), id).toBeUndefined();
      expect(reg.get(id), id).toBeUndefined();
    }
    expect(reg.list().map((k) => k.id)).toEqual(['BOOTFRESH0002', 'NEWADMINKEY01']);
    // An explicit create may reuse the id (a new secret, no capability carried over).
    const again = await reg.create({ id: configured.accessKeyId });
    expect(again.record.admin).toBe(false);
    expect(reg.get(configured.accessKeyId)).toBe(again.secret);
  });

  it('does not generate a pair when the repository already holds keys', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-boot-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const reg = await registry();
    await reg.create({ id: 'MANAGEDKEY001', admin: true });
    expect(await bootstrapKeys(reg, undefined, dir)).toEqual({ list: [], created: false, warnings: [] });
    expect(existsSync(join(dir, CREDENTIALS_FILE))).toBe(false);
  });

  it('a repository that is not local needs given credentials unless it holds keys', async () => {
    const reg = await registry();
    await expect(bootstrapKeys(reg, undefined, undefined)).rejects.toThrow(/holds no key/);
    await reg.create({ id: 'MANAGEDKEY001', admin: true });
    expect((await bootstrapKeys(reg, undefined, undefined)).list).toEqual([]);
  });

  it('verifyAll refuses a registry whose master key does not open the keys', async () => {
    const store = await Store.open(await createMemoryProvider({}));
    await new KeyRegistry(store, sealer).create({ id: 'SEALEDKEY0001' });
    const wrong = new KeyRegistry(store, createSealer({ key: Buffer.alloc(32, 4), id: 'other', source: 'test' }));
    expect(() => wrong.verifyAll()).toThrow(/wrong master key: this server's master key other does not open access key SEALEDKEY0001, sealed with master key boot/);
    expect(wrong.get('SEALEDKEY0001')).toBeUndefined();
    expect(() => new KeyRegistry(store, undefined).verifyAll()).toThrow(/no master key is configured/);
    expect(() => new KeyRegistry(store, sealer).verifyAll()).not.toThrow();
  });
});

describe('configuration of keys and metrics', () => {
  function withFile(content: unknown): string {
    const dir = mkdtempSync(join(tmpdir(), 'strata-cfg-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'cfg.json');
    writeFileSync(file, JSON.stringify(content));
    return file;
  }

  it('reads credentials entries with admin, name and createBucket', () => {
    const file = withFile({ credentials: [{ accessKeyId: 'AK1', secretAccessKey: 's1', admin: false, name: 'n', createBucket: false }, { accessKeyId: 'AK2', secretAccessKey: 's2' }] });
    expect(resolveConfig(['--config', file], {}).credentials).toEqual([
      { accessKeyId: 'AK1', secretAccessKey: 's1', admin: false, name: 'n', createBucket: false },
      { accessKeyId: 'AK2', secretAccessKey: 's2' },
    ]);
  });

  it('refuses malformed credentials entries', () => {
    const e = { accessKeyId: 'AKA', secretAccessKey: 's' };
    for (const bad of [[null], ['x'], [{ ...e, accessKeyId: 1 }], [{ ...e, admin: 'false' }], [{ ...e, createBucket: 0 }], [{ ...e, name: [] }], [{ ...e, name: '' }], [{ ...e, name: 'x'.repeat(129) }], [{ ...e, name: 'a\nb' }], [{ ...e, extra: 1 }]]) {
      expect(() => resolveConfig(['--config', withFile({ credentials: bad })], {}), JSON.stringify(bad)).toThrow(/credentials\[0\]/);
    }
  });

  it('validates --metrics-token', () => {
    expect(resolveConfig(['--metrics-token', 'x'.repeat(16)], {}).metricsToken).toBe('x'.repeat(16));
    expect(resolveConfig([], { STRATA_METRICS_TOKEN: 'y'.repeat(256) }).metricsToken).toBe('y'.repeat(256));
    for (const bad of ['short', 'x'.repeat(257), 'has space in it 0123', 'tab\tin-the-token-00', 'ünïcödé-token-000000']) {
      expect(() => resolveConfig(['--metrics-token', bad], {}), bad).toThrow(/metrics-token/);
      // The refused value is a secret: never echoed.
      expect(() => resolveConfig(['--metrics-token', bad], {})).not.toThrow(bad.slice(0, 10));
    }
  });

  it('parses --metrics-listen addresses', () => {
    expect(parseListen('127.0.0.1:9090', 'x')).toEqual({ host: '127.0.0.1', port: 9090 });
    expect(parseListen(':9090', 'x')).toEqual({ host: '127.0.0.1', port: 9090 });
    expect(parseListen('[::1]:0', 'x')).toEqual({ host: '::1', port: 0 });
    expect(parseListen('metrics.local:65535', 'x')).toEqual({ host: 'metrics.local', port: 65535 });
    expect(resolveConfig(['--metrics-listen', '0.0.0.0:9464'], {}).metricsListen).toEqual({ host: '0.0.0.0', port: 9464 });
    expect(() => resolveConfig(['--metrics-listen', 'nope'], {})).toThrow(/--metrics-listen/);
    for (const bad of ['9090', 'host:', 'host:65536', 'host:-1', '::1:80', 'a:b:c', 'host:80x', '[::1]', '']) {
      expect(() => parseListen(bad, '--metrics-listen'), bad).toThrow(/--metrics-listen: must be host:port/);
    }
  });
});

describe('bearer tokens', () => {
  it('parses only `Bearer <token>`', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer   abc  ')).toBe('abc');
    for (const v of [undefined, '', 'Bearer', 'Bearer ', 'Basic abc', 'Bearer a b', 'AWS4-HMAC-SHA256 Credential=x', 'Bearerabc']) expect(bearerToken(v), String(v)).toBeUndefined();
  });

  it('compares exactly', () => {
    const t = 'token-0123456789-abcdef';
    expect(tokenMatches(t, t)).toBe(true);
    for (const other of ['', t.slice(0, -1), `${t}x`, t.toUpperCase(), `x${t.slice(1)}`]) expect(tokenMatches(other, t), other).toBe(false);
  });
});
