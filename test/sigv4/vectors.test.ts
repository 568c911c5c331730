/**
 * SigV4 against the example vectors AWS publishes: the IAM ListUsers GET from the
 * General Reference "Signature Version 4" walkthrough, the S3 "GET object with
 * range" example (Authorization header) and the S3 presigned GET example.
 */
import { describe, expect, it } from 'vitest';
import {
  canonicalHeaders,
  canonicalQuery,
  canonicalRequest,
  canonicalUri,
  credentialScope,
  deriveSigningKey,
  EMPTY_PAYLOAD_SHA256,
  lowerCaseHeaders,
  presignUrl,
  sha256Hex,
  signRequest,
  stringToSign,
  toHex,
} from '../../src/sigv4/index.js';

describe('IAM ListUsers (General Reference example)', () => {
  const credentials = {
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  };
  const date = new Date('2015-08-30T12:36:00Z');
  const request = {
    method: 'GET',
    path: '/',
    query: { Action: 'ListUsers', Version: '2010-05-08' },
    headers: {
      Host: 'iam.amazonaws.com',
      'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8',
    },
  };

  it('builds the documented canonical request, its hash and the signing key', () => {
    const headers = lowerCaseHeaders({ ...request.headers, 'X-Amz-Date': '20150830T123600Z' });
    const { canonical, signedHeaders } = canonicalHeaders(headers, headers.keys());
    const creq = canonicalRequest({
      method: 'GET',
      canonicalUri: canonicalUri('/', { doubleEncode: true }),
      canonicalQuery: canonicalQuery(request.query),
      canonicalHeaders: canonical,
      signedHeaders,
      payloadHash: EMPTY_PAYLOAD_SHA256,
    });
    expect(creq).toBe(
      'GET\n/\nAction=ListUsers&Version=2010-05-08\n' +
        'content-type:application/x-www-form-urlencoded; charset=utf-8\nhost:iam.amazonaws.com\n' +
        'x-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n' +
        EMPTY_PAYLOAD_SHA256
    );
    expect(sha256Hex(creq)).toBe(
      'f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59'
    );
    expect(
      toHex(deriveSigningKey(credentials.secretAccessKey, '20150830', 'us-east-1', 'iam'))
    ).toBe('c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9');
    expect(
      stringToSign(
        '20150830T123600Z',
        credentialScope('20150830T123600Z', 'us-east-1', 'iam'),
        creq
      )
    ).toBe(
      'AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/iam/aws4_request\n' +
        'f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59'
    );
  });

  it('signRequest produces the documented Authorization header', () => {
    const signed = signRequest(request, { credentials, region: 'us-east-1', service: 'iam', date });
    expect(signed.headers['x-amz-date']).toBe('20150830T123600Z');
    expect(signed.headers['x-amz-content-sha256']).toBeUndefined();
    expect(signed.headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, ' +
        'SignedHeaders=content-type;host;x-amz-date, ' +
        'Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7'
    );
  });
});

describe('S3 examples (AmazonS3 API reference, sig-v4-header-based-auth)', () => {
  const credentials = {
    accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  };
  const date = new Date('2013-05-24T00:00:00Z');

  it('GET object with range: canonical request hash and signature', () => {
    const signed = signRequest(
      {
        method: 'GET',
        path: '/test.txt',
        headers: { host: 'examplebucket.s3.amazonaws.com', range: 'bytes=0-9' },
      },
      { credentials, region: 'us-east-1', service: 's3', date }
    );
    expect(signed.canonicalRequest).toBe(
      'GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n' +
        `x-amz-content-sha256:${EMPTY_PAYLOAD_SHA256}\nx-amz-date:20130524T000000Z\n\n` +
        `host;range;x-amz-content-sha256;x-amz-date\n${EMPTY_PAYLOAD_SHA256}`
    );
    expect(sha256Hex(signed.canonicalRequest)).toBe(
      '7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972'
    );
    expect(signed.headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ' +
        'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, ' +
        'Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41'
    );
  });

  it('presigned GET (query-string auth example)', () => {
    const url = presignUrl(
      {
        method: 'GET',
        protocol: 'https:',
        host: 'examplebucket.s3.amazonaws.com',
        path: '/test.txt',
        expiresSeconds: 86400,
      },
      { credentials, region: 'us-east-1', service: 's3', date }
    );
    expect(url).toBe(
      'https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256' +
        '&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request' +
        '&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host' +
        '&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404'
    );
  });

  it('rejects out-of-range presign expiries', () => {
    const req = { method: 'GET', protocol: 'https:', host: 'h', path: '/k' };
    const scope = { credentials, region: 'us-east-1', service: 's3', date };
    expect(() => presignUrl({ ...req, expiresSeconds: 0 }, scope)).toThrow(RangeError);
    expect(() => presignUrl({ ...req, expiresSeconds: 7 * 24 * 3600 + 1 }, scope)).toThrow(
      RangeError
    );
  });
});
