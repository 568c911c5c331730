/**
 * @module Admission at request entry: the first of the two checks a write passes (the second,
 * exact one is at staging, history-budget.ts / tx.ts), made from what the request declares —
 * before any body byte is read, before `100 Continue` is sent, before any blob is written.
 *
 * History budget: a request that would add a retained point (PutObject, CopyObject, POST
 * Object, CompleteMultipartUpload, and CreateMultipartUpload / UploadPart / UploadPartCopy,
 * whose upload can only end in one) is refused with StoreError 'HistoryBudgetFull' (403
 * QuotaExceeded) when even the smallest entry it could add does not fit. The estimate is a
 * LOWER bound of the entry's accounted bytes (log key + fixed record fields + the user
 * metadata it declares), so this check never refuses a write the exact check would admit:
 * writes fill the budget to the byte. A carrier body (streamed to blobs before staging) is
 * checked again by the store against an upper bound before its first blob (objects-write.ts). DELETE without versionId adds a delete marker in a
 * versioned or suspended bucket (refused when full) and an absence otherwise (admitted: it
 * only makes history expirable, history-budget.ts). Removals (?versionId=) are always admitted.
 *
 * Pending budget: a body the store would hold (a packed body whole, a carrier one segment at a
 * time) is refused with 503 SlowDown + Retry-After when even the smallest reservation it
 * needs does not fit now (store/budget.ts). The store reserves for real before reading.
 */
import type { RequestContext } from './context.js';
import type { Endpoint } from './router/endpoint.js';
import { SEGMENT_SIZE } from '../store/layout.js';
import { escapeKey } from '../store/upload-keys.js';
import { VERSION_ID_LENGTH } from '../store/version-id.js';

/**
 * Bytes every version-log entry holds besides its key and metadata, at least: kind and flags
 * (2), commit time (a 6-byte varint for any time after 1970 + 4.4 years), record flags (1),
 * version id (1 + 4: `null` at the shortest), size (1), MD5 (16), part count (1), Last-Modified (6).
 */
const MIN_ENTRY_FIXED_BYTES = 2 + 6 + 1 + 5 + 1 + 16 + 1 + 6;

/**
 * The smallest accounted size of a new log entry for `key`. Pure. Metadata headers are not
 * counted: what is stored of them can be shorter than what was sent (trimmed, decoded), and a
 * lower bound must stay one; the exact check at staging counts them.
 */
export function minEntryBytes(key: string): number {
  return Buffer.byteLength(escapeKey(key), 'utf8') + VERSION_ID_LENGTH + MIN_ENTRY_FIXED_BYTES;
}

/** The body bytes a request declares (aws-chunked: the decoded length), or undefined. */
function declaredBody(headers: Record<string, string | undefined>): number | undefined {
  const v = headers['x-amz-decoded-content-length'] ?? headers['content-length'];
  if (v === undefined || !/^\d{1,15}$/.test(v)) return undefined;
  return Number(v);
}

/** Whether a DELETE without versionId adds a retained point (a delete marker) in `bucket`. */
function addsMarker(r: RequestContext, bucket: string): boolean {
  const status = r.deps.store.getVersioning(bucket);
  return status === 'Enabled' || status === 'Suspended';
}

/**
 * Refuses request `e` if its declared size cannot fit the history or pending budget (see the
 * module note). Mutates only the refusal counters. Throws StoreError 'HistoryBudgetFull' or
 * 'SlowDown'; a missing bucket is left for the handler to report.
 */
export function admitRequest(r: RequestContext, e: Endpoint): void {
  const repo = r.deps.store.repo;
  const history = repo.state.history;
  let adds: string | undefined;
  switch (e.op) {
    case 'PutObject':
    case 'CopyObject':
    case 'CreateMultipartUpload':
    case 'UploadPart':
    case 'UploadPartCopy':
    case 'CompleteMultipartUpload':
      adds = e.key;
      break;
    case 'DeleteObject':
      if (e.versionId === undefined && repo.state.buckets.has(e.bucket) && addsMarker(r, e.bucket)) adds = e.key;
      break;
    default:
      break;
  }
  if (adds !== undefined && history.limit !== Infinity) {
    const need = minEntryBytes(adds);
    if (history.bytes + need > history.limit) throw history.fullError(history.bytes, need);
  }
  if (e.op === 'PutObject' || e.op === 'UploadPart') {
    const body = declaredBody(r.headers);
    if (body !== undefined) repo.budget.check(Math.min(body, SEGMENT_SIZE));
  }
}
