/**
 * `strata serve --commit-log on|off` (STRATA_COMMIT_LOG, config key `commitLog`): the server
 * says at start which commit path it uses; on (the default) commits go to log/ segments (fs),
 * off to commits/ blobs; and one data directory served on, off, on and off again keeps every
 * object a real client wrote under either setting, byte-exact.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { removeDataDir, startTestServer, type TestServer } from './harness.js';
import { CREDS } from './support/bounds.js';
import { REGION } from './harness.js';
import { randomBytes } from '../support/random.js';
import { createFsProvider } from '../../src/provider/fs/index.js';

const dataDir = mkdtempSync(join(tmpdir(), 'strata-it-commitlog-'));
afterAll(() => removeDataDir(dataDir));

/** The commit path the "repository opened" line reports. */
function reported(s: TestServer): unknown {
  const line = s.logs.map((l) => JSON.parse(l) as { msg?: string; commitLog?: unknown }).find((l) => l.msg === 'repository opened');
  expect(line, 'repository opened line').toBeDefined();
  return line!.commitLog;
}

/** Keys of the repository under `prefix` (read with the server stopped). */
async function count(prefix: string): Promise<number> {
  const provider = await createFsProvider({ dir: dataDir });
  try {
    let n = 0;
    let startAfter: string | undefined;
    for (;;) {
      const page = await provider.list({ prefix, ...(startAfter ? { startAfter } : {}) });
      n += page.items.length;
      if (!page.next) return n;
      startAfter = page.next;
    }
  } finally {
    await provider.close();
  }
}

it('serves one data directory with the log on (default), off, on and off again, and every object reads back', { timeout: 60_000 }, async () => {
  const written = new Map<string, Buffer>();
  const round = async (config: { commitLog?: 'on' | 'off' }, expectLog: string, n: number) => {
    const logBefore = await count('log/');
    const commitsBefore = await count('commits/');
    const s = await startTestServer({ dataDir, config });
    try {
      expect(reported(s)).toBe(expectLog);
      const s3 = new S3Client({ endpoint: s.url, region: REGION, forcePathStyle: true, credentials: CREDS, maxAttempts: 1 });
      if (n === 0) await s3.send(new CreateBucketCommand({ Bucket: 'logopt' }));
      for (let i = 0; i < 5; i++) {
        const body = Buffer.from(randomBytes(100 + i * 700, n * 10 + i + 1));
        await s3.send(new PutObjectCommand({ Bucket: 'logopt', Key: `r${n}/k${i}`, Body: body }));
        written.set(`r${n}/k${i}`, body);
      }
      for (const [key, body] of written) {
        const got = await s3.send(new GetObjectCommand({ Bucket: 'logopt', Key: key }));
        expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body), key).toBe(true);
      }
      s3.destroy();
    } finally {
      await s.stop();
    }
    if (expectLog === 'on') {
      // A new segment for the first batch after the open; no commit blob for these writes.
      expect(await count('log/')).toBeGreaterThan(logBefore);
      expect(await count('commits/')).toBe(commitsBefore);
    } else {
      expect(await count('commits/')).toBeGreaterThanOrEqual(commitsBefore + 5);
      expect(await count('log/')).toBe(logBefore);
    }
  };
  await round({}, 'on', 0); // the default (store/repository-options.ts DEFAULTS, config.ts)
  await round({ commitLog: 'off' }, 'off', 1);
  await round({ commitLog: 'on' }, 'on', 2);
  await round({ commitLog: 'off' }, 'off', 3);
});
