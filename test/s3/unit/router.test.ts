/**
 * The router: a table of (method, raw target, headers, host) → Endpoint covering every
 * operation, the requests real clients send (s3-clients.md), tricky keys and
 * virtual-hosted style; then every NotImplemented sub-resource, MethodNotAllowed and the
 * validation errors.
 */
import { describe, expect, it } from 'vitest';
import { route, type Endpoint } from '../../../src/s3/router.js';
import {
  BUCKET_NOT_IMPLEMENTED,
  OBJECT_NOT_IMPLEMENTED,
} from '../../../src/s3/router/subresources.js';
import type { S3ErrorCode } from '../../../src/s3/errors.js';
import { expectS3Error } from './helpers.js';

const BASE = { baseDomain: 's3.example.test' };

function r(
  method: string,
  rawTarget: string,
  headers: Record<string, string> = {},
  host = '127.0.0.1:9000'
) {
  return route({ method, rawTarget, headers: { host, ...headers } }, BASE);
}

const V1 = { prefix: '', marker: '', maxKeys: 1000 };
const V2 = { prefix: '', maxKeys: 1000, fetchOwner: false };
const K = { bucket: 'bkt', key: 'k' };
const COPY = { 'x-amz-copy-source': '/src/dir/a%20b+c?versionId=null' };
const SOURCE = { bucket: 'src', key: 'dir/a b+c', versionId: 'null' };

type Row = [
  method: string,
  target: string,
  expected: Endpoint,
  headers?: Record<string, string>,
  host?: string,
];

const TABLE: Row[] = [
  ['GET', '/', { op: 'ListBuckets', params: {} }],
  [
    'GET',
    '/?prefix=a&max-buckets=5&continuation-token=t',
    { op: 'ListBuckets', params: { prefix: 'a', maxBuckets: 5, continuationToken: 't' } },
  ],
  ['OPTIONS', '/', { op: 'CorsPreflight' }],
  ['PUT', '/bkt', { op: 'CreateBucket', bucket: 'bkt' }],
  ['PUT', '/bkt/', { op: 'CreateBucket', bucket: 'bkt' }],
  ['DELETE', '/bkt', { op: 'DeleteBucket', bucket: 'bkt' }],
  ['HEAD', '/bkt', { op: 'HeadBucket', bucket: 'bkt' }],
  ['GET', '/bkt/?location=', { op: 'GetBucketLocation', bucket: 'bkt' }],
  ['GET', '/bkt?location', { op: 'GetBucketLocation', bucket: 'bkt' }],
  ['GET', '/bkt?versioning', { op: 'GetBucketVersioning', bucket: 'bkt' }],
  ['GET', '/bkt/?versioning=', { op: 'GetBucketVersioning', bucket: 'bkt' }],
  ['GET', '/bkt', { op: 'ListObjects', bucket: 'bkt', params: V1 }],
  // rclone (provider Other) and s3cmd list with V1
  [
    'GET',
    '/bkt?delimiter=%2F&max-keys=1000&prefix=dir%2F',
    { op: 'ListObjects', bucket: 'bkt', params: { ...V1, prefix: 'dir/', delimiter: '/' } },
  ],
  [
    'GET',
    '/bkt?marker=a+b&max-keys=0&encoding-type=url',
    {
      op: 'ListObjects',
      bucket: 'bkt',
      params: { ...V1, marker: 'a b', maxKeys: 0, encodingType: 'url' },
    },
  ],
  // restic and aws-cli list with V2
  [
    'GET',
    '/bkt/?delimiter=%2F&encoding-type=url&fetch-owner=true&list-type=2&prefix=repo%2Fkeys%2F',
    {
      op: 'ListObjectsV2',
      bucket: 'bkt',
      params: {
        ...V2,
        prefix: 'repo/keys/',
        delimiter: '/',
        encodingType: 'url',
        fetchOwner: true,
      },
    },
  ],
  [
    'GET',
    '/bkt?list-type=2&delimiter=&prefix=data%2F',
    { op: 'ListObjectsV2', bucket: 'bkt', params: { ...V2, prefix: 'data/' } },
  ],
  ['GET', '/bkt?list-type=2&max-keys=5000', { op: 'ListObjectsV2', bucket: 'bkt', params: V2 }],
  [
    'GET',
    '/bkt?list-type=2&start-after=a+b&continuation-token=x%2By%3D',
    {
      op: 'ListObjectsV2',
      bucket: 'bkt',
      params: { ...V2, startAfter: 'a b', continuationToken: 'x+y=' },
    },
  ],
  [
    'GET',
    '/bkt?uploads&prefix=p&key-marker=k&upload-id-marker=u&max-uploads=7&delimiter=/',
    {
      op: 'ListMultipartUploads',
      bucket: 'bkt',
      params: { prefix: 'p', delimiter: '/', keyMarker: 'k', uploadIdMarker: 'u', maxUploads: 7 },
    },
  ],
  ['POST', '/bkt/?delete=', { op: 'DeleteObjects', bucket: 'bkt' }],
  ['POST', '/bkt?delete', { op: 'DeleteObjects', bucket: 'bkt' }],
  ['GET', '/bkt?cors', { op: 'GetBucketCors', bucket: 'bkt' }],
  ['PUT', '/bkt?cors=', { op: 'PutBucketCors', bucket: 'bkt' }],
  ['DELETE', '/bkt?cors', { op: 'DeleteBucketCors', bucket: 'bkt' }],
  ['OPTIONS', '/bkt', { op: 'CorsPreflight', bucket: 'bkt' }],
  ['OPTIONS', '/bkt/dir/key', { op: 'CorsPreflight', bucket: 'bkt', key: 'dir/key' }],
  // keys: percent-decoded only, nothing normalised
  [
    'PUT',
    '/bkt/dir/hello%20world%2B%C3%BC.txt?x-id=PutObject',
    { op: 'PutObject', bucket: 'bkt', key: 'dir/hello world+ü.txt' },
  ],
  [
    'PUT',
    '/bkt/dir/a%20b%2Bc%21%2A%27%28%29~%24%26%3D%2C%3B%3A%40%5B%5D%C3%BC%25.txt',
    { op: 'PutObject', bucket: 'bkt', key: "dir/a b+c!*'()~$&=,;:@[]ü%.txt" },
  ],
  ['PUT', '/bkt/dir/../x?x-id=PutObject', { op: 'PutObject', bucket: 'bkt', key: 'dir/../x' }],
  ['PUT', '/bkt/./k', { op: 'PutObject', bucket: 'bkt', key: './k' }],
  ['PUT', '/bkt/a//b/', { op: 'PutObject', bucket: 'bkt', key: 'a//b/' }],
  ['PUT', '/bkt//lead', { op: 'PutObject', bucket: 'bkt', key: '/lead' }],
  ['PUT', '/bkt/a%2Fb', { op: 'PutObject', bucket: 'bkt', key: 'a/b' }],
  ['PUT', '/bkt/a+b', { op: 'PutObject', bucket: 'bkt', key: 'a+b' }],
  ['PUT', '/bkt/%5C%25%3F%23', { op: 'PutObject', bucket: 'bkt', key: '\\%?#' }],
  ['PUT', '/bkt/ctl%1F%00', { op: 'PutObject', bucket: 'bkt', key: 'ctl\u001f\u0000' }],
  ['GET', '/bkt/k', { op: 'GetObject', ...K, overrides: {} }],
  [
    'GET',
    '/bkt/k?partNumber=2&x-id=GetObject',
    { op: 'GetObject', ...K, partNumber: 2, overrides: {} },
  ],
  [
    'GET',
    '/bkt/k?response-content-type=text%2Fplain&response-content-disposition=attachment%3B%20filename%3D%22x%20y.txt%22' +
      '&response-cache-control=no-cache&response-expires=0&response-content-language=fr&response-content-encoding=gzip',
    {
      op: 'GetObject',
      ...K,
      overrides: {
        'content-type': 'text/plain',
        'content-disposition': 'attachment; filename="x y.txt"',
        'cache-control': 'no-cache',
        expires: '0',
        'content-language': 'fr',
        'content-encoding': 'gzip',
      },
    },
  ],
  ['GET', '/bkt/k?versionId=null', { op: 'GetObject', ...K, versionId: 'null', overrides: {} }],
  ['HEAD', '/bkt/k?partNumber=1', { op: 'HeadObject', ...K, partNumber: 1, overrides: {} }],
  ['DELETE', '/bkt/k', { op: 'DeleteObject', ...K }],
  ['DELETE', '/bkt/k?versionId=null', { op: 'DeleteObject', ...K, versionId: 'null' }],
  ['PUT', '/bkt/k', { op: 'CopyObject', ...K, source: SOURCE }, COPY],
  [
    'PUT',
    '/bkt/k',
    { op: 'CopyObject', ...K, source: { bucket: 'src', key: 'x' } },
    { 'x-amz-copy-source': 'src/x' },
  ],
  ['POST', '/bkt/k?uploads', { op: 'CreateMultipartUpload', ...K }],
  ['POST', '/bkt/k?uploads=', { op: 'CreateMultipartUpload', ...K }],
  [
    'PUT',
    '/bkt/k?partNumber=1&uploadId=abc&x-id=UploadPart',
    { op: 'UploadPart', ...K, uploadId: 'abc', partNumber: 1 },
  ],
  [
    'PUT',
    '/bkt/k?partNumber=10000&uploadId=abc',
    {
      op: 'UploadPartCopy',
      ...K,
      uploadId: 'abc',
      partNumber: 10000,
      source: SOURCE,
      sourceRange: { first: 0, last: 99 },
    },
    { ...COPY, 'x-amz-copy-source-range': 'bytes=0-99' },
  ],
  [
    'PUT',
    '/bkt/k?partNumber=2&uploadId=abc',
    { op: 'UploadPartCopy', ...K, uploadId: 'abc', partNumber: 2, source: SOURCE },
    COPY,
  ],
  ['POST', '/bkt/k?uploadId=abc', { op: 'CompleteMultipartUpload', ...K, uploadId: 'abc' }],
  ['DELETE', '/bkt/k?uploadId=abc', { op: 'AbortMultipartUpload', ...K, uploadId: 'abc' }],
  [
    'GET',
    '/bkt/k?uploadId=abc',
    { op: 'ListParts', ...K, uploadId: 'abc', params: { maxParts: 1000, partNumberMarker: 0 } },
  ],
  [
    'GET',
    '/bkt/k?uploadId=abc&max-parts=2&part-number-marker=3',
    { op: 'ListParts', ...K, uploadId: 'abc', params: { maxParts: 2, partNumberMarker: 3 } },
  ],
  ['GET', '/bkt/k?tagging', { op: 'GetObjectTagging', ...K }],
  ['PUT', '/bkt/k?tagging=', { op: 'PutObjectTagging', ...K }],
  ['DELETE', '/bkt/k?tagging', { op: 'DeleteObjectTagging', ...K }],
  // access control
  ['GET', '/bkt?acl', { op: 'GetBucketAcl', bucket: 'bkt' }],
  ['PUT', '/bkt?acl=', { op: 'PutBucketAcl', bucket: 'bkt' }],
  ['GET', '/bkt/k?acl', { op: 'GetObjectAcl', ...K }],
  ['PUT', '/bkt/k?acl', { op: 'PutObjectAcl', ...K }],
  ['GET', '/bkt/k?acl&versionId=null', { op: 'GetObjectAcl', ...K, versionId: 'null' }],
  ['GET', '/bkt?policy', { op: 'GetBucketPolicy', bucket: 'bkt' }],
  ['PUT', '/bkt?policy', { op: 'PutBucketPolicy', bucket: 'bkt' }],
  ['DELETE', '/bkt?policy', { op: 'DeleteBucketPolicy', bucket: 'bkt' }],
  ['GET', '/bkt?policyStatus', { op: 'GetBucketPolicyStatus', bucket: 'bkt' }],
  ['GET', '/bkt?publicAccessBlock', { op: 'GetPublicAccessBlock', bucket: 'bkt' }],
  ['PUT', '/bkt?publicAccessBlock', { op: 'PutPublicAccessBlock', bucket: 'bkt' }],
  ['DELETE', '/bkt?publicAccessBlock', { op: 'DeletePublicAccessBlock', bucket: 'bkt' }],
  ['GET', '/bkt?ownershipControls', { op: 'GetBucketOwnershipControls', bucket: 'bkt' }],
  ['PUT', '/bkt?ownershipControls', { op: 'PutBucketOwnershipControls', bucket: 'bkt' }],
  ['DELETE', '/bkt?ownershipControls', { op: 'DeleteBucketOwnershipControls', bucket: 'bkt' }],
  ['GET', '/?acl', { op: 'GetBucketAcl', bucket: 'mybucket' }, {}, 'mybucket.s3.example.test'],
  // Object Lock and grant headers are refused by the handlers, after authorization.
  ['PUT', '/bkt', { op: 'CreateBucket', bucket: 'bkt' }, { 'x-amz-bucket-object-lock-enabled': 'true' }],
  // absolute-form and asterisk-form targets
  ['GET', 'http://127.0.0.1:9000/bkt/k', { op: 'GetObject', ...K, overrides: {} }],
  ['OPTIONS', '*', { op: 'CorsPreflight' }],
  // virtual-hosted style under the base domain; other hosts are path-style
  [
    'GET',
    '/?list-type=2',
    { op: 'ListObjectsV2', bucket: 'mybucket', params: V2 },
    {},
    'mybucket.s3.example.test:9011',
  ],
  [
    'GET',
    '/dir/key',
    { op: 'GetObject', bucket: 'mybucket', key: 'dir/key', overrides: {} },
    {},
    'MyBucket.S3.Example.Test',
  ],
  ['PUT', '/', { op: 'CreateBucket', bucket: 'my.bucket' }, {}, 'my.bucket.s3.example.test'],
  [
    'GET',
    '//k',
    { op: 'GetObject', bucket: 'mybucket', key: '/k', overrides: {} },
    {},
    'mybucket.s3.example.test',
  ],
  ['GET', '/', { op: 'ListBuckets', params: {} }, {}, 's3.example.test:9011'],
  ['GET', '/bkt/k', { op: 'GetObject', ...K, overrides: {} }, {}, 's3.example.test'],
  ['GET', '/bkt/k', { op: 'GetObject', ...K, overrides: {} }, {}, 'other.host.test'],
];

describe('routes', () => {
  for (const [method, target, expected, headers, host] of TABLE) {
    it(`${method} ${target}${host ? ` (host ${host})` : ''} → ${expected.op}`, () => {
      expect(r(method, target, headers, host)).toEqual(expected);
    });
  }

  it('without a base domain every request is path-style', () => {
    const e = route({
      method: 'GET',
      rawTarget: '/bkt/k',
      headers: { host: 'mybucket.s3.example.test' },
    });
    expect(e).toEqual({ op: 'GetObject', ...K, overrides: {} });
  });
});

describe('NotImplemented', () => {
  for (const sub of BUCKET_NOT_IMPLEMENTED) {
    it(`bucket ?${sub}`, () => {
      // Reading the versioning status is answered (never versioned); setting it is not.
      const readable = sub === 'versioning';
      for (const method of readable ? ['PUT', 'DELETE'] : ['GET', 'PUT', 'DELETE'])
        expectS3Error(() => r(method, `/bkt?${sub}`), 'NotImplemented');
      if (!readable) expectS3Error(() => r('GET', `/?${sub}=`, {}, 'bkt.s3.example.test'), 'NotImplemented');
    });
  }
  for (const sub of OBJECT_NOT_IMPLEMENTED) {
    it(`object ?${sub}`, () => {
      // GET ?torrent routes to GetObjectTorrent (404 for a missing object, then 501).
      for (const method of sub === 'torrent' ? ['PUT', 'POST', 'DELETE'] : ['GET', 'PUT', 'POST', 'DELETE'])
        expectS3Error(() => r(method, `/bkt/k?${sub}`), 'NotImplemented');
    });
  }
  it('object GET ?torrent is GetObjectTorrent', () => {
    expect(r('GET', '/bkt/dir/k?torrent')).toEqual({ op: 'GetObjectTorrent', bucket: 'bkt', key: 'dir/k' });
  });
  it('object ?attributes: GET is GetObjectAttributes, other methods are not implemented', () => {
    expect(r('GET', '/bkt/dir/k?attributes')).toEqual({ op: 'GetObjectAttributes', bucket: 'bkt', key: 'dir/k' });
    for (const method of ['PUT', 'POST', 'DELETE', 'HEAD'])
      expectS3Error(() => r(method, '/bkt/k?attributes'), 'NotImplemented');
    expectS3Error(() => r('GET', '/bkt/k?attributes&versionId=v1'), 'InvalidArgument');
    expect(r('GET', '/bkt/k?attributes&versionId=00000000000a000001')).toMatchObject({ op: 'GetObjectAttributes', key: 'k' });
  });
  it('POST to a bucket without ?delete is a POST Object form upload', () => {
    expect(r('POST', '/bkt')).toEqual({ op: 'PostObject', bucket: 'bkt' });
    expect(r('POST', '/bkt/')).toEqual({ op: 'PostObject', bucket: 'bkt' });
    expect(r('POST', '/bkt?delete')).toEqual({ op: 'DeleteObjects', bucket: 'bkt' });
  });
  it('a malformed versionId is InvalidArgument (400), a well-formed one is routed', () => {
    for (const method of ['GET', 'HEAD', 'DELETE'])
      expectS3Error(() => r(method, '/bkt/k?versionId=3HL4kqtJlcpXroDTDmJ'), 'InvalidArgument');
    expectS3Error(() => r('PUT', '/bkt/k?tagging&versionId=v1'), 'InvalidArgument');
    expectS3Error(() => r('PUT', '/bkt/k', { 'x-amz-copy-source': 'src/k?versionId=v1' }), 'InvalidArgument');
    expect(r('GET', '/bkt/k?versionId=00000000000a000001')).toMatchObject({ op: 'GetObject', versionId: '00000000000a000001' });
  });
});

describe('Object Lock sub-resources', () => {
  it('bucket ?object-lock: GET and PUT; other methods are MethodNotAllowed (never a form upload)', () => {
    expect(r('GET', '/bkt?object-lock')).toEqual({ op: 'GetObjectLockConfiguration', bucket: 'bkt' });
    expect(r('PUT', '/bkt?object-lock=')).toEqual({ op: 'PutObjectLockConfiguration', bucket: 'bkt' });
    expect(r('GET', '/?object-lock', {}, 'bkt.s3.example.test')).toEqual({ op: 'GetObjectLockConfiguration', bucket: 'bkt' });
    for (const method of ['DELETE', 'POST']) expectS3Error(() => r(method, '/bkt?object-lock'), 'MethodNotAllowed');
  });
  it('object ?retention and ?legal-hold: GET and PUT, with or without versionId', () => {
    expect(r('GET', '/bkt/dir/k?retention')).toEqual({ op: 'GetObjectRetention', bucket: 'bkt', key: 'dir/k' });
    expect(r('PUT', '/bkt/k?retention&versionId=00000000000a000001')).toEqual({ op: 'PutObjectRetention', ...K, versionId: '00000000000a000001' });
    expect(r('GET', '/bkt/k?legal-hold=&versionId=null')).toEqual({ op: 'GetObjectLegalHold', ...K, versionId: 'null' });
    expect(r('PUT', '/bkt/k?legal-hold')).toEqual({ op: 'PutObjectLegalHold', ...K });
    for (const method of ['DELETE', 'POST', 'HEAD']) {
      expectS3Error(() => r(method, '/bkt/k?retention'), 'MethodNotAllowed');
      expectS3Error(() => r(method, '/bkt/k?legal-hold'), 'MethodNotAllowed');
    }
    expectS3Error(() => r('PUT', '/bkt/k?retention&versionId='), 'InvalidArgument');
    expectS3Error(() => r('GET', '/bkt/k?legal-hold&versionId=v1'), 'InvalidArgument');
  });
});

describe('MethodNotAllowed', () => {
  for (const method of ['PATCH', 'TRACE', 'CONNECT', 'PROPFIND', 'get']) {
    it(method, () => {
      expectS3Error(() => r(method, '/bkt/k'), 'MethodNotAllowed');
    });
  }
  it('methods a resource does not support', () => {
    for (const method of ['PUT', 'POST', 'DELETE', 'HEAD'])
      expectS3Error(() => r(method, '/'), 'MethodNotAllowed');
    expectS3Error(() => r('POST', '/bkt/k'), 'MethodNotAllowed');
    expectS3Error(() => r('DELETE', '/bkt?acl'), 'MethodNotAllowed');
    expectS3Error(() => r('PUT', '/bkt?policyStatus'), 'MethodNotAllowed');
    expectS3Error(() => r('DELETE', '/bkt/k?acl'), 'MethodNotAllowed');
    expectS3Error(() => r('POST', '/bkt/k?acl'), 'MethodNotAllowed');
    expectS3Error(() => r('PUT', '/bkt/k?acl&versionId=v1'), 'InvalidArgument');
  });
});

describe('validation errors', () => {
  const cases: [string, string, string, S3ErrorCode, Record<string, string>?][] = [
    ['bucket too short', 'GET', '/ab', 'InvalidBucketName'],
    ['bucket too long', 'GET', `/${'a'.repeat(64)}`, 'InvalidBucketName'],
    ['upper-case bucket', 'GET', '/MyBucket', 'InvalidBucketName'],
    ['underscore bucket', 'GET', '/my_bucket/k', 'InvalidBucketName'],
    ['bucket starting with -', 'GET', '/-abc', 'InvalidBucketName'],
    ['bucket ending with .', 'GET', '/abc./k', 'InvalidBucketName'],
    ['bucket with ..', 'GET', '/a..b', 'InvalidBucketName'],
    ['IP bucket', 'GET', '/192.168.1.1/k', 'InvalidBucketName'],
    ['xn-- bucket', 'GET', '/xn--abc', 'InvalidBucketName'],
    ['-s3alias bucket', 'GET', '/abc-s3alias', 'InvalidBucketName'],
    ['empty bucket with a key', 'GET', '//k', 'InvalidBucketName'],
    ['escaped slash in bucket', 'GET', '/bk%2Ft/k', 'InvalidBucketName'],
    ['key over 1024 bytes', 'GET', `/bkt/${'k'.repeat(1025)}`, 'KeyTooLongError'],
    ['multi-byte key over 1024 bytes', 'GET', `/bkt/${'%C3%BC'.repeat(513)}`, 'KeyTooLongError'],
    ['malformed escape', 'GET', '/bkt/%zz', 'InvalidURI'],
    ['truncated escape', 'GET', '/bkt/a%2', 'InvalidURI'],
    ['invalid UTF-8', 'GET', '/bkt/%C3', 'InvalidURI'],
    ['encoded surrogate', 'GET', '/bkt/%ED%A0%80', 'InvalidURI'],
    ['invalid UTF-8 in the query', 'GET', '/bkt?prefix=%E0', 'InvalidURI'],
    ['non-numeric max-keys', 'GET', '/bkt?max-keys=abc', 'InvalidArgument'],
    ['negative max-keys', 'GET', '/bkt?list-type=2&max-keys=-1', 'InvalidArgument'],
    ['max-keys beyond int32', 'GET', '/bkt?max-keys=2147483648', 'InvalidArgument'],
    ['bad encoding-type', 'GET', '/bkt?encoding-type=base64', 'InvalidArgument'],
    ['bad list-type', 'GET', '/bkt?list-type=3', 'InvalidArgument'],
    ['bad max-uploads', 'GET', '/bkt?uploads&max-uploads=x', 'InvalidArgument'],
    ['bad max-parts', 'GET', '/bkt/k?uploadId=u&max-parts=1.5', 'InvalidArgument'],
    ['max-buckets 0', 'GET', '/?max-buckets=0', 'InvalidArgument'],
    ['partNumber 0', 'GET', '/bkt/k?partNumber=0', 'InvalidArgument'],
    ['partNumber 10001', 'PUT', '/bkt/k?partNumber=10001&uploadId=u', 'InvalidArgument'],
    ['non-numeric partNumber', 'GET', '/bkt/k?partNumber=one', 'InvalidArgument'],
    ['UploadPart without partNumber', 'PUT', '/bkt/k?uploadId=u', 'InvalidArgument'],
    ['empty uploadId', 'PUT', '/bkt/k?partNumber=1&uploadId=', 'NoSuchUpload'],
    [
      'partNumber with Range',
      'GET',
      '/bkt/k?partNumber=1',
      'InvalidRequest',
      { range: 'bytes=0-1' },
    ],
    ['copy source without key', 'PUT', '/bkt/k', 'InvalidArgument', { 'x-amz-copy-source': 'src' }],
    [
      'copy source with empty key',
      'PUT',
      '/bkt/k',
      'InvalidArgument',
      { 'x-amz-copy-source': '/src/' },
    ],
    [
      'copy source with a bad bucket',
      'PUT',
      '/bkt/k',
      'InvalidBucketName',
      { 'x-amz-copy-source': 'SRC/k' },
    ],
    [
      'copy source with a bad escape',
      'PUT',
      '/bkt/k',
      'InvalidArgument',
      { 'x-amz-copy-source': 'src/%zz' },
    ],
    [
      'copy source key too long',
      'PUT',
      '/bkt/k',
      'KeyTooLongError',
      { 'x-amz-copy-source': `src/${'k'.repeat(1025)}` },
    ],
    [
      'copy source ARN',
      'PUT',
      '/bkt/k',
      'NotImplemented',
      { 'x-amz-copy-source': 'arn:aws:s3:us-east-1:1:accesspoint/ap/object/k' },
    ],
  ];
  for (const [what, method, target, code, headers] of cases) {
    it(`${what} → ${code}`, () => {
      expectS3Error(() => r(method, target, headers), code);
    });
  }

  it('bucket names at the limits are accepted', () => {
    for (const name of ['abc', 'a'.repeat(63), 'my.bucket-1', '1bucket', 'a-b.c-d', '192.168.1.a'])
      expect(r('HEAD', `/${name}`)).toEqual({ op: 'HeadBucket', bucket: name });
    expect(r('GET', `/bkt/${'ü'.repeat(512)}`)).toMatchObject({
      op: 'GetObject',
      key: 'ü'.repeat(512),
    });
  });

  it('x-amz-copy-source-range must be bytes=first-last', () => {
    for (const range of ['bytes=5-1', 'bytes=0-', 'bytes=a-b', '0-5', 'bytes=-5'])
      expectS3Error(
        () =>
          r('PUT', '/bkt/k?partNumber=1&uploadId=u', { ...COPY, 'x-amz-copy-source-range': range }),
        'InvalidArgument'
      );
  });
});
