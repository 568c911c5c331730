/**
 * An I/O error reading one fragment file (EIO from a bad sector, say) while its domain still
 * answers is that fragment's damage, not a failed domain: the domain stays in service (at (4,2)
 * over 6 domains a failed one would refuse every striped write), reads go around the fragment,
 * a check reports it corrupt there and repair rewrites it. A domain that fails everything is
 * still taken out of service, as before. The errors are injected by a wrapper over the real fs
 * children: reads of the chosen files fail with ProviderError 'Io' caused by EIO (as the fs
 * provider reports a media error) until the file is rewritten. An 'Io' with no media error under
 * it (an endpoint refusing reads, say) is the domain's, as before.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { getBytes, ProviderError, type Provider } from '../../src/provider/provider.js';
import { firstDiff } from '../support/bytes.js';
import { randomBytes } from '../support/random.js';
import { makeRig, type Rig } from './fault-setup.js';

const rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) {
    await r.close().catch(() => undefined);
    r.cleanup();
  }
});

/** What the wrapper of each domain fails: keys whose reads fail (until rewritten), or everything. */
interface Faults {
  badReads: Set<string>;
  /** Every read fails with `errno` (writes and listings still work). */
  allReads?: boolean;
  dead: boolean;
  /** The errno of the injected read errors: EIO (a media error), or another I/O failure. */
  errno: string;
  /** Reads that failed with the injected error. */
  injected: number;
  /** Listings asked (the probes after a failed read among them). */
  lists: number;
}

/** A ProviderError as the fs provider makes one ('Io', or 'Unavailable' for the errors it
 * deems passing, EMFILE among them): the system's error as its cause. */
function ioError(what: string, errno: string): ProviderError {
  const cause = Object.assign(new Error(`${errno}: i/o error, read`), { code: errno });
  return new ProviderError(errno === 'EMFILE' || errno === 'ENFILE' ? 'Unavailable' : 'Io', `${what}: read failed: ${cause.message}`, { cause });
}

function withFaults(p: Provider, f: Faults): Provider {
  const guard = <T>(key: string | undefined, read: boolean, run: () => Promise<T>): Promise<T> => {
    if (f.dead) return Promise.reject(ioError(key ?? 'list', 'EIO'));
    if (read && key !== undefined && (f.allReads || f.badReads.has(key))) {
      f.injected++;
      return Promise.reject(ioError(key, f.errno));
    }
    return run();
  };
  return {
    kind: p.kind,
    capabilities: p.capabilities,
    put: (key, body, o) =>
      guard(key, false, async () => {
        const info = await p.put(key, body, o);
        f.badReads.delete(key); // rewritten: new blocks
        return info;
      }),
    get: (key, o) => guard(key, true, () => p.get(key, o)),
    head: (key) => guard(key, false, () => p.head(key)),
    list: (o) => (f.lists++, guard(undefined, false, () => p.list(o))),
    delete: (key) => guard(key, false, () => p.delete(key)),
    close: () => p.close(),
    read: (key, range, into) => guard(key, true, () => p.read!(key, range, into)),
    readv: (key, start, targets) => guard(key, true, () => p.readv!(key, start, targets)),
  };
}

async function rig(): Promise<{ r: Rig; faults: Faults[] }> {
  const faults: Faults[] = [];
  const r = await makeRig({
    k: 4,
    m: 2,
    wrap: (i, p) => withFaults(p, (faults[i] = { badReads: new Set(), dead: false, errno: 'EIO', injected: 0, lists: 0 })),
  });
  rigs.push(r);
  return { r, faults };
}

/** The domain index and child key of fragment `index` of `key` (by listing the children). */
async function fragment(r: Rig, key: string, index: number): Promise<{ d: number; child: string }> {
  for (let d = 0; d < r.children.length; d++) {
    const page = await r.children[d]!.list({ prefix: key, etags: false });
    const child = page.items.map((i) => i.key).find((c) => c.startsWith(`${key}!`) && c.endsWith(`.${index}`));
    if (child) return { d, child };
  }
  throw new Error(`no fragment ${index} of ${key}`);
}

describe('an I/O error on one fragment file', () => {
  it('is read around and leaves its domain in service; the fragment is reported corrupt on it and repaired', async () => {
    const { r, faults } = await rig();
    const body = randomBytes(900_000, 21);
    await r.provider.put('blobs/eio', body);
    const f = await fragment(r, 'blobs/eio', 1); // a data fragment: every healthy read needs it
    faults[f.d]!.badReads.add(f.child);

    expect(firstDiff(await getBytes(r.provider, 'blobs/eio'), body)).toBe(-1);
    expect(firstDiff(await getBytes(r.provider, 'blobs/eio', { start: 70_000, end: 400_000 }), body.subarray(70_000, 400_001))).toBe(-1);
    expect(faults[f.d]!.injected).toBeGreaterThan(0);
    expect((await r.provider.domainHealth()).every((h) => h.state === 'ok')).toBe(true);
    // The next striped write needs all 6 domains, the one with the bad file included.
    const next = randomBytes(500_000, 22);
    await r.provider.put('blobs/next', next);
    expect(firstDiff(await getBytes(r.provider, 'blobs/next'), next)).toBe(-1);

    const found = await r.provider.checkBlob('blobs/eio');
    expect(found.fragments.filter((x) => x.state !== 'ok')).toEqual([expect.objectContaining({ domain: `d${f.d + 1}`, state: 'corrupt' })]);
    expect((await r.provider.checkBlob('blobs/eio', { repair: true })).repaired).toBe(1);
    expect(faults[f.d]!.badReads.size).toBe(0); // rewritten in place
    expect((await r.provider.checkBlob('blobs/eio')).fragments.every((x) => x.state === 'ok')).toBe(true);
    expect(firstDiff(await getBytes(r.provider, 'blobs/eio'), body)).toBe(-1);
  });

  it('a replicated copy with an I/O error: another copy answers, the domain stays in service, the copy is rewritten', async () => {
    const { r, faults } = await rig();
    const small = randomBytes(3_000, 23); // below the stripe threshold: m + 1 copies
    await r.provider.put('blobs/small', small);
    let bad: { d: number; child: string } | undefined;
    for (let d = 0; d < r.children.length && !bad; d++) {
      const child = (await r.children[d]!.list({ prefix: 'blobs/small', etags: false })).items[0]?.key;
      if (child) bad = { d, child };
    }
    faults[bad!.d]!.badReads.add(bad!.child);
    expect(firstDiff(await getBytes(r.provider, 'blobs/small'), small)).toBe(-1);
    expect((await r.provider.domainHealth()).every((h) => h.state === 'ok')).toBe(true);
    const found = await r.provider.checkBlob('blobs/small');
    expect(found.fragments.filter((x) => x.state !== 'ok')).toEqual([expect.objectContaining({ domain: `d${bad!.d + 1}`, state: 'corrupt' })]);
    expect((await r.provider.checkBlob('blobs/small', { repair: true })).repaired).toBe(1);
    expect(faults[bad!.d]!.badReads.size).toBe(0);
  });

  it('a domain that fails everything is still taken out of service: reads go around it and a write that needs it is refused', async () => {
    const { r, faults } = await rig();
    const body = randomBytes(900_000, 24);
    await r.provider.put('blobs/dead', body);
    const f = await fragment(r, 'blobs/dead', 0);
    faults[f.d]!.dead = true;
    expect(firstDiff(await getBytes(r.provider, 'blobs/dead'), body)).toBe(-1);
    // The read's probe found the domain dead and took it out of service (no health check yet).
    const refused = await r.provider.put('blobs/refused', randomBytes(500_000, 25)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProviderError);
    expect((refused as Error).message).toMatch(new RegExp(`too few domains.*failed: d${f.d + 1}`));
    // Out of service, it is not probed again by the next reads.
    const lists = faults[f.d]!.lists;
    expect(firstDiff(await getBytes(r.provider, 'blobs/dead'), body)).toBe(-1);
    expect(faults[f.d]!.lists).toBe(lists);
    const health = await r.provider.domainHealth();
    expect(health.filter((h) => h.state !== 'ok').map((h) => h.id)).toEqual([`d${f.d + 1}`]);
  });

  it('a small read of the damaged fragment reads it once and probes once, then rebuilds', async () => {
    const { r, faults } = await rig();
    const body = randomBytes(900_000, 26);
    await r.provider.put('blobs/small-read', body);
    const f = await fragment(r, 'blobs/small-read', 0);
    faults[f.d]!.badReads.add(f.child);
    const lists = faults[f.d]!.lists;
    expect(firstDiff(await getBytes(r.provider, 'blobs/small-read', { start: 10, end: 1000 }), body.subarray(10, 1001))).toBe(-1);
    expect(faults[f.d]!.injected).toBe(1);
    expect(faults[f.d]!.lists - lists).toBe(1);
  });

  it('a read that finds no file descriptor left (EMFILE, the process’s condition) is read around and leaves its domain in service', async () => {
    const { r, faults } = await rig();
    const body = randomBytes(900_000, 29);
    await r.provider.put('blobs/emfile', body);
    const f = await fragment(r, 'blobs/emfile', 1);
    // Every read on that domain finds no descriptor (no read there succeeds to clear a mark).
    faults[f.d]!.errno = 'EMFILE';
    faults[f.d]!.allReads = true;
    expect(firstDiff(await getBytes(r.provider, 'blobs/emfile'), body)).toBe(-1);
    expect(faults[f.d]!.injected).toBeGreaterThan(0);
    faults[f.d]!.allReads = false; // the descriptors are back
    // The next striped write needs all 6 domains: not refused for the descriptors of a moment
    // ago (a domain counted failed would be, for its cooldown, as a dead one is below).
    const next = randomBytes(500_000, 30);
    await r.provider.put('blobs/after-emfile', next);
    expect(firstDiff(await getBytes(r.provider, 'blobs/after-emfile'), next)).toBe(-1);
    expect((await r.provider.domainHealth()).every((h) => h.state === 'ok')).toBe(true);
  });

  it('a read that finds no descriptor on more than m domains fails with Unavailable (retry), not Io, and queues no repair', async () => {
    const { r, faults } = await rig();
    const body = randomBytes(900_000, 31);
    await r.provider.put('blobs/emfile-wide', body);
    r.provider.takeRepairQueue();
    const hit = [0, 1, 2].map((i) => fragment(r, 'blobs/emfile-wide', i));
    for (const f of await Promise.all(hit)) {
      faults[f.d]!.errno = 'EMFILE';
      faults[f.d]!.allReads = true;
    }
    const err = await getBytes(r.provider, 'blobs/emfile-wide').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).code).toBe('Unavailable');
    expect((err as ProviderError).message).toMatch(/refusing to return bytes/);
    // Nothing is wrong with the fragments: none is queued for repair.
    expect(r.provider.takeRepairQueue()).toEqual([]);
    for (const f of faults) f.allReads = false;
    expect(firstDiff(await getBytes(r.provider, 'blobs/emfile-wide'), body)).toBe(-1);
  });

  it('an I/O error that is not a media error (no EIO under it: an endpoint refusing reads, say) still takes the domain out of service', async () => {
    const { r, faults } = await rig();
    const body = randomBytes(900_000, 27);
    await r.provider.put('blobs/denied', body);
    const f = await fragment(r, 'blobs/denied', 1);
    faults[f.d]!.errno = 'EACCES';
    faults[f.d]!.badReads.add(f.child);
    const lists = faults[f.d]!.lists;
    expect(firstDiff(await getBytes(r.provider, 'blobs/denied'), body)).toBe(-1);
    expect(faults[f.d]!.lists).toBe(lists); // no probe
    const refused = await r.provider.put('blobs/refused', randomBytes(500_000, 28)).catch((e: unknown) => e);
    expect((refused as Error).message).toMatch(new RegExp(`too few domains.*failed: d${f.d + 1}`));
  });
});
