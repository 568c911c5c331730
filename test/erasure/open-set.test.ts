/**
 * Opening an erasure set for writing (store/erasure-open.ts), whose domains open all at once:
 * a domain another holder has locked fails the open with 'Locked' and leaves none of the other
 * domains locked; a domain that cannot be opened (a file where its directory should be) is
 * served as failed while at most m are, and more than m fail the open naming them, again
 * leaving nothing locked.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireDirectoryLock } from '../../src/provider/fs/directory-lock.js';
import { resolveErasureConfig } from '../../src/provider/erasure/config.js';
import { getBytes, ProviderError } from '../../src/provider/provider.js';
import { openErasureLocation } from '../../src/store/erasure-open.js';
import { randomBytes } from '../support/random.js';
import { tempDir } from '../store/helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** Six directory domains for (4,2) under a fresh temp directory. */
function setOfSix(): { dirs: string[]; config: ReturnType<typeof resolveErasureConfig> } {
  const t = tempDir('open-set');
  cleanups.push(t.cleanup);
  const dirs = Array.from({ length: 6 }, (_, i) => join(t.dir, `disk${i + 1}`));
  return { dirs, config: resolveErasureConfig({ data: dirs.join(','), erasure: '4+2' }) };
}

describe('opening an erasure set', () => {
  it('a domain locked by another holder fails the open with Locked, and no other domain is left locked', async () => {
    const { dirs, config } = setOfSix();
    const held = await acquireDirectoryLock(dirs[3]!);
    const err = await openErasureLocation(config).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).code).toBe('Locked');
    expect((err as Error).message).toContain(dirs[3]!);
    // Every other domain's lock was given back: each can be locked on its own now.
    for (const [i, d] of dirs.entries()) {
      if (i === 3) continue;
      const l = await acquireDirectoryLock(d);
      await l.release();
    }
    await held.release();
    // And the whole set opens, writes and reads.
    const { provider, release } = await openErasureLocation(config);
    const body = randomBytes(300_000, 1);
    await provider.put('chunks/a', body);
    expect(Buffer.compare(Buffer.from(await getBytes(provider, 'chunks/a')), Buffer.from(body))).toBe(0);
    // While it is open, a second open of the same set is refused.
    const again = await openErasureLocation(config).catch((e: unknown) => e);
    expect((again as ProviderError).code).toBe('Locked');
    await release();
    // Closed: the set opens again, and what was written is there.
    const reopened = await openErasureLocation(config);
    expect(Buffer.compare(Buffer.from(await getBytes(reopened.provider, 'chunks/a')), Buffer.from(body))).toBe(0);
    await reopened.release();
  });

  it('up to m domains that cannot be opened are served as failed; more than m fail the open naming them, leaving nothing locked', async () => {
    const { dirs, config } = setOfSix();
    // A file where a domain's directory should be cannot be opened as a domain.
    const blockDomain = (d: string) => {
      rmSync(d, { recursive: true, force: true });
      writeFileSync(d, 'not a directory');
    };
    blockDomain(dirs[1]!);
    blockDomain(dirs[4]!);
    const logged: string[] = [];
    const degraded = await openErasureLocation(config, {}, (_event, fields) => logged.push(String(fields.domain)));
    expect(logged.sort()).toEqual(['d2', 'd5']);
    const body = randomBytes(200_000, 2);
    await degraded.provider.put('chunks/b', body);
    expect(Buffer.compare(Buffer.from(await getBytes(degraded.provider, 'chunks/b')), Buffer.from(body))).toBe(0);
    await degraded.release();

    blockDomain(dirs[5]!);
    const err = await openErasureLocation(config).catch((e: unknown) => e);
    expect((err as ProviderError).code).toBe('Unavailable');
    expect((err as Error).message).toMatch(/3 domains could not be opened, more than m = 2/);
    for (const id of ['d2', 'd5', 'd6']) expect((err as Error).message).toContain(id);
    // The three that did open were closed and unlocked again.
    for (const i of [0, 2, 3]) {
      const l = await acquireDirectoryLock(dirs[i]!);
      await l.release();
    }
    // Directories back: the set opens whole, and what was written degraded reads back.
    for (const i of [1, 4, 5]) {
      rmSync(dirs[i]!, { force: true });
      mkdirSync(dirs[i]!);
    }
    const whole = await openErasureLocation(config);
    expect(Buffer.compare(Buffer.from(await getBytes(whole.provider, 'chunks/b')), Buffer.from(body))).toBe(0);
    await whole.release();
  });
});
