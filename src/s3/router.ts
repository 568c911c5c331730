/**
 * @module The S3 router: request → {@link Endpoint}.
 *
 * Routing reads the raw request-target (never a WHATWG-normalised path): the key is the
 * percent-decoded remainder of the path, `+` kept, `.`/`..`/`//` kept, `%2F` a `/`.
 * Path-style (`/bucket/key`) and virtual-hosted-style (`bucket.<baseDomain>/key`) are both
 * understood. Query parameters are validated here so handlers get typed values.
 *
 * Not implemented sub-resources answer `NotImplemented`, unknown methods `MethodNotAllowed`.
 */
import { parseQueryPairs, percentDecode, splitTarget } from '../sigv4/raw-target.js';
import { S3Error } from './errors.js';
import { validateBucketName } from './router/bucket-name.js';
import { parseCopySource, parseCopySourceRange } from './router/copy-source.js';
import type { Endpoint } from './router/endpoint.js';
import { validateKey } from './router/key.js';
import {
  booleanParam,
  countParam,
  delimiterParam,
  encodingTypeParam,
  pageSizeParam,
  partNumberParam,
  QueryParams,
  versionIdParam,
  responseOverrides,
  uploadIdParam,
} from './router/params.js';
import { BUCKET_NOT_IMPLEMENTED, firstIn, OBJECT_NOT_IMPLEMENTED } from './router/subresources.js';
import { bucketFromHost } from './router/virtual-host.js';
import { routeBucketLock, routeObjectLock } from './router/object-lock.js';

export type * from './router/endpoint.js';
export { bucketNameProblem, validateBucketName } from './router/bucket-name.js';
export { bucketFromHost } from './router/virtual-host.js';

export interface RouteRequest {
  method: string;
  /** The exact request-target as received (`c.env.incoming.url` under @hono/node-server). */
  rawTarget: string;
  /** Host (with port) when not taken from `headers.host`. */
  host?: string;
  /** Lower-case names. */
  headers: Readonly<Record<string, string | undefined>>;
}

export interface RouteOptions {
  /** Enables virtual-hosted-style requests: `<bucket>.<baseDomain>[:port]`. */
  baseDomain?: string;
}

/** Most buckets listed per ListBuckets page (S3's `max-buckets` range is 1..10000). */
const MAX_BUCKETS_PER_PAGE = 10_000;

function decode(raw: string): string {
  try {
    return percentDecode(raw);
  } catch {
    throw new S3Error('InvalidURI');
  }
}

function notImplemented(subresource: string, level: 'bucket' | 'object'): S3Error {
  return new S3Error(
    'NotImplemented',
    `The ${level} sub-resource "${subresource}" is not implemented`
  );
}

function methodNotAllowed(method: string, resourceType: 'BUCKET' | 'OBJECT'): S3Error {
  return new S3Error('MethodNotAllowed', undefined, { Method: method, ResourceType: resourceType });
}

/** Access-control sub-resources of a bucket (acl, policy, policyStatus, ownershipControls, publicAccessBlock). */
function routeBucketAccess(method: string, bucket: string, q: QueryParams): Endpoint | undefined {
  if (q.has('acl')) {
    if (method === 'GET') return { op: 'GetBucketAcl', bucket };
    if (method === 'PUT') return { op: 'PutBucketAcl', bucket };
    throw methodNotAllowed(method, 'BUCKET');
  }
  if (q.has('policyStatus')) {
    if (method === 'GET') return { op: 'GetBucketPolicyStatus', bucket };
    throw methodNotAllowed(method, 'BUCKET');
  }
  if (q.has('policy')) {
    if (method === 'GET') return { op: 'GetBucketPolicy', bucket };
    if (method === 'PUT') return { op: 'PutBucketPolicy', bucket };
    return { op: 'DeleteBucketPolicy', bucket };
  }
  if (q.has('ownershipControls')) {
    if (method === 'GET') return { op: 'GetBucketOwnershipControls', bucket };
    if (method === 'PUT') return { op: 'PutBucketOwnershipControls', bucket };
    return { op: 'DeleteBucketOwnershipControls', bucket };
  }
  if (q.has('publicAccessBlock')) {
    if (method === 'GET') return { op: 'GetPublicAccessBlock', bucket };
    if (method === 'PUT') return { op: 'PutPublicAccessBlock', bucket };
    return { op: 'DeletePublicAccessBlock', bucket };
  }
  return undefined;
}

/**
 * Routes a request. Pure. Throws S3Error: `MethodNotAllowed` (unknown method, or a method
 * the resource does not support), `NotImplemented` (recognised but unsupported
 * sub-resources, versionId), `InvalidURI` (bad escapes or non-UTF-8
 * path/query), `InvalidBucketName`, `KeyTooLongError`, `InvalidArgument` and
 * `InvalidRequest` (bad parameter values), `NoSuchUpload` (empty uploadId).
 */
export function route(req: RouteRequest, options: RouteOptions = {}): Endpoint {
  const { rawPath, rawQuery } = splitTarget(req.rawTarget);
  let q: QueryParams;
  try {
    q = new QueryParams(parseQueryPairs(rawQuery));
  } catch {
    throw new S3Error('InvalidURI');
  }
  const method = req.method;
  if (!['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'OPTIONS'].includes(method))
    throw new S3Error('MethodNotAllowed', undefined, { Method: method, ResourceType: 'OBJECT' });

  const vhost = bucketFromHost(req.host ?? req.headers.host, options.baseDomain);
  let bucket: string | undefined;
  let rawKey: string;
  if (vhost !== undefined) {
    bucket = vhost;
    rawKey = rawPath.slice(1);
  } else {
    const rest = rawPath.slice(1);
    const slash = rest.indexOf('/');
    const rawBucket = slash < 0 ? rest : rest.slice(0, slash);
    rawKey = slash < 0 ? '' : rest.slice(slash + 1);
    bucket = rawBucket === '' && rawKey === '' ? undefined : decode(rawBucket);
  }
  if (bucket === undefined) return routeService(method, q);
  validateBucketName(bucket);
  const key = decode(rawKey);
  if (key === '') return routeBucket(method, bucket, q);
  validateKey(key);
  return routeObject(method, bucket, key, q, req.headers);
}

function routeService(method: string, q: QueryParams): Endpoint {
  if (method === 'OPTIONS') return { op: 'CorsPreflight' };
  if (method !== 'GET')
    throw new S3Error('MethodNotAllowed', undefined, { Method: method, ResourceType: 'SERVICE' });
  const endpoint: Extract<Endpoint, { op: 'ListBuckets' }> = { op: 'ListBuckets', params: {} };
  const prefix = q.get('prefix');
  const token = q.get('continuation-token');
  if (prefix !== undefined) endpoint.params.prefix = prefix;
  if (token) endpoint.params.continuationToken = token;
  if (q.has('max-buckets')) {
    const max = countParam(q, 'max-buckets', MAX_BUCKETS_PER_PAGE, MAX_BUCKETS_PER_PAGE);
    if (max < 1)
      throw new S3Error('InvalidArgument', 'max-buckets must be between 1 and 10000', {
        ArgumentName: 'max-buckets',
        ArgumentValue: q.get('max-buckets')!,
      });
    endpoint.params.maxBuckets = max;
  }
  return endpoint;
}

function routeBucket(method: string, bucket: string, q: QueryParams): Endpoint {
  if (method === 'HEAD') return { op: 'HeadBucket', bucket };
  if (method === 'OPTIONS') return { op: 'CorsPreflight', bucket };
  if (method === 'POST') {
    if (q.has('delete')) return { op: 'DeleteObjects', bucket };
    // POST ?metadataTable, ?metadataConfiguration...: never mistaken for a form upload.
    const unsupportedPost = firstIn(BUCKET_NOT_IMPLEMENTED, q.names());
    if (unsupportedPost !== undefined) throw notImplemented(unsupportedPost, 'bucket');
    if (q.has('object-lock') || q.has('lifecycle')) throw methodNotAllowed(method, 'BUCKET');
    // A browser form upload: authenticated by its own form fields (see src/s3/post-object).
    return { op: 'PostObject', bucket };
  }
  if (q.has('cors')) {
    if (method === 'GET') return { op: 'GetBucketCors', bucket };
    if (method === 'PUT') return { op: 'PutBucketCors', bucket };
    return { op: 'DeleteBucketCors', bucket };
  }
  if (q.has('lifecycle')) {
    if (method === 'GET') return { op: 'GetBucketLifecycle', bucket };
    if (method === 'PUT') return { op: 'PutBucketLifecycle', bucket };
    return { op: 'DeleteBucketLifecycle', bucket };
  }
  if (q.has('tagging')) {
    if (method === 'GET') return { op: 'GetBucketTagging', bucket };
    if (method === 'PUT') return { op: 'PutBucketTagging', bucket };
    return { op: 'DeleteBucketTagging', bucket };
  }
  if (q.has('encryption') && method !== 'POST') {
    if (method === 'GET') return { op: 'GetBucketEncryption', bucket };
    if (method === 'PUT') return { op: 'PutBucketEncryption', bucket };
    return { op: 'DeleteBucketEncryption', bucket };
  }
  if (q.has('versioning') && (method === 'GET' || method === 'PUT')) {
    return { op: method === 'GET' ? 'GetBucketVersioning' : 'PutBucketVersioning', bucket };
  }
  const access = routeBucketAccess(method, bucket, q) ?? routeBucketLock(method, bucket, q);
  if (access) return access;
  const unsupported = firstIn(BUCKET_NOT_IMPLEMENTED, q.names());
  if (unsupported !== undefined) throw notImplemented(unsupported, 'bucket');
  if (method === 'PUT') return { op: 'CreateBucket', bucket };
  if (method === 'DELETE') return { op: 'DeleteBucket', bucket };
  // GET
  if (q.has('location')) return { op: 'GetBucketLocation', bucket };
  const encodingType = encodingTypeParam(q);
  const delimiter = delimiterParam(q);
  if (q.has('uploads')) {
    return {
      op: 'ListMultipartUploads',
      bucket,
      params: {
        prefix: q.get('prefix') ?? '',
        ...(delimiter !== undefined && { delimiter }),
        keyMarker: q.get('key-marker') ?? '',
        uploadIdMarker: q.get('upload-id-marker') ?? '',
        maxUploads: pageSizeParam(q, 'max-uploads'),
        ...(encodingType && { encodingType }),
      },
    };
  }
  if (q.has('versions')) {
    return {
      op: 'ListObjectVersions',
      bucket,
      params: {
        prefix: q.get('prefix') ?? '',
        ...(delimiter !== undefined && { delimiter }),
        keyMarker: q.get('key-marker') ?? '',
        versionIdMarker: q.get('version-id-marker') ?? '',
        maxKeys: pageSizeParam(q, 'max-keys'),
        ...(encodingType && { encodingType }),
      },
    };
  }
  const listType = q.get('list-type');
  if (listType === '2') {
    // An empty token lists from the start (and is echoed), as S3 does.
    const token = q.get('continuation-token');
    const startAfter = q.get('start-after');
    return {
      op: 'ListObjectsV2',
      bucket,
      params: {
        prefix: q.get('prefix') ?? '',
        ...(delimiter !== undefined && { delimiter }),
        maxKeys: pageSizeParam(q, 'max-keys'),
        ...(token !== undefined && { continuationToken: token }),
        ...(startAfter !== undefined && startAfter !== '' && { startAfter }),
        fetchOwner: booleanParam(q, 'fetch-owner'),
        ...(encodingType && { encodingType }),
      },
    };
  }
  if (listType !== undefined)
    throw new S3Error('InvalidArgument', 'Invalid List Type specified in Request', {
      ArgumentName: 'list-type',
      ArgumentValue: listType,
    });
  return {
    op: 'ListObjects',
    bucket,
    params: {
      prefix: q.get('prefix') ?? '',
      ...(delimiter !== undefined && { delimiter }),
      marker: q.get('marker') ?? '',
      maxKeys: pageSizeParam(q, 'max-keys'),
      ...(encodingType && { encodingType }),
    },
  };
}

function routeObject(
  method: string,
  bucket: string,
  key: string,
  q: QueryParams,
  headers: Readonly<Record<string, string | undefined>>
): Endpoint {
  if (method === 'OPTIONS') return { op: 'CorsPreflight', bucket, key };
  if (q.has('attributes')) {
    // GetObjectAttributes; no other method has an `attributes` sub-resource.
    if (method !== 'GET') throw notImplemented('attributes', 'object');
    const versionId = versionIdParam(q);
    return { op: 'GetObjectAttributes', bucket, key, ...(versionId !== undefined && { versionId }) };
  }
  if (q.has('torrent') && method === 'GET') {
    // GetObjectTorrent: the object must exist (404 otherwise, as S3 answers); serving
    // BitTorrent files is not implemented (its handler answers 501 for an existing object).
    versionIdParam(q);
    return { op: 'GetObjectTorrent', bucket, key };
  }
  const lock = routeObjectLock(method, bucket, key, q);
  if (lock) return lock;
  const unsupported = firstIn(OBJECT_NOT_IMPLEMENTED, q.names());
  if (unsupported !== undefined) throw notImplemented(unsupported, 'object');
  const versionId = q.has('uploadId') ? undefined : versionIdParam(q);
  // The version an operation names; PUT and POST write new versions and ignore it (as S3).
  const k = { bucket, key, ...(versionId !== undefined && method !== 'PUT' && method !== 'POST' && { versionId }) };
  const kv = { bucket, key, ...(versionId !== undefined && { versionId }) };
  if (q.has('acl')) {
    if (method !== 'GET' && method !== 'PUT') throw methodNotAllowed(method, 'OBJECT');
    return method === 'GET' ? { op: 'GetObjectAcl', ...kv } : { op: 'PutObjectAcl', ...kv };
  }

  switch (method) {
    case 'GET':
    case 'HEAD': {
      if (method === 'GET' && q.has('uploadId')) {
        return {
          op: 'ListParts',
          ...k,
          uploadId: uploadIdParam(q),
          params: {
            maxParts: pageSizeParam(q, 'max-parts'),
            partNumberMarker: countParam(q, 'part-number-marker', 0, Number.MAX_SAFE_INTEGER),
          },
        };
      }
      if (method === 'GET' && q.has('tagging')) return { op: 'GetObjectTagging', ...k };
      const partNumber = partNumberParam(q);
      if (partNumber !== undefined && headers.range !== undefined)
        throw new S3Error(
          'InvalidRequest',
          'Cannot specify both Range header and partNumber query parameter'
        );
      const op = method === 'GET' ? ('GetObject' as const) : ('HeadObject' as const);
      return {
        op,
        ...k,
        ...(partNumber !== undefined && { partNumber }),
        overrides: responseOverrides(q),
      };
    }
    case 'PUT': {
      if (q.has('tagging')) return { op: 'PutObjectTagging', ...kv };
      const copySource = headers['x-amz-copy-source'];
      if (q.has('uploadId') || q.has('partNumber')) {
        const partNumber = partNumberParam(q);
        if (partNumber === undefined)
          throw new S3Error(
            'InvalidArgument',
            'Part number must be an integer between 1 and 10000, inclusive',
            {
              ArgumentName: 'partNumber',
              ArgumentValue: '',
            }
          );
        const u = Object.assign({}, k, { uploadId: uploadIdParam(q), partNumber });
        if (copySource === undefined) return { op: 'UploadPart', ...u };
        const range = headers['x-amz-copy-source-range'];
        return {
          op: 'UploadPartCopy',
          ...u,
          source: parseCopySource(copySource),
          ...(range !== undefined && { sourceRange: parseCopySourceRange(range) }),
        };
      }
      if (copySource !== undefined)
        return { op: 'CopyObject', ...k, source: parseCopySource(copySource) };
      return { op: 'PutObject', ...k };
    }
    case 'DELETE': {
      if (q.has('uploadId'))
        return { op: 'AbortMultipartUpload', ...k, uploadId: uploadIdParam(q) };
      if (q.has('tagging')) return { op: 'DeleteObjectTagging', ...k };
      return { op: 'DeleteObject', ...k };
    }
    default: {
      // POST
      if (q.has('uploads')) return { op: 'CreateMultipartUpload', ...k };
      if (q.has('uploadId'))
        return { op: 'CompleteMultipartUpload', ...k, uploadId: uploadIdParam(q) };
      throw new S3Error('MethodNotAllowed', undefined, { Method: method, ResourceType: 'OBJECT' });
    }
  }
}
