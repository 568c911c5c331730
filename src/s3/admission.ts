/**
 * @module Admission at request entry: the first of the two checks a write passes (the second,
 * exact one is at staging, history-budget.ts / tx.ts), made from what the request declares —
 * before any body byte is read, before `100 Continue` is sent, before any blob is written.
 *
 * History budget: a request that would add a retained point (PutObject, CopyObject,
 * CompleteMultipartUpload, and CreateMultipartUpload / UploadPart / UploadPartCopy, whose
 * upload can only end in one) is refused with StoreError 'HistoryBudgetFull' (403
 * QuotaExceeded) when even the smallest entry it could add does not fit. The estimate is a
 * LOWER bound of the entry's accounted bytes (log key + fixed record fields), so this check
 * never refuses a write the exact check would admit: writes fill the budget to the byte. A
 * sized carrier body (streamed to blobs before staging) is checked again by the store against
 * an upper bound before its first blob (objects-write.ts); POST Object names its key in its
 * form, so the store checks it before its first chunk (objects-unsized.ts). DELETE without
 * versionId adds a delete marker in a versioned or suspended bucket (refused when full) and an
 * absence otherwise (admitted: it only makes history expirable, history-budget.ts). Removals
 * (?versionId=) are always admitted.
 *
 * Pending budget: a body the store would hold (a packed body whole, a carrier one segment at a
 * time) is refused with 503 SlowDown + Retry-After when even the smallest reservation it
 * needs does not fit now (store/budget.ts). The store reserves for real before reading.
 */
import type { RequestContext } from './context.js';
import type { Endpoint } from './router/endpoint.js';
import { SEGMENT_SIZE } from '../store/layout.js';
import { assertHistoryRoom, minEntryBytes } from '../store/history-budget.js';

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
  let adds: { bucket: string; key: string } | undefined;
  switch (e.op) {
    case 'PutObject':
    case 'CopyObject':
    case 'CreateMultipartUpload':
    case 'UploadPart':
    case 'UploadPartCopy':
    case 'CompleteMultipartUpload':
      adds = e;
      break;
    case 'DeleteObject':
      if (e.versionId === undefined && repo.state.buckets.has(e.bucket) && addsMarker(r, e.bucket)) adds = e;
      break;
    default:
      break;
  }
  // A missing bucket is the handler's to report (NoSuchBucket), not a budget matter.
  if (adds && repo.state.buckets.has(adds.bucket)) assertHistoryRoom(repo.state, minEntryBytes(adds.key));
  if (e.op === 'PutObject' || e.op === 'UploadPart') {
    const body = declaredBody(r.headers);
    if (body !== undefined) r.budget.check(Math.min(body, SEGMENT_SIZE));
  }
}
