/**
 * @module Opening a repository: initialise an empty provider, or load the newest root
 * and replay the verified commit chain after it.
 *
 * Opening refuses — with an error naming the blob — rather than serving partial state:
 * a missing anchor/root/commit is 'MissingBlob', a record whose bytes fail their CRC is
 * 'Corrupt', a chain that does not link (hash, sequence, parent) is 'BrokenChain'.
 */
import { getBytes, ProviderError, type Provider } from '../provider/provider.js';
import { ANCHOR_KEY, CONFIG_KEY, newId, rootKey } from './layout.js';
import { decodeAnchor, encodeAnchor, FORMAT, type Anchor } from './anchor.js';
import { decodeCommit, type CommitRecord, type RecordRef } from './commit.js';
import { decodeRoot, encodeRoot, type RootRecord } from './root.js';
import { readRecord, writeRecordBlob } from './records-io.js';
import { StoreError } from './errors.js';
import { findFrameAfter, scanLog } from './commit-log/scan.js';
import { deriveFrameKey, type FrameKey } from './commit-log/frame.js';
import type { AnchorLog } from './anchor.js';

export interface RepositoryConfig {
  format: typeof FORMAT;
  repositoryId: string;
  /** Hex secret that authenticates listing continuation tokens, and from which the commit log's
   * frame keys derive (commit-log/frame.ts). */
  tokenSecret: string;
  created: number;
}

export interface Loaded {
  anchor: Anchor;
  anchorEtag: string;
  config: RepositoryConfig;
  root: RootRecord;
  /** The commit log's frame keys, from config's secret (commit-log/frame.ts). */
  frameKey: FrameKey;
  /** Commits after the root, oldest first, each verified against its successor. */
  commits: CommitRecord[];
  /** The newest commit: the anchor's, or the last one the log scan found after it (load sets
   * it; absent means the anchor's). */
  tip?: ChainTipRef;
}

/** Where a chain ends: its newest commit and, with a commit log, the position after its frame. */
export interface ChainTipRef {
  seq: number;
  head: RecordRef | undefined;
  log: AnchorLog | undefined;
}

const sameRef = (a: RecordRef | undefined, b: RecordRef | undefined) => !!a && !!b && a.key === b.key && a.hash === b.hash;

async function readConfig(provider: Provider): Promise<RepositoryConfig | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await getBytes(provider, CONFIG_KEY);
  } catch (err) {
    if (err instanceof ProviderError && err.code === 'NotFound') return undefined;
    throw err;
  }
  let c: RepositoryConfig;
  try {
    c = JSON.parse(new TextDecoder().decode(bytes)) as RepositoryConfig;
  } catch (cause) {
    throw new StoreError('Corrupt', `${CONFIG_KEY} is not valid JSON`, { cause });
  }
  if (c.format !== FORMAT) throw new StoreError('UnsupportedFormat', `${CONFIG_KEY}: format ${String(c.format)} is not ${FORMAT}`);
  if (!/^[0-9a-f]{64}$/.test(c.tokenSecret ?? '')) throw new StoreError('Corrupt', `${CONFIG_KEY}: token secret is malformed`);
  return c;
}

/** The repository's commit log frame keys (commit-log/frame.ts), from its config. Throws
 * StoreError 'MissingBlob' without a config, and as readConfig. */
export async function readFrameKey(provider: Provider): Promise<FrameKey> {
  const config = await readConfig(provider);
  if (!config) throw new StoreError('MissingBlob', `${CONFIG_KEY} is missing`);
  return deriveFrameKey(config.tokenSecret);
}

/** Creates config, the genesis root and the anchor on an empty provider. */
async function initialise(provider: Provider, now: number, writer: string): Promise<void> {
  // An interrupted initialisation leaves genesis roots (sequence 0) and nothing else; any
  // later root or any commit means a real repository lost its anchor.
  const roots = await provider.list({ prefix: 'roots/', limit: 1000 });
  const commits = await provider.list({ prefix: 'commits/', limit: 1 });
  const genesisOnly = roots.items.every((i) => i.key.startsWith(`roots/${'0'.repeat(12)}-`)) && !roots.next;
  if (commits.items.length || !genesisOnly) {
    throw new StoreError('MissingBlob', `${ANCHOR_KEY} is missing but the provider holds repository blobs: refusing to re-initialise over them`);
  }
  let config = await readConfig(provider);
  if (!config) {
    config = {
      format: FORMAT,
      repositoryId: newId(16),
      tokenSecret: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex'),
      created: now,
    };
    try {
      await provider.put(CONFIG_KEY, new TextEncoder().encode(`${JSON.stringify(config, null, 2)}\n`), { ifNoneMatch: '*' });
    } catch (err) {
      if (!(err instanceof ProviderError && err.code === 'PreconditionFailed')) throw err;
      config = (await readConfig(provider))!;
    }
  }
  const genesis: RootRecord = { seq: 0, time: now, repositoryId: config.repositoryId, buckets: [], uploads: [], keys: [] };
  const ref = await writeRecordBlob(provider, rootKey(0), encodeRoot(genesis));
  const anchor: Anchor = { format: FORMAT, seq: 0, root: { ...ref, seq: 0 }, time: now, writer };
  await provider.put(ANCHOR_KEY, encodeAnchor(anchor), { ifNoneMatch: '*' });
}

/** Reads the anchor, or undefined if there is none. */
export async function readAnchor(provider: Provider, newest = true): Promise<{ anchor: Anchor; etag: string } | undefined> {
  let res;
  try {
    // The newest anchor or none: a provider unsure which of its copies is newest refuses
    // (GetOptions.newest). The writer reading back its own failed move passes false: what it
    // knows is the newest unless the failure said a copy may land (then it fenced already).
    res = await provider.get(ANCHOR_KEY, newest ? { newest: true } : {});
  } catch (err) {
    if (err instanceof ProviderError && err.code === 'NotFound') return undefined;
    throw err;
  }
  const chunks: Uint8Array[] = [];
  for await (const c of res.body as AsyncIterable<Uint8Array>) chunks.push(c);
  return { anchor: decodeAnchor(Buffer.concat(chunks)), etag: res.info.etag };
}

/**
 * Walks the chain back from `head` to the root and returns the commits oldest first.
 * Each commit must hash to what its successor (or the anchor) names, carry the next lower
 * sequence, and the oldest must name the root's commit (or the root itself at genesis).
 */
export async function loadChain(provider: Provider, anchor: Anchor, root: RootRecord, frameKey: FrameKey | undefined): Promise<CommitRecord[]> {
  return (await loadChainTip(provider, anchor, root, frameKey)).commits;
}

/**
 * As loadChain, then (when the anchor names a commit log position) scans the log forward for
 * the commits appended after the anchor's head (commit-log/scan.ts), and (unless `checkTail` is
 * false) refuses with StoreError 'BrokenChain' when a valid later frame lies past where the scan
 * stopped: damaged bytes would otherwise silently drop acknowledged commits. Returns every commit after
 * the root, oldest first, and the chain's tip. `frameKey`: the repository's (readFrameKey;
 * undefined when its config is unreadable: a log segment with keyed frames then throws
 * StoreError 'Corrupt'); 'Corrupt' too when the anchor names other frame keys than `frameKey`
 * (anchor.ts frameKeyId: the config's secret changed). Throws as loadChain and scanLog.
 */
export async function loadChainTip(provider: Provider, anchor: Anchor, root: RootRecord, frameKey: FrameKey | undefined, opts: { checkTail?: boolean } = {}): Promise<{ commits: CommitRecord[]; tip: ChainTipRef }> {
  if (anchor.frameKeyId !== undefined && frameKey && frameKey.id !== anchor.frameKeyId) {
    // Every frame would fail its MAC, and the log would read as ending at the anchor: commits
    // after it silently dropped. The secret in config changed (damaged, or another repository's).
    throw new StoreError('Corrupt', `${CONFIG_KEY}: its secret gives frame keys ${frameKey.id}, but the anchor's log was written with ${anchor.frameKeyId} (config damaged or replaced)`);
  }
  const commits = await walkBack(provider, anchor, root);
  const tip: ChainTipRef = { seq: anchor.seq, head: anchor.head, log: anchor.log };
  if (anchor.log) {
    let from = anchor.log;
    let parent: RecordRef = anchor.head ?? anchor.root;
    // A reader beside a running repository (verify) may stop at a frame being appended while a
    // later one completes meanwhile: the scan goes on from where it stopped before concluding.
    for (let attempt = 1; ; attempt++) {
      const scanned = await scanLog(provider, from, { seq: tip.seq, ref: parent }, frameKey);
      for (const c of scanned.commits) commits.push(c.record);
      const last = scanned.commits.at(-1);
      if (last) {
        tip.seq = last.record.seq;
        tip.head = last.ref;
        parent = last.ref;
      }
      tip.log = from = scanned.end;
      // GC's mark, beside a running repository, passes checkTail false: it needs no proof of
      // the end, only what is there.
      const beyond = opts.checkTail === false ? undefined : await findFrameAfter(provider, scanned.end.key, scanned.end.offset, tip.seq, frameKey);
      if (beyond === undefined) break;
      if (attempt >= TAIL_ATTEMPTS) {
        throw new StoreError('BrokenChain', `log segment ${scanned.end.key}: the log ends at ${scanned.end.offset} (commit ${tip.seq}) but a valid later frame lies at ${beyond}: bytes in between are damaged`);
      }
    }
  }
  return { commits, tip };
}

/** Scans of the log's tail before a gap followed by a valid frame is called damage (recovery
 * alone: 1 would do; a reader beside a writer may see one append in flight per scan). */
const TAIL_ATTEMPTS = 3;

async function walkBack(provider: Provider, anchor: Anchor, root: RootRecord): Promise<CommitRecord[]> {
  const commits: CommitRecord[] = [];
  let ref = anchor.head;
  for (let seq = anchor.seq; seq > root.seq; seq--) {
    if (!ref) throw new StoreError('BrokenChain', `anchor names sequence ${anchor.seq} but no head commit`);
    const c = decodeCommit(await readRecord(provider, ref, `commit ${seq}`), `commit ${ref.key}`);
    if (c.seq !== seq) throw new StoreError('BrokenChain', `${ref.key} has sequence ${c.seq}, expected ${seq}`);
    commits.push(c);
    ref = c.parent;
  }
  if (anchor.seq > root.seq) {
    const expected = root.head ?? { ...anchor.root };
    if (!sameRef(ref, expected)) {
      throw new StoreError('BrokenChain', `commit ${root.seq + 1} does not follow the root's commit ${expected.key}`);
    }
  } else if (anchor.seq === root.seq && root.seq > 0 && !sameRef(anchor.head, root.head)) {
    throw new StoreError('BrokenChain', `anchor head and root ${anchor.root.key} disagree at sequence ${root.seq}`);
  } else if (anchor.seq < root.seq) {
    throw new StoreError('BrokenChain', `anchor sequence ${anchor.seq} is behind its root ${root.seq}`);
  }
  return commits.reverse();
}

/** Loads (initialising when allowed and empty) everything a Repository needs to start. */
export async function load(provider: Provider, options: { create: boolean; now: number; writer: string }): Promise<Loaded> {
  let found = await readAnchor(provider);
  if (!found) {
    if (!options.create) throw new StoreError('MissingBlob', `${ANCHOR_KEY} is missing: not a Strata repository`);
    await initialise(provider, options.now, options.writer);
    found = await readAnchor(provider);
    if (!found) throw new StoreError('MissingBlob', `${ANCHOR_KEY} vanished right after initialisation`);
  }
  const config = await readConfig(provider);
  if (!config) throw new StoreError('MissingBlob', `${CONFIG_KEY} is missing`);
  const { anchor, etag } = found;
  const root = decodeRoot(await readRecord(provider, anchor.root, `root ${anchor.root.seq}`), `root ${anchor.root.key}`);
  if (root.seq !== anchor.root.seq) throw new StoreError('BrokenChain', `${anchor.root.key} covers ${root.seq}, anchor says ${anchor.root.seq}`);
  if (root.repositoryId !== config.repositoryId) {
    throw new StoreError('BrokenChain', `${anchor.root.key} belongs to repository ${root.repositoryId}, not ${config.repositoryId}`);
  }
  const frameKey = deriveFrameKey(config.tokenSecret);
  const { commits, tip } = await loadChainTip(provider, anchor, root, frameKey);
  // New commits chain on the tip: what the scan read of its segment must be as durable as an
  // acknowledged append before they do (a crash may have left the last append on some of the
  // segment's copies only; Provider.settleLog).
  if (tip.log && provider.settleLog) await provider.settleLog(tip.log.key, tip.log.offset);
  return { anchor, anchorEtag: etag, config, frameKey, root, commits, tip };
}
