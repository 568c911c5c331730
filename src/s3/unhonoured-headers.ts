/**
 * @module Request headers that guard a write — preconditions and checksum claims — refused
 * on the operations that would not honour them, before anything is read or written.
 *
 * A precondition the server ignores turns a conditional write into an unconditional one (a
 * lost update, a delete of the wrong object), and a checksum the server never compares
 * tells the client its data was verified when it was not. So on every operation that
 * changes state, each such header is either honoured by that operation or answered with
 * `501 NotImplemented`:
 *
 *   If-Match, If-None-Match                PutObject, CompleteMultipartUpload, CopyObject
 *                                          (destination); If-Match on DeleteObject
 *   x-amz-copy-source-if-*                 CopyObject, UploadPartCopy
 *   If-(Un)Modified-Since on a write,      nowhere (S3 defines them for reads only, and the
 *   x-amz-if-match-size / -last-modified-  S3 Express conditions for directory buckets)
 *   time / -initiated-time
 *   x-amz-checksum-<alg> (a value)         the operations that read and verify a body:
 *                                          PutObject, UploadPart, Complete (the object),
 *                                          every XML-body request; never on CopyObject,
 *                                          UploadPartCopy, CreateMultipartUpload, deletes
 *
 * Reads (GET, HEAD, and the GET-like POST of a CORS preflight) are not checked: a read that
 * ignores a condition returns the full answer, which weakens nothing.
 */
import { S3Error } from './errors.js';
import type { Endpoint, Operation } from './router/endpoint.js';
import { CHECKSUM_NAMES } from '../store/records.js';

type Headers = Readonly<Record<string, string | undefined>>;

const COPY_SOURCE_CONDITIONS = [
  'x-amz-copy-source-if-match',
  'x-amz-copy-source-if-none-match',
  'x-amz-copy-source-if-modified-since',
  'x-amz-copy-source-if-unmodified-since',
] as const;

/** Every header that makes a request conditional. */
export const CONDITION_HEADERS: readonly string[] = [
  'if-match',
  'if-none-match',
  'if-modified-since',
  'if-unmodified-since',
  'x-amz-if-match-size',
  'x-amz-if-match-last-modified-time',
  'x-amz-if-match-initiated-time',
  ...COPY_SOURCE_CONDITIONS,
];

/** The conditions each write operation honours; a write not listed honours none. */
const HONOURED_CONDITIONS: Partial<Record<Operation, ReadonlySet<string>>> = {
  PutObject: new Set(['if-match', 'if-none-match']),
  CompleteMultipartUpload: new Set(['if-match', 'if-none-match']),
  CopyObject: new Set(['if-match', 'if-none-match', ...COPY_SOURCE_CONDITIONS]),
  UploadPartCopy: new Set(COPY_SOURCE_CONDITIONS),
  DeleteObject: new Set(['if-match']),
};

/**
 * Writes that never read a request body, so never compare a checksum of one (a claim on
 * them would describe nothing that is checked). Complete compares its x-amz-checksum-*
 * headers with the object's; every other write verifies them against its body.
 */
const NO_BODY_WRITES: ReadonlySet<Operation> = new Set<Operation>([
  'CopyObject',
  'UploadPartCopy',
  'CreateMultipartUpload',
  'AbortMultipartUpload',
  'DeleteObject',
  'DeleteObjectTagging',
  'DeleteBucket',
  'DeleteBucketCors',
  'DeleteBucketTagging',
  'DeleteBucketPolicy',
  'DeleteBucketEncryption',
  'DeleteBucketOwnershipControls',
  'DeletePublicAccessBlock',
]);

const CHECKSUM_VALUE_HEADERS = CHECKSUM_NAMES.map((n) => `x-amz-checksum-${n}`);

/** True for the operations that only read (their method is GET or HEAD, or a preflight). */
function isRead(method: string, e: Endpoint): boolean {
  return method === 'GET' || method === 'HEAD' || e.op === 'CorsPreflight';
}

/**
 * Throws S3Error `NotImplemented` naming the first header of the request that asks `e` (a
 * state-changing operation) for a precondition it does not evaluate, or for a checksum
 * comparison it does not make. Pure apart from reading `h`; call once the request is
 * routed and authorized, before its body is read.
 */
export function refuseUnhonouredHeaders(method: string, e: Endpoint, h: Headers): void {
  if (isRead(method, e)) return;
  const honoured = HONOURED_CONDITIONS[e.op];
  for (const name of CONDITION_HEADERS) {
    if (h[name] === undefined || honoured?.has(name)) continue;
    throw new S3Error('NotImplemented', `The precondition ${name} is not supported by ${e.op}: the request was not carried out.`);
  }
  if (!NO_BODY_WRITES.has(e.op)) return;
  for (const name of CHECKSUM_VALUE_HEADERS) {
    if (h[name] === undefined) continue;
    throw new S3Error('NotImplemented', `${e.op} does not verify ${name} (it carries no body to compare it with): the request was not carried out.`);
  }
}
