/** openProvider: which URL opens which provider, and where s3 settings come from. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openProvider, type S3Provider } from '../../src/provider/index.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('openProvider', () => {
  it('opens fs for a plain path and a file: URL, memory for memory:', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'strata-open-'));
    dirs.push(dir);
    const a = await openProvider(join(dir, 'a'));
    const b = await openProvider(pathToFileURL(join(dir, 'b')).href);
    expect([a.kind, b.kind]).toEqual(['fs', 'fs']);
    await a.put('k', Buffer.from('v'));
    expect((await (await openProvider(join(dir, 'a'))).head('k')).size).toBe(1);
    expect((await openProvider('memory:')).kind).toBe('memory');
  });

  it('opens s3 from s3:// and http(s):// URLs with credentials from options or the environment', async () => {
    const env = { AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK', AWS_REGION: 'eu-west-3' };
    const s3 = (await openProvider('s3://bkt/repo/one?endpoint=http://127.0.0.1:1', {
      env,
      s3: { conditionalWrites: false },
    })) as S3Provider;
    expect(s3.kind).toBe('s3');
    expect(s3.capabilities.conditionalWrites).toBe(false);
    await s3.close();
    const http = await openProvider('http://127.0.0.1:1/bkt', {
      accessKeyId: 'a',
      secretAccessKey: 'b',
      env: {},
      s3: { conditionalWrites: true },
    });
    expect(http.kind).toBe('s3');
    expect(http.capabilities.conditionalWrites).toBe(true);
    await http.close();
  });

  it('refuses unknown schemes, missing buckets, missing credentials and credentials in the URL', async () => {
    await expect(openProvider('ftp://x/y')).rejects.toThrow(RangeError);
    await expect(
      openProvider('http://127.0.0.1:1/', {
        env: { AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b' },
      })
    ).rejects.toThrow(/bucket/);
    await expect(openProvider('s3://bkt', { env: {} })).rejects.toThrow(/AWS_ACCESS_KEY_ID/);
    await expect(openProvider('http://u:p@127.0.0.1:1/b', { env: {} })).rejects.toThrow(
      /credentials/
    );
  });
});
