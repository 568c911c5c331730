import { describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultMasterKeyFile, deriveKey, loadMasterKey, parseMasterKey } from '../../src/server/master-key.js';
import { recordSyncs } from '../support/sync-recorder.js';

const HEX = 'ab'.repeat(32);

describe('master key', () => {
  it('accepts 64 hex characters or base64 of 32 bytes, and nothing else', () => {
    expect(parseMasterKey(HEX, 't').toString('hex')).toBe(HEX);
    expect(parseMasterKey(Buffer.from(HEX, 'hex').toString('base64'), 't').toString('hex')).toBe(HEX);
    for (const bad of ['', 'ab'.repeat(31), 'ab'.repeat(33), 'zz'.repeat(32), Buffer.alloc(16).toString('base64'), 'x'.repeat(10_000)]) {
      expect(() => parseMasterKey(bad, 't')).toThrow(/32 bytes/);
    }
  });

  it('generates the default key beside the data directory, not inside it, and reuses it', () => {
    const parent = mkdtempSync(join(tmpdir(), 'strata-mk-'));
    try {
      const data = join(parent, 'data');
      const first = loadMasterKey({ dataDir: data });
      expect(first.created).toBe(true);
      expect(first.masterKey!.source).toBe(join(parent, 'data.master-key'));
      expect(defaultMasterKeyFile(data + '/')).toBe(join(parent, 'data.master-key'));
      expect(statSync(first.masterKey!.source).mode & 0o777).toBe(0o600);
      const again = loadMasterKey({ dataDir: data });
      expect(again.created).toBe(false);
      expect(again.masterKey!.key.equals(first.masterKey!.key)).toBe(true);
      expect(again.masterKey!.id).toBe(first.masterKey!.id);
      expect(again.masterKey!.id).not.toContain(first.masterKey!.key.toString('hex').slice(0, 16));
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('prefers the environment, then an explicit file; refuses a missing or world-readable file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-mk-'));
    try {
      const file = join(dir, 'k');
      writeFileSync(file, `${'cd'.repeat(32)}\n`, { mode: 0o600 });
      expect(loadMasterKey({ value: HEX, file }).masterKey!.key.toString('hex')).toBe(HEX);
      expect(loadMasterKey({ file }).masterKey!.key.toString('hex')).toBe('cd'.repeat(32));
      expect(() => loadMasterKey({ file: join(dir, 'missing') })).toThrow(/cannot read master key file/);
      chmodSync(file, 0o644);
      expect(() => loadMasterKey({ file })).toThrow(/chmod 600/);
      expect(loadMasterKey({}).masterKey).toBeUndefined();
      expect(readFileSync(file, 'utf8').trim()).toBe('cd'.repeat(32));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('derives distinct keys per purpose, deterministically', () => {
    const { masterKey } = loadMasterKey({ value: HEX });
    const a = deriveKey(masterKey!, 'strata/keys/seal/v1');
    expect(a.length).toBe(32);
    expect(deriveKey(masterKey!, 'strata/keys/seal/v1').equals(a)).toBe(true);
    expect(deriveKey(masterKey!, 'strata/sse-s3/v1').equals(a)).toBe(false);
    expect(a.equals(masterKey!.key)).toBe(false);
  });
});

describe('master key file durability', () => {
  it('a generated key file is fsynced, and then its directory, before the key is handed out', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'strata-mk-'));
    const rec = await recordSyncs();
    try {
      const data = join(parent, 'data');
      const made = loadMasterKey({ dataDir: data });
      expect(made.created).toBe(true);
      const file = made.masterKey!.source;
      // The key's bytes first, then its entry in the directory beside the data.
      expect(rec.synced).toEqual([file, parent]);
      rec.synced.length = 0;
      loadMasterKey({ dataDir: data }); // read, not created: nothing to sync
      expect(rec.synced).toEqual([]);
    } finally {
      rec.restore();
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('a key file that cannot be made durable is not left behind torn', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'strata-mk-'));
    const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
    const realFsync = fs.fsyncSync;
    fs.fsyncSync = () => {
      throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    };
    syncBuiltinESMExports();
    try {
      const data = join(parent, 'data');
      expect(() => loadMasterKey({ dataDir: data })).toThrow(/EIO/);
      expect(existsSync(defaultMasterKeyFile(data))).toBe(false);
    } finally {
      fs.fsyncSync = realFsync;
      syncBuiltinESMExports();
      rmSync(parent, { recursive: true, force: true });
    }
    // With the disk healthy again the next start creates the key as usual.
    const again = mkdtempSync(join(tmpdir(), 'strata-mk-'));
    try {
      expect(loadMasterKey({ dataDir: join(again, 'data') }).created).toBe(true);
    } finally {
      rmSync(again, { recursive: true, force: true });
    }
  });
});
