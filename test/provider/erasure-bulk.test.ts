/**
 * PutOptions.bulk through the erasure provider: a striped put passes its own `bulk` to every
 * fragment's put (object bodies go around the fs children's page cache, metadata blobs do not),
 * and fragments rebuilt by repair are written as bulk.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Provider, PutOptions } from '../../src/provider/provider.js';
import { getBytes } from '../../src/provider/provider.js';
import { cleanupRigs, makeRig, MiB } from './erasure-helpers.js';
import { randomBytes } from '../support/random.js';
import { withPut } from '../support/put-wrapper.js';

afterAll(cleanupRigs);

/** `inner`, recording the `bulk` of every put of a fragment (child keys of striped blobs). */
function recording(inner: Provider, seen: (string | undefined)[][]): Provider {
  return withPut(inner, (key, body, options?: PutOptions) => {
    seen.push([key, String(options?.bulk)]);
    return inner.put(key, body, options);
  });
}

describe('erasure: PutOptions.bulk reaches the fragments', () => {
  it("passes a put's bulk to its fragments, and repairs write bulk", async () => {
    const seen: (string | undefined)[][] = [];
    const rig = await makeRig({ kind: 'memory', wrap: (p) => recording(p, seen) });
    const data = randomBytes(2 * MiB + 3, 1);
    const bulkOf = (from: number) => new Set(seen.slice(from).map((s) => s[1]));

    let from = seen.length;
    await rig.provider.put('objects/a', data, { bulk: true });
    expect(seen.length - from).toBe(6); // k + m fragments
    expect(bulkOf(from)).toEqual(new Set(['true']));

    from = seen.length;
    await rig.provider.put('runs/b', data);
    expect(seen.length - from).toBe(6);
    expect(bulkOf(from)).toEqual(new Set(['false']));
    expect(Buffer.from(await getBytes(rig.provider, 'objects/a')).equals(Buffer.from(data))).toBe(true);
    expect(Buffer.from(await getBytes(rig.provider, 'runs/b')).equals(Buffer.from(data))).toBe(true);

    // A fragment of the non-bulk blob lost on its domain: the repair writes it back as bulk.
    const victim = seen.find((s) => s[0]!.startsWith('runs/b'))![0]!;
    let removed = 0;
    for (const d of rig.domains) {
      if (await d.provider.head(victim).then(() => true, () => false)) {
        await d.provider.delete(victim);
        removed++;
      }
    }
    expect(removed).toBe(1);
    from = seen.length;
    const check = await rig.provider.checkBlob('runs/b', { repair: true });
    expect(check.repaired).toBe(1);
    expect(seen.slice(from).filter((s) => s[0]!.startsWith('runs/b')).map((s) => s[1])).toEqual(['true']);
  });
});
