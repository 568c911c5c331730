/**
 * S3's header limits: the header section (header lines plus query string) is measured as
 * on the wire and refused past 8192 bytes with RequestHeaderSectionTooLarge; stored
 * metadata — standard headers, Content-Type and user metadata — can never pass the same
 * bound (a POST form has no header section to bound it); user metadata past 2 KB is
 * MetadataTooLarge.
 */
import { describe, expect, it } from 'vitest';
import { checkHeaderSection, headerSectionBytes } from '../../../src/s3/header-limits.js';
import { MAX_REQUEST_HEADER_BYTES } from '../../../src/s3/limits.js';
import { MAX_USER_METADATA_BYTES, metadataFromHeaders } from '../../../src/s3/object-headers.js';
import { expectS3Error } from './helpers.js';

describe('header section size', () => {
  it('counts every header line as on the wire, plus the query string', () => {
    expect(headerSectionBytes([], '/b/k')).toBe(0);
    expect(headerSectionBytes(['Host', 'x'], '/b/k')).toBe('Host: x\r\n'.length);
    expect(headerSectionBytes(['Host', 'x', 'A', 'bc'], '/b/k?uploads&x=1')).toBe(9 + 7 + 'uploads&x=1'.length);
    // Repeated headers count once per line.
    expect(headerSectionBytes(['X-A', '1', 'X-A', '2'], '/')).toBe(2 * 'X-A: 1\r\n'.length);
  });

  it('accepts exactly MAX_REQUEST_HEADER_BYTES and refuses one byte more', () => {
    const pad = (total: number) => ['Host', 'x', 'X-Pad', 'p'.repeat(total - 9 - 'X-Pad: \r\n'.length)];
    expect(headerSectionBytes(pad(MAX_REQUEST_HEADER_BYTES), '/')).toBe(MAX_REQUEST_HEADER_BYTES);
    checkHeaderSection(pad(MAX_REQUEST_HEADER_BYTES), '/b/k');
    const err = expectS3Error(() => checkHeaderSection(pad(MAX_REQUEST_HEADER_BYTES + 1), '/b/k'), 'RequestHeaderSectionTooLarge');
    expect(err.status).toBe(400);
    expect(err.detail.MaxSizeAllowed).toBe(8192);
    // The query string counts too.
    expectS3Error(() => checkHeaderSection(pad(MAX_REQUEST_HEADER_BYTES), '/b/k?x'), 'RequestHeaderSectionTooLarge');
  });
});

describe('stored metadata bounds', () => {
  it('user metadata over 2 KB is MetadataTooLarge; 2 KB is fine', () => {
    const at = (n: number) => ({ 'x-amz-meta-k': 'v'.repeat(n - 1) });
    expect(metadataFromHeaders(at(MAX_USER_METADATA_BYTES)).userMetadata?.k?.length).toBe(MAX_USER_METADATA_BYTES - 1);
    expectS3Error(() => metadataFromHeaders(at(MAX_USER_METADATA_BYTES + 1)), 'MetadataTooLarge');
  });

  it('standard headers are stored only while everything stored fits the header limit', () => {
    const ok = metadataFromHeaders({ 'cache-control': 'c'.repeat(7000), 'content-type': 'text/plain' });
    expect(ok.system?.['cache-control']?.length).toBe(7000);
    const fields = {
      'cache-control': 'c'.repeat(3000),
      'content-disposition': 'd'.repeat(3000),
      'content-language': 'l'.repeat(1000),
      'x-amz-meta-a': 'm'.repeat(1500),
      'content-type': 't'.repeat(100),
    };
    expectS3Error(() => metadataFromHeaders(fields), 'RequestHeaderSectionTooLarge');
    expectS3Error(() => metadataFromHeaders({ expires: 'e'.repeat(MAX_REQUEST_HEADER_BYTES) }), 'RequestHeaderSectionTooLarge');
  });
});
