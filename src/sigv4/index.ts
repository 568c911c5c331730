/**
 * @module AWS Signature Version 4: canonicalisation, key derivation and signing.
 *
 * Protocol-pure (no I/O). The client (s3 provider) uses signRequest / presignUrl;
 * the S3 server's auth rebuilds the canonical request from a received request with
 * the same primitives (canonicalUri, canonicalQuery, lowerCaseHeaders,
 * canonicalHeaders, canonicalRequest, stringToSign, computeSignature) and compares
 * with signaturesEqual.
 */
export * from './hash.js';
export * from './encode.js';
export * from './canonical.js';
export * from './signing-key.js';
export * from './sign.js';
