/**
 * Frames a client writes: a body may hold the bytes of a whole commit log frame, and after a
 * crash tears the frame holding that body, recovery searches the log past the tear for valid
 * later frames (scan.ts findFrameAfter). Frames are keyed by the repository's secret
 * (commit-log/frame.ts), so a forged frame is never taken for an acknowledged commit behind
 * damage (which would refuse the open), and a forged header is passed over without reading
 * the payload it claims. Segments written before frames were keyed (named "log/<seq>-<rand>",
 * SHA-256 frames) still open, replay and verify, and the next roll goes to a keyed segment.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HEADER_BYTES } from '../../src/provider/fs/blob-file.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { keyPath } from '../../src/provider/fs/key-path.js';
import type { Provider } from '../../src/provider/provider.js';
import { decodeFrameHeader, deriveFrameKey, encodeFrame, FRAME_HEADER_BYTES, type FrameAuth, type FrameKey } from '../../src/store/commit-log/frame.js';
import { findFrameAfter } from '../../src/store/commit-log/scan.js';
import { decodeAnchor, encodeAnchor, FORMAT, type Anchor } from '../../src/store/anchor.js';
import { encodeCommit } from '../../src/store/commit.js';
import { keyedLogSegment } from '../../src/store/layout.js';
import { readAnchor, readFrameKey } from '../../src/store/recovery.js';
import { Store } from '../../src/store/store.js';
import { verifyRepository } from '../../src/store/verify.js';
import { collectGarbage } from '../../src/store/gc.js';
import { markRepository } from '../../src/store/gc-mark.js';
import { randomBytes } from '../support/random.js';
import { collect, stream, tempDir } from './helpers.js';

/** While set, new segments get the names segments had before frames were keyed (so the
 * repository writes SHA-256 frames to them, as the version before did). */
const legacy = vi.hoisted(() => ({ names: false }));
vi.mock('../../src/store/layout.js', async (original) => {
  const real = await original<typeof import('../../src/store/layout.js')>();
  return { ...real, logKey: (seq: number) => (legacy.names ? real.logKey(seq).replace('.', '-') : real.logKey(seq)) };
});
afterEach(() => {
  legacy.names = false;
});

const B = 'bkt';
const put = (store: Store, key: string, body: Uint8Array) => store.putObject(B, key, stream(body), { size: body.length });
const read = async (store: Store, key: string) => Buffer.from(await collect((await store.getObject(B, key)).body));
const pathOf = (dir: string, key: string) => {
  const p = keyPath(Buffer.from(key));
  return join(dir, 'blobs', ...p.dirs, p.leaf);
};
const ZERO_REF = { key: 'roots/x', offset: 0, length: 1, hash: '0'.repeat(64) };

/** A whole frame of commit `seq` as a client could make it: valid under `auth`. */
function forged(seq: number, auth: FrameAuth): Buffer {
  const record = encodeCommit({ seq, parent: ZERO_REF, time: 1, mutations: [] });
  return Buffer.concat(encodeFrame(seq, record, [randomBytes(64, seq)], new Uint8Array(12).fill(7), auth).chunks);
}

/** Offsets (in the segment file, after the blob header) of the frames of `segment`. */
function frameStarts(file: Buffer, key: FrameAuth): number[] {
  const starts: number[] = [];
  for (let at = HEADER_BYTES; ; ) {
    const h = decodeFrameHeader(file.subarray(at, at + FRAME_HEADER_BYTES), key);
    if (!h) return starts;
    starts.push(at);
    at += FRAME_HEADER_BYTES + h.payloadBytes;
  }
}

async function logRepo(dir: string) {
  return Store.open(await createFsProvider({ dir }), { checkpointEvery: 1 << 20, commitLog: true });
}

describe('commit log frames a client writes', () => {
  it('a torn frame whose body holds forged frames: the open takes the log up to the tear and serves', async () => {
    const { dir, cleanup } = tempDir('log-forged');
    try {
      const store = await logRepo(dir);
      await store.createBucket(B);
      const want = new Map<string, Uint8Array>();
      for (let i = 0; i < 5; i++) {
        want.set(`k${i}`, randomBytes(300 + i, i));
        await put(store, `k${i}`, want.get(`k${i}`)!);
      }
      const before = store.repo.seq;
      // Frames of a far later commit: the SHA-256 format, and keyed with a guessed secret.
      const evil = Buffer.concat([forged(before + 1000, null), forged(before + 1001, deriveFrameKey('00'.repeat(32)))]);
      await put(store, 'evil', evil);
      expect(store.repo.seq).toBe(before + 1);
      const segment = (await readAnchor(store.repo.provider))!.anchor.log!.key;
      const key = await readFrameKey(store.repo.provider);
      await store.close();
      expect(keyedLogSegment(segment)).toBe(true);

      // A crash tore the last frame: its end (the commit record and pack footer, after the
      // body) never reached the disk. The body with the forged frames did.
      const file = readFileSync(pathOf(dir, segment));
      const last = frameStarts(file, key).at(-1)!;
      const end = last + FRAME_HEADER_BYTES + decodeFrameHeader(file.subarray(last), key)!.payloadBytes;
      expect(file.subarray(last, end).indexOf(evil)).toBeGreaterThan(0);
      file.fill(0, end - 200, end);
      writeFileSync(pathOf(dir, segment), file);

      const again = await logRepo(dir);
      expect(again.repo.seq).toBe(before);
      for (const [k, v] of want) expect((await read(again, k)).equals(Buffer.from(v)), k).toBe(true);
      await expect(again.getObject(B, 'evil')).rejects.toMatchObject({ code: 'NoSuchKey' });
      await put(again, 'after', randomBytes(10, 9));
      expect((await verifyRepository(again.repo.provider)).problems).toEqual([]);
      await again.close();
    } finally {
      cleanup();
    }
  });

  it('forged headers claiming large payloads are passed over without reading those payloads', async () => {
    const { dir, cleanup } = tempDir('log-forged-headers');
    try {
      const store = await logRepo(dir);
      await store.createBucket(B);
      await put(store, 'a', randomBytes(100, 1));
      // 2,000 keyed headers with a guessed MAC, each claiming the most the segment could hold
      // after it (a header claiming more than the segment holds is refused before any read).
      const headers = Buffer.alloc(2000 * FRAME_HEADER_BYTES);
      for (let i = 0; i < 2000; i++) {
        const h = forged(1_000_000 + i, deriveFrameKey('11'.repeat(32))).subarray(0, FRAME_HEADER_BYTES);
        h.writeUInt32LE(1024 * 1024, 4);
        h.copy(headers, i * FRAME_HEADER_BYTES);
      }
      await put(store, 'headers', headers);
      const segment = (await readAnchor(store.repo.provider))!.anchor.log!.key;
      const key = await readFrameKey(store.repo.provider);
      // Unsealed (as after a crash): the preallocation follows the frames.
      const provider = store.repo.provider;
      let bytesRead = 0;
      const counting = new Proxy(provider, {
        get(target, prop, receiver) {
          if (prop === 'read') {
            return async (...args: Parameters<NonNullable<Provider['read']>>) => {
              const got = await target.read!(...args);
              bytesRead += got.length;
              return got;
            };
          }
          const v = Reflect.get(target, prop, receiver) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
      const size = (await provider.head(segment)).size;
      // As recovery after the frame holding the headers was torn: the search starts at it.
      const torn = frameStarts(readFileSync(pathOf(dir, segment)), key).at(-1)! - HEADER_BYTES;
      expect(await findFrameAfter(counting, segment, torn, store.repo.seq - 1, key)).toBeUndefined();
      // One pass of windows over the segment; the claimed payloads would be 2,000 MiB.
      expect(bytesRead).toBeGreaterThanOrEqual(headers.length); // it did read past the forged headers
      expect(bytesRead).toBeLessThanOrEqual(2 * size);
      await store.close();
    } finally {
      cleanup();
    }
  });

  it('a repository whose segments predate keyed frames opens, replays and verifies; new frames go to a keyed segment', async () => {
    const { dir, cleanup } = tempDir('log-legacy');
    try {
      legacy.names = true;
      const old = await logRepo(dir);
      await old.createBucket(B);
      const want = new Map<string, Uint8Array>();
      for (let i = 0; i < 6; i++) {
        want.set(`k${i}`, randomBytes(200 + i, 10 + i));
        await put(old, `k${i}`, want.get(`k${i}`)!);
      }
      const oldSegment = (await readAnchor(old.repo.provider))!.anchor.log!.key;
      const seq = old.repo.seq;
      await old.close();
      expect(keyedLogSegment(oldSegment)).toBe(false);
      const oldFile = readFileSync(pathOf(dir, oldSegment));
      expect(oldFile.subarray(HEADER_BYTES, HEADER_BYTES + 4).toString('latin1')).toBe('SLG1');
      expect(frameStarts(oldFile, null).length).toBeGreaterThanOrEqual(6);

      legacy.names = false;
      const now = await logRepo(dir);
      expect(now.repo.seq).toBe(seq);
      for (const [k, v] of want) expect((await read(now, k)).equals(Buffer.from(v)), k).toBe(true);
      want.set('new', randomBytes(500, 99));
      await put(now, 'new', want.get('new')!);
      const segment = (await readAnchor(now.repo.provider))!.anchor.log!.key;
      expect(keyedLogSegment(segment)).toBe(true);
      expect((await verifyRepository(now.repo.provider)).problems).toEqual([]);
      const key: FrameKey = await readFrameKey(now.repo.provider);
      await now.close();
      expect(readFileSync(pathOf(dir, segment)).subarray(HEADER_BYTES, HEADER_BYTES + 4).toString('latin1')).toBe('SLG2');
      expect(frameStarts(readFileSync(pathOf(dir, segment)), key).length).toBeGreaterThanOrEqual(1);

      const third = await logRepo(dir);
      for (const [k, v] of want) expect((await read(third, k)).equals(Buffer.from(v)), k).toBe(true);
      await third.close();
    } finally {
      cleanup();
    }
  });

  it('an anchor naming a keyed segment says format 2, which versions before keyed frames refuse; others say 1', () => {
    const base: Anchor = { format: FORMAT, seq: 3, root: { key: 'roots/x', offset: 0, length: 1, hash: '0'.repeat(64), seq: 0 }, time: 1, writer: 'w' };
    const keyed: Anchor = { ...base, log: { key: 'log/000000000001.0123456789', offset: 10 }, frameKeyId: '00112233aabbccdd' };
    const before: Anchor = { ...base, log: { key: 'log/000000000001-0123456789', offset: 10 } };
    const formatOf = (a: Anchor) => (JSON.parse(Buffer.from(encodeAnchor(a)).toString()) as { format: string }).format;
    expect(formatOf(keyed)).toBe('strata-repository/2');
    expect(formatOf(before)).toBe('strata-repository/1');
    expect(formatOf(base)).toBe('strata-repository/1');
    for (const a of [keyed, before, base]) expect(decodeAnchor(encodeAnchor(a))).toEqual(a);
    expect(() => encodeAnchor({ ...keyed, frameKeyId: undefined })).toThrow(/needs the frame keys' id/);
    // Format 1 naming a keyed segment (a valid check over it): refused as not fitting.
    const body = JSON.stringify({ format: 'strata-repository/1', seq: 3, head: null, root: base.root, time: 1, writer: 'w', log: keyed.log });
    const check = createHash('sha256').update(body).digest('hex');
    expect(() => decodeAnchor(Buffer.from(`${body.slice(0, -1)},"check":"${check}"}`))).toThrow(/does not fit its log segment/);
    // A later format: refused as unsupported, as older versions refuse format 2.
    const later = Buffer.from(Buffer.from(encodeAnchor(keyed)).toString().replace('strata-repository/2', 'strata-repository/3'));
    expect(() => decodeAnchor(later)).toThrow(expect.objectContaining({ code: 'UnsupportedFormat' }) as Error);
  });

  it('frames in the format of segments written before are byte for byte what that version wrote', () => {
    const record = new Uint8Array(40).map((_, i) => i * 7);
    const bodies = [new Uint8Array(100).map((_, i) => i), new Uint8Array(3).fill(9)];
    const bytes = Buffer.concat(encodeFrame(12, record, bodies, new Uint8Array(12).fill(5), null).chunks);
    // The encoder of 6fe1a53 (before keyed frames), run on the same input.
    expect(bytes.length).toBe(391);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe('5bc7d738d18aefe8a87f385a4df89d40d96a68319a80a18140583c1ea1f2639a');
  });

  it('a config whose secret changed is refused by the open, GC and verify, not taken for a log ending at the anchor', async () => {
    const { dir, cleanup } = tempDir('log-config');
    try {
      const store = await logRepo(dir);
      await store.createBucket(B);
      for (let i = 0; i < 4; i++) await put(store, `k${i}`, randomBytes(100, i));
      const anchor = (await readAnchor(store.repo.provider))!.anchor;
      expect(anchor.frameKeyId).toBe(deriveFrameKey(store.repo.config.tokenSecret).id);
      await store.close();
      const configPath = pathOf(dir, 'config');
      const original = readFileSync(configPath);
      // One hex digit of the secret changed: still a well-formed config.
      const text = original.toString('latin1');
      const at = text.indexOf('"tokenSecret": "') + 16;
      const flipped = Buffer.from(text.slice(0, at) + (text[at] === '0' ? '1' : '0') + text.slice(at + 1), 'latin1');
      writeFileSync(configPath, flipped);

      const refused = await logRepo(dir).then(async (s) => (await s.close(), undefined), (e: unknown) => e);
      expect(refused).toMatchObject({ code: 'Corrupt' });
      expect(String((refused as Error).message)).toContain('config');
      const provider = await createFsProvider({ dir });
      await expect(markRepository(provider)).rejects.toMatchObject({ code: 'Corrupt' });
      await expect(collectGarbage(provider, { dryRun: true })).rejects.toMatchObject({ code: 'Corrupt' });
      const report = await verifyRepository(provider);
      expect(report.ok).toBe(false);
      expect(report.problems.some((p) => p.code === 'Corrupt' && /config/.test(p.message))).toBe(true);
      // A config that does not parse: the keyed segment cannot be checked, and verify says so.
      writeFileSync(configPath, Buffer.from('{not json'));
      const unreadable = await verifyRepository(provider);
      expect(unreadable.problems.map((p) => p.blob)).toContain('config');
      expect(unreadable.problems.some((p) => /keyed by the repository's config/.test(p.message))).toBe(true);
      await provider.close();

      writeFileSync(configPath, original);
      const again = await logRepo(dir);
      for (let i = 0; i < 4; i++) expect((await read(again, `k${i}`)).equals(Buffer.from(randomBytes(100, i)))).toBe(true);
      await again.close();
    } finally {
      cleanup();
    }
  });
});
