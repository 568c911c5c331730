/**
 * @module Reads as of a past time over S3: `x-strata-as-of: <RFC 3339 time>`, as a request
 * header or as a query parameter (a presigned URL carries it in its query), on GetObject,
 * HeadObject, ListObjects and ListObjectsV2 — the object or the listing as it was then,
 * inside the bucket's history window (store/history-window.ts).
 *
 * What a request must satisfy, in this order (checked once it is routed and authorized):
 *   1. only those four operations take it: anything else carrying it — every write, and the
 *      reads that have no as-of form (tagging, ACL, attributes, versions...) — is refused
 *      with 400 InvalidRequest, never carried out as if it were absent;
 *   2. it is signed: SigV4 signs the whole query, so the parameter always is; the header
 *      must be listed in SignedHeaders (a proxy cannot add it to a signed request). SigV2
 *      signs neither (400 InvalidRequest); an anonymous request cannot hold 3 (403);
 *   3. the key holds READ on the bucket by itself (admin, owner, or a read grant), besides
 *      what the operation itself needs: a past state shows objects that no longer exist,
 *      which per-key policy or ACL decisions about today's objects do not cover (403
 *      AccessDenied);
 *   4. one value: header and parameter agree, the parameter is not repeated, and it is an
 *      RFC 3339 time with an offset (400 InvalidArgument);
 *   5. not with `versionId` (400 InvalidArgument: a version is the same at every time);
 *   6. inside the bucket's readable range — after its creation, within its window, not in
 *      the future (the store: 400 InvalidArgument naming the window and the range).
 * Every response to such a request (errors included) carries `x-strata-as-of` with the
 * time served, in UTC with milliseconds.
 */
import type { RequestContext } from './context.js';
import type { Endpoint, Operation } from './router/endpoint.js';
import { S3Error } from './errors.js';
import { keyAllows, keyOf } from './authz/grants.js';
import { parseQueryPairs, splitTarget } from '../sigv4/raw-target.js';
import { formatTime, MAX_TIME_CHARS, parseTimeText } from '../store/time-text.js';

/** The request header, query parameter and response header. */
export const AS_OF = 'x-strata-as-of';

/** The operations that read as of a time. */
const AS_OF_OPS: ReadonlySet<Operation> = new Set<Operation>(['GetObject', 'HeadObject', 'ListObjects', 'ListObjectsV2']);

/** The values of every query parameter named `x-strata-as-of` in any letter case. */
function queryValues(rawTarget: string): string[] {
  const { rawQuery } = splitTarget(rawTarget);
  // Most requests name no such parameter: skip parsing unless the name (or an escape) may be there.
  if (!/strata|%/i.test(rawQuery)) return [];
  let pairs: [string, string][];
  try {
    pairs = parseQueryPairs(rawQuery);
  } catch {
    throw new S3Error('InvalidURI');
  }
  return pairs.filter(([k]) => k.toLowerCase() === AS_OF).map(([, v]) => v);
}

const invalid = (value: string, why: string) =>
  new S3Error('InvalidArgument', `${AS_OF} must be one RFC 3339 time such as 2026-03-01T12:00:00Z: ${why}`, {
    ArgumentName: AS_OF,
    ArgumentValue: value.slice(0, MAX_TIME_CHARS),
  });

/**
 * The time (ms) request `r`, routed to `e` and authorized for it, asks to read as of, or
 * undefined when it asks for none. Checks rules 1-5 of the module note and, when a time is
 * asked, adds the `x-strata-as-of` response header to every answer (r.baseHeaders). Throws
 * S3Error 'InvalidRequest', 'AccessDenied', 'InvalidArgument', 'InvalidURI'. Reads the key
 * registry; changes nothing else.
 */
export function requestAsOf(r: RequestContext, e: Endpoint): number | undefined {
  const fromQuery = queryValues(r.rawTarget);
  const fromHeader = r.headers[AS_OF];
  if (fromQuery.length === 0 && fromHeader === undefined) return undefined;
  if (!AS_OF_OPS.has(e.op)) {
    throw new S3Error('InvalidRequest', `${AS_OF} applies to GetObject, HeadObject and ListObjects(V2) only, not to ${e.op}: the request was not carried out.`);
  }
  const auth = r.auth;
  if (auth?.signatureVersion === 2) throw new S3Error('InvalidRequest', `Signature Version 2 does not sign ${AS_OF}: sign the request with SigV4.`);
  if (fromHeader !== undefined && auth?.signatureVersion === 4 && !auth.signedHeaders?.includes(AS_OF)) {
    throw new S3Error('InvalidRequest', `${AS_OF} must be signed: list it in SignedHeaders, or send it as a query parameter.`);
  }
  const key = keyOf(r.deps, auth?.accessKeyId ?? null);
  const bucket = 'bucket' in e ? e.bucket : undefined;
  if (!key || bucket === undefined || !keyAllows(r.deps, key, 'read', bucket)) {
    throw new S3Error('AccessDenied', `Reading ${bucket ?? 'a bucket'} as of a past time needs read on all of it: its owner, an admin key, or a read grant.`);
  }
  const values = fromHeader === undefined ? fromQuery : [...fromQuery, fromHeader];
  const value = values[0]!;
  if (values.some((v) => v !== value)) throw invalid(value, 'it is given more than once with different values');
  if ('versionId' in e && e.versionId !== undefined) {
    throw new S3Error('InvalidArgument', `A read names either a versionId or a time (${AS_OF}), not both.`, { ArgumentName: 'versionId', ArgumentValue: e.versionId });
  }
  const at = parseTimeText(value.trim());
  if (typeof at === 'string') throw invalid(value, at);
  r.baseHeaders[AS_OF] = formatTime(at);
  return at;
}
