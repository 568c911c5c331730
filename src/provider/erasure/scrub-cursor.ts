/**
 * @module Where a scrub pass stands, kept in the repository so a killed scrub resumes: the
 * cursor (`maintenance/scrub-cursor`: the last key of the checked prefix and the totals so far)
 * and the end of the last completed pass (`maintenance/scrub-last`), which the server's schedule
 * counts its interval from across restarts.
 *
 * Both are small JSON blobs written through the provider (replicated on the erasure provider).
 * GC sweeps only its own prefixes, so maintenance/ is never collected; the scrub's own listing
 * skips maintenance/. A blob that does not parse as what we wrote (damaged, from a newer
 * version, hostile) is treated as absent: the scrub starts over, which is always safe.
 */
import { getBytes, ProviderError, type Provider } from '../provider.js';

export const MAINTENANCE_PREFIX = 'maintenance/';
export const SCRUB_CURSOR_KEY = `${MAINTENANCE_PREFIX}scrub-cursor`;
export const SCRUB_LAST_KEY = `${MAINTENANCE_PREFIX}scrub-last`;
/** What the last pass that went through every blob found (blobs, bytes): the next pass's size,
 * so it need not list every domain once more just to size its progress bar. */
export const SCRUB_SIZE_KEY = `${MAINTENANCE_PREFIX}scrub-size`;
/** Largest cursor blob read back, bytes: the totals plus at most MAX_LISTED_KEYS keys of at most
 * 1 KiB each fit well under it; anything longer is not ours. */
const MAX_STATE_BYTES = 4 * 1024 * 1024;
/** Keys (lost, failed) a report and a cursor list by name; the counts go on past it. A
 * disaster with a million lost blobs must not grow the cursor or the report without bound. */
export const MAX_LISTED_KEYS = 1000;
const VERSION = 1;

/** The totals a pass accumulates (the part of ScrubReport a resume carries over). */
export interface ScrubTotals {
  blobs: number;
  bytes: number;
  damagedBlobs: number;
  /** Damaged fragments (missing, corrupt or unreachable) by domain id. */
  damagedByDomain: Record<string, number>;
  /** `verified` counts every fragment a check read (damaged ones too); `unchecked` (absent
   * while 0) the fragments present by name that a missing-only repair did not verify. */
  fragments: { verified: number; missing: number; corrupt: number; unreachable: number; unchecked?: number };
  repairedFragments: number;
  repairBytes: number;
  /** Damaged, readable blobs still short of full redundancy after this pass (not repaired, or
   * repair wrote fewer fragments than were damaged). */
  unrepairedBlobs: number;
  /** Keys of blobs that cannot be read (more than m fragments damaged), at most MAX_LISTED_KEYS. */
  lost: string[];
  lostCount: number;
  /** Blobs whose check failed (I/O, a domain down for the replicated copies...), at most MAX_LISTED_KEYS. */
  errors: { key: string; error: string }[];
  errorCount: number;
  /** Blobs listed but gone when checked (GC freed them meanwhile). */
  vanished: number;
  /** Blobs with too few fragments to read that the repository never committed (torn writes,
   * the `isGarbage` option of runScrub): not damage; GC deletes them. At most MAX_LISTED_KEYS. */
  garbage: string[];
  garbageCount: number;
}

export interface ScrubCursor {
  /** Every key up to and including this one is checked and in `totals`. */
  after: string;
  repair: boolean;
  /** A missing-only repair pass (scrub.ts ScrubOptions.missingOnly); absent: a full pass. */
  missingOnly?: boolean;
  /** When the pass began (ms since the epoch). */
  startedAt: number;
  savedAt: number;
  totals: ScrubTotals;
}

export function emptyTotals(): ScrubTotals {
  return {
    blobs: 0,
    bytes: 0,
    damagedBlobs: 0,
    damagedByDomain: {},
    fragments: { verified: 0, missing: 0, corrupt: 0, unreachable: 0 },
    repairedFragments: 0,
    repairBytes: 0,
    unrepairedBlobs: 0,
    lost: [],
    lostCount: 0,
    errors: [],
    errorCount: 0,
    vanished: 0,
    garbage: [],
    garbageCount: 0,
  };
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses what saveCursor wrote; undefined for anything else (never throws). */
export function parseCursor(bytes: Uint8Array): ScrubCursor | undefined {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isObj(v) || v.v !== VERSION || typeof v.after !== 'string' || v.after === '' || typeof v.repair !== 'boolean') return undefined;
  if (!isCount(v.startedAt) || !isCount(v.savedAt) || !isObj(v.totals)) return undefined;
  const t = v.totals;
  const counts = ['blobs', 'bytes', 'damagedBlobs', 'repairedFragments', 'repairBytes', 'unrepairedBlobs', 'lostCount', 'errorCount', 'vanished'] as const;
  if (!counts.every((c) => isCount(t[c]))) return undefined;
  const f = t.fragments;
  if (!isObj(f) || !['verified', 'missing', 'corrupt', 'unreachable'].every((c) => isCount(f[c]))) return undefined;
  if (f.unchecked !== undefined && !isCount(f.unchecked)) return undefined;
  if (v.missingOnly !== undefined && typeof v.missingOnly !== 'boolean') return undefined;
  if (!isObj(t.damagedByDomain) || !Object.values(t.damagedByDomain).every(isCount)) return undefined;
  if (!Array.isArray(t.lost) || t.lost.length > MAX_LISTED_KEYS || !t.lost.every((k) => typeof k === 'string')) return undefined;
  if (!Array.isArray(t.errors) || t.errors.length > MAX_LISTED_KEYS) return undefined;
  if (!t.errors.every((e) => isObj(e) && typeof e.key === 'string' && typeof e.error === 'string')) return undefined;
  // Cursors saved before garbage was counted have neither field: none so far.
  const garbage = t.garbage ?? [];
  const garbageCount = t.garbageCount ?? 0;
  if (!Array.isArray(garbage) || garbage.length > MAX_LISTED_KEYS || !garbage.every((k) => typeof k === 'string') || !isCount(garbageCount)) return undefined;
  const totals: ScrubTotals = {
    blobs: t.blobs as number,
    bytes: t.bytes as number,
    damagedBlobs: t.damagedBlobs as number,
    damagedByDomain: { ...(t.damagedByDomain as Record<string, number>) },
    fragments: { verified: f.verified as number, missing: f.missing as number, corrupt: f.corrupt as number, unreachable: f.unreachable as number, ...(f.unchecked ? { unchecked: f.unchecked as number } : {}) },
    repairedFragments: t.repairedFragments as number,
    repairBytes: t.repairBytes as number,
    unrepairedBlobs: t.unrepairedBlobs as number,
    lost: [...(t.lost as string[])],
    lostCount: t.lostCount as number,
    errors: (t.errors as { key: string; error: string }[]).map((e) => ({ key: e.key, error: e.error })),
    errorCount: t.errorCount as number,
    vanished: t.vanished as number,
    garbage: [...(garbage as string[])],
    garbageCount,
  };
  return { after: v.after, repair: v.repair, ...(v.missingOnly === true ? { missingOnly: true } : {}), startedAt: v.startedAt, savedAt: v.savedAt, totals };
}

async function readSmall(provider: Provider, key: string): Promise<Uint8Array | undefined> {
  try {
    const info = await provider.head(key);
    if (info.size > MAX_STATE_BYTES) return undefined;
    return await getBytes(provider, key);
  } catch (err) {
    if (err instanceof ProviderError && err.code === 'NotFound') return undefined;
    throw err;
  }
}

/** The saved cursor, or undefined when there is none or it does not parse. Throws what the
 * provider throws other than NotFound. */
export async function loadCursor(provider: Provider): Promise<ScrubCursor | undefined> {
  const bytes = await readSmall(provider, SCRUB_CURSOR_KEY);
  return bytes ? parseCursor(bytes) : undefined;
}

/** Replaces the saved cursor. Throws what provider.put throws. */
export async function saveCursor(provider: Provider, cursor: Omit<ScrubCursor, 'savedAt'>): Promise<void> {
  const body = JSON.stringify({ v: VERSION, ...cursor, savedAt: Date.now() });
  await provider.put(SCRUB_CURSOR_KEY, Buffer.from(body, 'utf8'));
}

/** Removes the cursor (a pass completed, or a restart was asked for). Idempotent. */
export async function clearCursor(provider: Provider): Promise<void> {
  await provider.delete(SCRUB_CURSOR_KEY);
}

/** When the last pass completed (ms since the epoch), or undefined. Never throws for a
 * missing or malformed blob; throws other provider errors. */
export async function loadLastPass(provider: Provider): Promise<{ completedAt: number; repair: boolean } | undefined> {
  const bytes = await readSmall(provider, SCRUB_LAST_KEY);
  if (!bytes) return undefined;
  try {
    const v = JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown;
    if (isObj(v) && v.v === VERSION && isCount(v.completedAt) && typeof v.repair === 'boolean') return { completedAt: v.completedAt, repair: v.repair };
  } catch {
    // not ours: as if absent
  }
  return undefined;
}

/** The size the last pass over every blob found, or undefined (none yet, or not ours). Never
 * throws for a missing or malformed blob; throws other provider errors. */
export async function loadPassSize(provider: Provider): Promise<{ blobs: number; bytes: number } | undefined> {
  const bytes = await readSmall(provider, SCRUB_SIZE_KEY);
  if (!bytes) return undefined;
  try {
    const v = JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown;
    if (isObj(v) && v.v === VERSION && isCount(v.blobs) && isCount(v.bytes)) return { blobs: v.blobs, bytes: v.bytes };
  } catch {
    // not ours: as if absent
  }
  return undefined;
}

/** Records the size a pass over every blob found. Throws what provider.put throws. */
export async function savePassSize(provider: Provider, size: { blobs: number; bytes: number }): Promise<void> {
  await provider.put(SCRUB_SIZE_KEY, Buffer.from(JSON.stringify({ v: VERSION, blobs: size.blobs, bytes: size.bytes }), 'utf8'));
}

/** Records that a pass completed now. Throws what provider.put throws. */
export async function saveLastPass(provider: Provider, repair: boolean, completedAt = Date.now()): Promise<void> {
  await provider.put(SCRUB_LAST_KEY, Buffer.from(JSON.stringify({ v: VERSION, completedAt, repair }), 'utf8'));
}
