/**
 * @module After a kill: reopen the directory and check it against the worker's log.
 *
 * Checks, in order: the directory opens (the dead worker's lock is recovered); every key
 * holds exactly one of its legal states, byte for byte (the last acknowledged content, or
 * the in-flight operation's — never a mix, never something else); an in-flight batch
 * DELETE happened for all its keys or none; LIST (paged, through continuation tokens)
 * shows exactly the present keys in UTF-8 byte order with the right sizes and ETags;
 * multipart uploads are open exactly when the log says they must be (and a Complete is
 * atomic with the object it writes); `verifyRepository` is clean; commit times strictly
 * increase along the chain, across the kill and every reopen. Then it aborts the
 * uploads left open, so the next worker starts from a state the returned model describes.
 */
import { acquireDirectoryLock } from '../../src/provider/fs/directory-lock.js';
import { createFsProvider } from '../../src/provider/fs/index.js';
import { Store } from '../../src/store/store.js';
import { etagOf } from '../../src/store/records.js';
import { verifyRepository } from '../../src/store/verify.js';
import { contentBytes, contentId, contentSize, expectedEtag } from './bodies.js';
import { BUCKET, type Content } from './protocol.js';
import type { WorkerLog } from './model.js';
import { chainCommits } from '../store/helpers.js';

/** A commit of the chain: where the next check's walk of commit times starts. */
export interface ChainMark {
  seq: number;
  time: number;
}

export interface CheckResult {
  /** What every key holds now (the next worker's starting state). */
  state: Map<string, Content>;
  inflightWhole: number;
  inflightAbsent: number;
  /** In-flight operations whose outcome cannot be told apart (e.g. deleting an absent key). */
  inflightSame: number;
  verifyClean: boolean;
  /** The newest commit when the chain was walked (pass it to the next check). */
  head: ChainMark;
  failures: string[];
}

/** Opens the store on `dir` the way a server does (directory lock, fs provider). */
export async function openDirectory(dir: string, options: Parameters<typeof Store.open>[1] = {}): Promise<Store> {
  const lock = await acquireDirectoryLock(dir);
  try {
    const provider = await createFsProvider({ dir });
    return await Store.open(provider, options, async () => {
      await provider.close();
      await lock.release();
    });
  } catch (err) {
    await lock.release();
    throw err;
  }
}

async function readKey(store: Store, key: string): Promise<{ bytes: Uint8Array; etag: string } | null> {
  let res;
  try {
    res = await store.getObject(BUCKET, key);
  } catch (err) {
    if ((err as { code?: string }).code === 'NoSuchKey') return null;
    throw err;
  }
  const chunks: Uint8Array[] = [];
  for await (const c of res.body) chunks.push(c);
  return { bytes: Buffer.concat(chunks), etag: etagOf(res.version) };
}

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);

/** Which legal content `got` is (its index), or -1. */
function match(legal: Content[], got: { bytes: Uint8Array; etag: string } | null): number {
  return legal.findIndex((c) => {
    if (!c || !got) return !c && !got;
    return contentSize(c) === got.bytes.length && got.etag === expectedEtag(c, c.length > 1) && same(got.bytes, contentBytes(c));
  });
}

/** `since`: the head an earlier check walked to; only commits after it are read again. */
export async function checkAfterKill(dir: string, keys: readonly string[], log: WorkerLog, since: ChainMark = { seq: 0, time: 0 }): Promise<CheckResult> {
  const r: CheckResult = { state: new Map(), inflightWhole: 0, inflightAbsent: 0, inflightSame: 0, verifyClean: false, head: since, failures: [] };
  const fail = (m: string) => r.failures.push(m);
  const store = await openDirectory(dir);
  try {
    // 1. Every key holds one legal state.
    const side = new Map<string, number>();
    for (const key of keys) {
      const legal = log.legal(key);
      let got;
      try {
        got = await readKey(store, key);
      } catch (err) {
        fail(`GET ${key} failed: ${(err as Error).message} (legal: ${legal.map(contentId).join(' | ')})`);
        r.state.set(key, legal[0]!);
        continue;
      }
      const i = match(legal, got);
      if (i < 0) {
        fail(`${key} holds ${got ? `${got.bytes.length} bytes, etag ${got.etag}` : 'nothing'}; legal: ${legal.map(contentId).join(' | ')}`);
        r.state.set(key, legal[0]!);
        continue;
      }
      side.set(key, i);
      r.state.set(key, legal[i]!);
      if (log.inflight.has(key)) {
        if (legal.length === 1) r.inflightSame++;
        else if (i === 1) r.inflightWhole++;
        else r.inflightAbsent++;
      }
    }
    // 2. Batch deletes are all-or-nothing.
    for (const [id, group] of log.atomic) {
      const sides = new Set(group.filter((k) => log.legal(k).length === 2).map((k) => side.get(k)));
      if (sides.size > 1) fail(`batch delete ${id} of ${group.join(', ')} is half applied`);
    }
    // 3. Listing, in pages, equals the present keys in UTF-8 byte order.
    const listed: { key: string; size: number; etag: string }[] = [];
    let token: string | undefined;
    do {
      const page = await store.listObjects(BUCKET, { maxKeys: 5, ...(token ? { continuationToken: token } : {}) });
      for (const e of page.contents) listed.push({ key: e.key, size: e.version.size, etag: etagOf(e.version) });
      token = page.nextContinuationToken;
    } while (token);
    const want = [...r.state].filter(([, c]) => c).sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const wantText = want.map(([k, c]) => `${k}:${contentSize(c!)}:${expectedEtag(c!, c!.length > 1)}`).join(', ');
    const gotText = listed.map((e) => `${e.key}:${e.size}:${e.etag}`).join(', ');
    if (wantText !== gotText) fail(`LIST shows [${gotText}], expected [${wantText}]`);
    // 4. Multipart uploads.
    const open = (await store.listMultipartUploads(BUCKET)).uploads;
    for (const u of open) {
      const facts = log.uploads.get(u.uploadId);
      if (!facts) {
        if (!log.creating.has(u.key)) fail(`upload ${u.uploadId} of ${u.key} is open but was never created`);
      } else if (facts.state === 'done') fail(`upload ${u.uploadId} of ${u.key} was completed but is still open`);
      else if (facts.state === 'completing' && side.get(u.key) === 1) fail(`upload ${u.uploadId} is still open though its object was written`);
    }
    const openIds = new Set(open.map((u) => u.uploadId));
    for (const [id, facts] of log.uploads) {
      const mustBeOpen = facts.state === 'open' || (facts.state === 'completing' && side.get(facts.key) === 0);
      if (mustBeOpen && !openIds.has(id)) fail(`upload ${id} of ${facts.key} was created but is gone`);
    }
    // 5. The whole repository verifies.
    const report = await verifyRepository(store.repo.provider);
    r.verifyClean = report.ok;
    for (const p of report.problems) fail(`verify: ${p.code} ${p.blob}: ${p.message}`);
    // 6. Commit times strictly increase (the worker's clock is the wall clock; the commits
    // of earlier workers and of the checks' own reopens are in the chain too).
    let prev = since;
    for (const c of await chainCommits(store.repo.provider, since.seq)) {
      if (c.time <= prev.time) fail(`commit ${c.seq} has time ${c.time}, not after commit ${prev.seq}'s ${prev.time}`);
      prev = { seq: c.seq, time: c.time };
    }
    r.head = prev;
    for (const u of open) await store.abortMultipartUpload(BUCKET, u.key, u.uploadId);
  } finally {
    await store.close();
  }
  return r;
}
