/**
 * @module What `strata verify` checks of a version log entry (version-log.ts): its key parses
 * into an object key and a position, its value decodes, and a version's record is the one
 * its position names (a non-null version's id is its position). A tombstone (an entry dropped
 * by expiry, version-log.ts) is valid and names nothing.
 */
import { decodeEntry, isLogTombstone } from './version-log.js';
import { formatVersionId, parseLogKey } from './version-id.js';
import { StoreError } from './errors.js';
import type { ObjectVersion } from './records.js';

/**
 * Checks one entry (`logKey` given: one read from a run; absent: one from a commit, whose key
 * the mutation carries) and returns its record with the object key (for body references), or
 * undefined for an absence or a tombstone. Throws StoreError 'Corrupt' naming what is wrong.
 */
export function checkLogEntry(value: Uint8Array, logKey?: string): (ObjectVersion & { key: string }) | undefined {
  const parsed = logKey === undefined ? undefined : parseLogKey(logKey);
  if (logKey !== undefined && !parsed) throw new StoreError('Corrupt', `version log key ${JSON.stringify(logKey)} is malformed`);
  if (isLogTombstone(value)) return undefined; // an entry dropped by expiry (names no body)
  const e = decodeEntry(value);
  if (!e.record) return undefined;
  if (parsed) {
    const id = formatVersionId(parsed.position);
    const own = e.isNull ? e.record.logId ?? (parsed.position.seq === 0 ? id : undefined) : e.record.versionId;
    if (own !== id) throw new StoreError('Corrupt', `version log entry of ${JSON.stringify(parsed.key)} at ${id} holds version ${own}`);
    if (e.isNull !== (e.record.versionId === 'null')) throw new StoreError('Corrupt', `version log entry ${id}: null flag disagrees with its record`);
  }
  return { ...e.record, key: parsed?.key ?? '' };
}
