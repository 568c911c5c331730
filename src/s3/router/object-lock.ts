/**
 * @module Routes of the Object Lock sub-resources: `?object-lock` on a bucket
 * (Get/PutObjectLockConfiguration), `?retention` and `?legal-hold` on an object, optionally
 * with `versionId` (Get/PutObjectRetention, Get/PutObjectLegalHold). Other methods on them
 * are MethodNotAllowed (S3 has no Delete for any of them: a retention is removed by a Put of
 * an empty one, a legal hold is turned OFF).
 */
import { S3Error } from '../errors.js';
import type { Endpoint } from './endpoint.js';
import { versionIdParam, type QueryParams } from './params.js';

function methodNotAllowed(method: string, resourceType: 'BUCKET' | 'OBJECT'): S3Error {
  return new S3Error('MethodNotAllowed', undefined, { Method: method, ResourceType: resourceType });
}

/** The bucket's Object Lock endpoint for `q`, or undefined when the request names none. */
export function routeBucketLock(method: string, bucket: string, q: QueryParams): Endpoint | undefined {
  if (!q.has('object-lock')) return undefined;
  if (method === 'GET') return { op: 'GetObjectLockConfiguration', bucket };
  if (method === 'PUT') return { op: 'PutObjectLockConfiguration', bucket };
  throw methodNotAllowed(method, 'BUCKET');
}

/** The object's Object Lock endpoint for `q`, or undefined when the request names none. */
export function routeObjectLock(method: string, bucket: string, key: string, q: QueryParams): Endpoint | undefined {
  const retention = q.has('retention');
  if (!retention && !q.has('legal-hold')) return undefined;
  if (method !== 'GET' && method !== 'PUT') throw methodNotAllowed(method, 'OBJECT');
  const versionId = versionIdParam(q);
  const v = versionId === undefined ? { bucket, key } : { bucket, key, versionId };
  if (retention) return { op: method === 'GET' ? 'GetObjectRetention' : 'PutObjectRetention', ...v };
  return { op: method === 'GET' ? 'GetObjectLegalHold' : 'PutObjectLegalHold', ...v };
}
