/**
 * The fs provider's commit log (src/store/commit-log/): frames, the forward scan, and what a
 * repository does with them.
 *
 * Frames: a round trip, hostile headers (zeros, truncated, wrong magic, reserved bytes set,
 * oversized or inconsistent lengths, sequence 0) and every single flipped byte of a small
 * frame are refused. Repository: commits go to one segment with no commit blobs and no anchor
 * move per commit; a reopen replays them; a torn tail and a whole frame of another attempt
 * (valid checksum, wrong parent) at the log's end are never taken; damaged bytes in the middle
 * of the log make open fail naming the segment (never a silently shortened history) and verify
 * report it; a failed write is retried at the same offset; a failed sync fences; GC deletes a
 * segment nothing reaches any more; providers without the capability keep commit blobs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HEADER_BYTES } from '../../src/provider/fs/blob-file.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { keyPath } from '../../src/provider/fs/key-path.js';
import { createMemoryProvider } from '../../src/provider/memory/index.js';
import { AppendError, type AppendLog } from '../../src/provider/append-log.js';
import type { Provider } from '../../src/provider/provider.js';
import { checkFrame, decodeFrameHeader, deriveFrameKey, encodeFrame, FRAME_HEADER_BYTES, MAX_FRAME_PAYLOAD, type FrameAuth } from '../../src/store/commit-log/frame.js';
import { encodeCommit } from '../../src/store/commit.js';
import { readAnchor, readFrameKey } from '../../src/store/recovery.js';
import { StoreError } from '../../src/store/errors.js';
import { Store, type StoreOptions } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { runGc } from '../../src/store/gc.js';
import { SEGMENT_BYTES } from '../../src/store/commit-log/segments.js';
import { randomBytes } from '../support/random.js';
import { chainCommits, collect, stream, tempDir } from './helpers.js';

const B = 'log';
const ZERO_REF = { key: 'roots/x', offset: 0, length: 1, hash: '0'.repeat(64) };

/** Frame keys of a test repository (a fixed config secret). */
const KEY = deriveFrameKey('ab'.repeat(32));

function frameOf(seq: number, bodies: Uint8Array[] = [randomBytes(100, seq)], auth: FrameAuth = KEY) {
  const record = encodeCommit({ seq, parent: ZERO_REF, time: 1, mutations: [] });
  const f = encodeFrame(seq, record, bodies, new Uint8Array(12).fill(seq), auth);
  return Buffer.concat(f.chunks);
}

const headerAndPayload = (bytes: Buffer, auth: FrameAuth = KEY) => ({ header: decodeFrameHeader(bytes, auth), payload: bytes.subarray(FRAME_HEADER_BYTES) });

describe('commit log frames', () => {
  for (const [name, auth] of [['keyed', KEY], ['SHA-256, as in segments written before frames were keyed', null]] as const) {
    describe(name, () => {
      it('round-trip: the header says where the record is and the check covers it', () => {
        const bytes = frameOf(7, undefined, auth);
        const { header, payload } = headerAndPayload(bytes, auth);
        expect(header?.seq).toBe(7);
        expect(header?.payloadBytes).toBe(bytes.length - FRAME_HEADER_BYTES);
        expect(checkFrame(bytes, header!, payload, auth)).toBe(true);
        expect(bytes.subarray(0, 4).toString('latin1')).toBe(auth ? 'SLG2' : 'SLG1');
      });

      it('refuses zeros, truncated headers, wrong magic, reserved bytes, bad lengths and sequence 0', () => {
        const good = frameOf(3, undefined, auth);
        const edit = (f: (b: Buffer) => void) => {
          const b = Buffer.from(good.subarray(0, FRAME_HEADER_BYTES));
          f(b);
          return decodeFrameHeader(b, auth);
        };
        expect(decodeFrameHeader(good, auth)).toBeDefined();
        expect(decodeFrameHeader(Buffer.alloc(FRAME_HEADER_BYTES), auth)).toBeUndefined();
        expect(decodeFrameHeader(good.subarray(0, FRAME_HEADER_BYTES - 1), auth)).toBeUndefined();
        expect(edit((b) => (b[0] ^= 1))).toBeUndefined();
        expect(edit((b) => (b[27] ^= 1))).toBeUndefined();
        expect(edit((b) => b.writeUInt32LE(MAX_FRAME_PAYLOAD + 1, 4))).toBeUndefined();
        expect(edit((b) => b.writeUInt32LE(0xffffffff, 16))).toBeUndefined();
        expect(edit((b) => b.writeBigUInt64LE(0n, 8))).toBeUndefined();
        expect(edit((b) => b.writeBigUInt64LE(1n << 60n, 8))).toBeUndefined();
      });

      it('every single flipped byte of a frame is refused, and a short payload too', () => {
        const good = frameOf(5, [randomBytes(40, 1), randomBytes(3, 2)], auth);
        for (let i = 0; i < good.length; i++) {
          const b = Buffer.from(good);
          b[i] ^= 0x40;
          const { header, payload } = headerAndPayload(b, auth);
          expect(header !== undefined && checkFrame(b, header, payload, auth), `byte ${i}`).toBe(false);
        }
        const { header, payload } = headerAndPayload(good, auth);
        expect(checkFrame(good, header!, payload.subarray(1), auth)).toBe(false);
      });
    });
  }

  it('a frame passes only with the keys it was made with', () => {
    const other = deriveFrameKey('cd'.repeat(32));
    const keyed = frameOf(4);
    // Another repository's keys: the header MAC fails, so the payload is never hashed.
    expect(decodeFrameHeader(keyed, other)).toBeUndefined();
    // The same fields under the other key's header MAC still fail the frame MAC.
    const reheaded = frameOf(4, undefined, other);
    keyed.copy(reheaded, 32, 32, 64);
    const h = decodeFrameHeader(reheaded, other)!;
    expect(h).toBeDefined();
    expect(checkFrame(reheaded, h, reheaded.subarray(FRAME_HEADER_BYTES), other)).toBe(false);
    // Neither format passes for the other.
    expect(decodeFrameHeader(keyed, null)).toBeUndefined();
    expect(decodeFrameHeader(frameOf(4, undefined, null), KEY)).toBeUndefined();
  });

  it('the keys derive from the config secret alone', () => {
    expect(deriveFrameKey('ab'.repeat(32))).toEqual(KEY);
    expect(deriveFrameKey('ab'.repeat(31) + 'ac').frame.equals(KEY.frame)).toBe(false);
    expect(KEY.header.equals(KEY.frame)).toBe(false);
  });
});

const text = (s: string) => new TextEncoder().encode(s);
const put = (store: Store, key: string, body: Uint8Array) => store.putObject(B, key, stream(body), { size: body.length });
const read = async (store: Store, key: string) => Buffer.from(await collect((await store.getObject(B, key)).body));

/** Segment file path of `key` in an fs repository at `dir`. */
const pathOf = (dir: string, key: string) => {
  const p = keyPath(Buffer.from(key));
  return join(dir, 'blobs', ...p.dirs, p.leaf);
};

async function logRepo(options: StoreOptions = {}, wrap?: (p: Provider) => Provider) {
  const { dir, cleanup } = tempDir('commit-log');
  const open = async () => {
    const fs = await createFsProvider({ dir });
    return Store.open(wrap ? wrap(fs) : fs, { checkpointEvery: 1 << 20, commitLog: true, ...options });
  };
  const store = await open();
  await store.createBucket(B);
  return { dir, cleanup, store, open };
}

/** Writes `n` objects k0..k(n-1) (some concurrently) and returns their bodies. */
async function fill(store: Store, n: number, seed = 1): Promise<Map<string, Uint8Array>> {
  const want = new Map<string, Uint8Array>();
  await Promise.all(Array.from({ length: n }, async (_, i) => {
    const body = randomBytes(50 + ((i * 97) % 3000), seed * 1000 + i);
    await put(store, `k${i}`, body);
    want.set(`k${i}`, body);
  }));
  return want;
}

async function expectAll(store: Store, want: Map<string, Uint8Array>) {
  for (const [k, v] of want) expect((await read(store, k)).equals(Buffer.from(v)), k).toBe(true);
}

describe('repository on the commit log (fs)', () => {
  it('appends commits to one segment (no commit blobs, no anchor move per commit) and replays them', async () => {
    const { cleanup, store, open } = await logRepo();
    try {
      const want = await fill(store, 40);
      const provider = store.repo.provider;
      expect((await provider.list({ prefix: 'commits/' })).items).toEqual([]);
      const segments = (await provider.list({ prefix: 'log/' })).items;
      expect(segments).toHaveLength(1);
      const { anchor } = (await readAnchor(provider))!;
      expect(anchor.log?.key).toBe(segments[0]!.key);
      expect(anchor.seq).toBeLessThan(store.repo.seq); // the anchor moved at the roll only
      expect(store.repo.stats.segmentRolls).toBe(1);
      const seq = store.repo.seq;
      await store.close();
      const again = await open();
      expect(again.repo.seq).toBe(seq);
      await expectAll(again, want);
      expect((await chainCommits(again.repo.provider)).map((c) => c.seq)).toEqual(Array.from({ length: seq }, (_, i) => i + 1));
      expect((await verifyRepository(again.repo.provider)).problems).toEqual([]);
      await again.close();
    } finally {
      cleanup();
    }
  });

  for (const [name, half] of [['a whole frame of another attempt (valid checksum, wrong parent)', false], ['a torn frame', true]] as const) {
    it(`never takes ${name} at the log end`, async () => {
      const { dir, cleanup, store, open } = await logRepo();
      try {
        const want = await fill(store, 10);
        const seq = store.repo.seq;
        const segment = (await readAnchor(store.repo.provider))!.anchor.log!.key;
        const key = await readFrameKey(store.repo.provider);
        await store.close();
        const file = readFileSync(pathOf(dir, segment));
        let at = HEADER_BYTES; // where the log ends: after the last whole frame
        for (;;) {
          const h = decodeFrameHeader(file.subarray(at, at + FRAME_HEADER_BYTES), key);
          if (!h) break;
          at += FRAME_HEADER_BYTES + h.payloadBytes;
        }
        const stale = frameOf(seq + 1, undefined, key);
        (half ? stale.subarray(0, stale.length >> 1) : stale).copy(file, at);
        writeFileSync(pathOf(dir, segment), file);
        const again = await open();
        expect(again.repo.seq).toBe(seq);
        await expectAll(again, want);
        await put(again, 'after', text('x')); // rolls to a new segment and goes on
        expect(again.repo.seq).toBe(seq + 1);
        expect((await verifyRepository(again.repo.provider)).problems).toEqual([]);
        await again.close();
        const third = await open();
        expect((await read(third, 'after')).toString()).toBe('x');
        await expectAll(third, want);
        await third.close();
      } finally {
        cleanup();
      }
    });
  }

  it('damaged bytes in the middle of the log: open fails naming the segment, verify reports it', async () => {
    const { dir, cleanup, store, open } = await logRepo();
    try {
      for (let i = 0; i < 6; i++) await put(store, `s${i}`, randomBytes(500, i));
      const segment = (await readAnchor(store.repo.provider))!.anchor.log!.key;
      const key = await readFrameKey(store.repo.provider);
      await store.close();
      const file = readFileSync(pathOf(dir, segment));
      // The second frame's payload (its first body), past the anchor's log position (0).
      const first = decodeFrameHeader(file.subarray(HEADER_BYTES), key)!;
      const second = HEADER_BYTES + FRAME_HEADER_BYTES + first.payloadBytes;
      for (const offset of [0, 4, FRAME_HEADER_BYTES + 80]) {
        const bytes = Buffer.from(file);
        bytes[second + offset] ^= 0x10;
        writeFileSync(pathOf(dir, segment), bytes);
        const err = await open().then(async (s) => (await s.close(), undefined), (e: unknown) => e);
        expect(err, `offset ${offset}`).toBeInstanceOf(StoreError);
        expect((err as StoreError).code).toBe('BrokenChain');
        expect((err as StoreError).message).toContain(segment);
        const report = await verifyRepository(await createFsProvider({ dir }));
        expect(report.problems.map((p) => p.blob)).toContain(segment);
      }
      writeFileSync(pathOf(dir, segment), file);
      const again = await open();
      expect(again.repo.seq).toBeGreaterThanOrEqual(7);
      await again.close();
    } finally {
      cleanup();
    }
  });

  it('a failed write is retried at the same offset; a failed sync fences and a reopen keeps what was acknowledged', async () => {
    let fail: 'write' | 'sync' | undefined;
    const wrap = (p: Provider): Provider => {
      const openLog = p.openLog!.bind(p);
      const hooked = {
        openLog: async (key: string, bytes: number): Promise<AppendLog> => {
          const log = await openLog(key, bytes);
          return {
            key: log.key,
            preallocated: log.preallocated,
            close: () => log.close(),
            append: async (offset: number, chunks: readonly Uint8Array[]) => {
              const f = fail;
              fail = undefined;
              if (f === 'write') {
                // Half the frame lands, then the write fails (a full disk).
                const all = Buffer.concat(chunks);
                await log.append(offset, [all.subarray(0, all.length >> 1)]).catch(() => undefined);
                throw new AppendError('write', 'injected: no space left', undefined);
              }
              await log.append(offset, chunks);
              if (f === 'sync') throw new AppendError('sync', 'injected: fdatasync EIO', undefined);
            },
          };
        },
      };
      return new Proxy(p, {
        get: (target, prop) => {
          if (prop === 'openLog') return hooked.openLog;
          const v = Reflect.get(target, prop, target) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
    };
    const { cleanup, store, open } = await logRepo({}, wrap);
    try {
      const want = await fill(store, 5);
      const seq = store.repo.seq;
      fail = 'write';
      await expect(put(store, 'lost', text('no'))).rejects.toMatchObject({ code: 'Io' });
      expect(store.repo.seq).toBe(seq);
      await put(store, 'kept', text('yes')); // same sequence, same offset, over the torn half
      want.set('kept', text('yes'));
      expect(store.repo.seq).toBe(seq + 1);
      fail = 'sync';
      await expect(put(store, 'maybe', text('?'))).rejects.toMatchObject({ code: 'Unsafe' });
      await expect(put(store, 'refused', text('!'))).rejects.toMatchObject({ code: 'Unsafe' });
      await store.close();
      const again = await open();
      await expectAll(again, want);
      expect(await again.headObject(B, 'lost').catch((e: StoreError) => e.code)).toBe('NoSuchKey');
      const chain = await chainCommits(again.repo.provider);
      expect(chain.map((c) => c.seq)).toEqual(chain.map((_, i) => i + 1));
      expect((await verifyRepository(again.repo.provider)).problems).toEqual([]);
      await again.close();
    } finally {
      cleanup();
    }
  });

  it('GC deletes a segment nothing reaches any more, and keeps the current one and those with live bodies', async () => {
    const { cleanup, store, open } = await logRepo({ retentionMs: 0 });
    try {
      await store.createBucket('gone');
      for (let i = 0; i < 4; i++) await store.putObject('gone', `g${i}`, stream(text('old')), { size: 3 });
      const old = (await readAnchor(store.repo.provider))!.anchor.log!.key;
      await store.close();
      const again = await open();
      for (let i = 0; i < 4; i++) await again.deleteObject('gone', `g${i}`);
      await again.deleteBucket('gone');
      const want = await fill(again, 8, 2); // in a new segment
      await again.repo.checkpoint();
      const current = (await readAnchor(again.repo.provider))!.anchor.log!.key;
      expect(current).not.toBe(old);
      await runGc(again.repo, { graceMs: 0, cleanBelow: 0 });
      // The pass rolled the log first (the anchor names a new, empty segment); `current` stays:
      // the index names the bodies in it. `old` holds nothing reachable: gone.
      const rolled = (await readAnchor(again.repo.provider))!.anchor.log!.key;
      expect(rolled).not.toBe(current);
      const left = (await again.repo.provider.list({ prefix: 'log/' })).items.map((i) => i.key);
      expect(left.sort()).toEqual([current, rolled].sort());
      await expectAll(again, want);
      expect((await verifyRepository(again.repo.provider)).problems).toEqual([]);
      await again.close();
    } finally {
      cleanup();
    }
  });

  it('a segment is accounted at what it holds: one growth step while appended to, its written end once left', async () => {
    const { cleanup, store, open } = await logRepo();
    try {
      await fill(store, 8, 3);
      const sizes = async (s: Store) => new Map((await s.repo.provider.list({ prefix: 'log/' })).items.map((i) => [i.key, i.size] as const));
      const first = (await readAnchor(store.repo.provider))!.anchor.log!.key;
      expect((await sizes(store)).get(first)).toBe(SEGMENT_BYTES); // one step, however little it holds
      await store.close(); // sealed at the end of its last frame
      const again = await open();
      const end = (await sizes(again)).get(first)!;
      expect(end).toBeLessThan(SEGMENT_BYTES);
      expect(end).toBeGreaterThan(8 * 50);
      const want = await fill(again, 4, 4); // a new segment (every open rolls)
      const second = (await readAnchor(again.repo.provider))!.anchor.log!.key;
      expect(second).not.toBe(first);
      expect((await sizes(again)).get(second)).toBe(SEGMENT_BYTES);
      await runGc(again.repo, { graceMs: 60_000, cleanBelow: 0 }); // rolls; deletes nothing yet
      const after = await sizes(again);
      expect(after.get(second)!).toBeLessThan(SEGMENT_BYTES); // left by GC's roll: sealed
      expect(after.get(second)!).toBeGreaterThan(4 * 50);
      expect(after.get(first)).toBe(end);
      await expectAll(again, want);
      await again.close();
      const reopened = await open(); // replays the sealed segments' commits exactly
      await expectAll(reopened, want);
      expect((await verifyRepository(reopened.repo.provider)).problems).toEqual([]);
      await reopened.close();
    } finally {
      cleanup();
    }
  });

  it('providers without the capability keep commit blobs and an anchor move per commit', async () => {
    const store = await Store.open(await createMemoryProvider());
    await store.createBucket(B);
    await put(store, 'a', text('1'));
    expect((await store.repo.provider.list({ prefix: 'commits/' })).items.length).toBeGreaterThan(0);
    expect((await store.repo.provider.list({ prefix: 'log/' })).items).toEqual([]);
    expect((await readAnchor(store.repo.provider))!.anchor.seq).toBe(store.repo.seq);
    await store.close();
  });
});
