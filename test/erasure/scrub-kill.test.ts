/**
 * `strata scrub` as operators run it (the built CLI, a child process): SIGKILLed in the middle
 * of a rate-limited repair pass, run again it resumes from the saved cursor and completes the
 * pass, repairing a wiped domain, with a report covering the whole pass; the exit code says
 * whether anything is lost; `strata domains` shows every domain. Needs `npm run build:js`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createErasureProvider } from '../../src/provider/erasure/index.js';
import { resolveErasureConfig } from '../../src/provider/erasure/config.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import type { Provider } from '../../src/provider/provider.js';
import type { ErasureProvider } from '../../src/provider/erasure/types.js';
import type { ScrubReport } from '../../src/provider/erasure/scrub.js';
import { Store } from '../../src/store/store.js';
import { stream, tempDir } from '../store/helpers.js';
import { randomBytes } from '../support/random.js';
import { cursorSaved, runCli } from './scrub-cli.js';


let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function openSet(pattern: string): Promise<ErasureProvider> {
  const config = resolveErasureConfig({ data: pattern, erasure: '4+2' });
  const domains = await Promise.all(config.domains.map(async (d) => ({ id: d.id, labels: d.labels, provider: (await createFsProvider({ dir: d.url })) as Provider })));
  return createErasureProvider({ config, domains });
}



describe('strata scrub (CLI) on an erasure repository', () => {
  it('SIGKILLed mid-repair, resumes from its cursor and brings a wiped domain back', async () => {
    const { dir: root, cleanup } = tempDir('scrub-kill');
    cleanups.push(cleanup);
    const pattern = join(root, 'd{1...6}');
    const p = await openSet(pattern);
    const store = await Store.open(p);
    await store.createBucket('bkt');
    const size = 1536 * 1024; // above the 1 MiB stripe threshold: striped
    for (let i = 0; i < 12; i++) await store.putObject('bkt', `o${i}`, stream(randomBytes(size, i + 1)), { size });
    await store.checkpoint();
    await store.close();
    await p.close();
    rmSync(join(root, 'd4'), { recursive: true, force: true });
    mkdirSync(join(root, 'd4'));

    // ~18 MiB at 3 MiB/s: about 5 s, far longer than the first cursor save (2 s in).
    const killed = await runCli(['scrub', '--data', pattern, '--erasure', '4+2', '--repair', '--rate', '3MiB', '--json'], (kill) => {
      const poll = setInterval(() => {
        void cursorSaved(root, 6).then((yes) => {
          if (yes) {
            clearInterval(poll);
            kill();
          }
        });
      }, 100);
    });
    expect(killed.signal).toBe('SIGKILL');
    expect(killed.stdout).toBe('');

    const resumed = await runCli(['scrub', '--data', pattern, '--erasure', '4+2', '--repair', '--json']);
    expect(resumed.stderr).not.toMatch(/Error/);
    expect(resumed.code).toBe(0);
    const r = JSON.parse(resumed.stdout) as ScrubReport;
    expect(r.complete).toBe(true);
    expect(r.resumedFrom).toBeDefined();
    expect(r.resumedBlobs).toBeGreaterThan(0);
    expect(r.resumedBlobs).toBeLessThan(r.blobs);
    expect(r.damagedByDomain).toHaveProperty('d4');
    // '?': a missing replica of a small blob, which the provider does not name a domain for.
    expect(Object.keys(r.damagedByDomain).filter((d) => d !== '?')).toEqual(['d4']);
    expect(r.lost).toEqual([]);

    const clean = await runCli(['scrub', '--data', pattern, '--erasure', '4+2', '--json']);
    expect(clean.code).toBe(0);
    const c = JSON.parse(clean.stdout) as ScrubReport;
    expect(c.resumedFrom).toBeUndefined();
    expect(c.blobs).toBe(r.blobs);
    expect(c.damagedBlobs).toBe(0);

    const verify = await runCli(['verify', '--data', pattern, '--erasure', '4+2']);
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);

    const domains = await runCli(['domains', '--data', pattern, '--erasure', '4+2']);
    expect(domains.code, domains.stderr).toBe(0);
    for (let i = 1; i <= 6; i++) expect(domains.stdout).toMatch(new RegExp(`^d${i} .* ok `, 'm'));
    expect(domains.stdout).toContain('erasure 4+2 over 6 domains');
  }, 60_000);

  it('exits 3 when damage is left unrepaired; 1 with the lost blobs (and --objects their objects) when more than m fragments are gone', async () => {
    const { dir: root, cleanup } = tempDir('scrub-kill');
    cleanups.push(cleanup);
    const pattern = join(root, 'd{1...6}');
    const p = await openSet(pattern);
    const store = await Store.open(p);
    await store.createBucket('bkt');
    const size = 1200 * 1024;
    for (let i = 0; i < 3; i++) await store.putObject('bkt', `o${i}`, stream(randomBytes(size, i + 7)), { size });
    await store.close();
    await p.close();
    rmSync(join(root, 'd1'), { recursive: true, force: true });
    mkdirSync(join(root, 'd1'));
    const degraded = await runCli(['scrub', '--data', pattern, '--erasure', '4+2']);
    expect(degraded.code, degraded.stderr).toBe(3);
    expect(degraded.stdout).toMatch(/domain d1 +\d+ damaged fragments/);
    expect(degraded.stdout).toContain('(run with --repair)');
    // Two more domains lose their striped fragments (child keys `<key>!s.…`, child-key.ts): every
    // striped blob is now short of k, while the replicated ones (commits, the anchor) still read,
    // so the index can be walked to name the objects.
    for (const id of ['d2', 'd3']) {
      const child = await createFsProvider({ dir: join(root, id) });
      const page = await child.list();
      const striped = page.items.filter((it) => /![s]\./.test(it.key));
      expect(striped.length).toBeGreaterThan(0);
      for (const it of striped) await child.delete(it.key);
      await child.close();
    }
    const lost = await runCli(['scrub', '--data', pattern, '--erasure', '4+2', '--repair', '--objects', '--json']);
    expect(lost.code, lost.stderr).toBe(1);
    const r = JSON.parse(lost.stdout) as ScrubReport & { lostObjects: Record<string, { objects: string[] }> };
    expect(r.lostCount).toBeGreaterThanOrEqual(3);
    expect(r.lost.some((k) => k.startsWith('chunks/'))).toBe(true);
    // --objects names every large object: each one's body is in a lost (striped) chunk.
    const named = Object.values(r.lostObjects).flatMap((l) => l.objects);
    expect(named.filter((n) => /^bkt\/o[012]$/.test(n)).sort()).toEqual(['bkt/o0', 'bkt/o1', 'bkt/o2']);
  }, 60_000);
});
