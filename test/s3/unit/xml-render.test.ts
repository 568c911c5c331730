/**
 * Response documents: escaping, the XML-1.0-unsafe character policy, URL encoding of
 * listings, ETag quoting, element shapes — each document is also read back with the
 * parser, which refuses anything that is not well-formed XML 1.0.
 */
import { describe, expect, it } from 'vitest';
import { CODE_STATUS, isS3Error, renderError, S3Error, toS3Error } from '../../../src/s3/errors.js';
import {
  el,
  escapeXmlText,
  isXmlSafe,
  leaf,
  parseCorsConfiguration,
  parseTagging,
  parseXml,
  renderCompleteMultipartUploadResult,
  renderCopyObjectResult,
  renderCopyPartResult,
  renderCorsConfiguration,
  renderDeleteResult,
  renderInitiateMultipartUploadResult,
  renderListAllMyBucketsResult,
  renderListMultipartUploadsResult,
  renderListObjectsV1Result,
  renderListObjectsV2Result,
  renderListPartsResult,
  renderLocationConstraint,
  renderTagging,
  replaceUnsafeXmlChars,
  s3DocumentChunks,
  s3Root,
  urlEncodeListingValue,
  XML_CHUNK_CHARS,
  xmlDocument,
  XmlUnsafeCharacterError,
  type ListedObject,
  type XmlContent,
  type XmlElement,
} from '../../../src/s3/xml/index.js';
import { isoTimes } from '../../../src/s3/xml/listing.js';
import { renderListVersionsResult } from '../../../src/s3/xml/versions.js';

const NS = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"';
const T = new Date('2025-01-02T03:04:05.678Z');

/** The document a renderer returned in pieces, as one string. */
const text = (pieces: readonly string[]): string => pieces.join('');

/** Text of the first descendant path `a/b/c`. */
function at(root: XmlElement, path: string): string | undefined {
  let el: XmlElement | undefined = root;
  for (const name of path.split('/')) el = el?.children.find((c) => c.name === name);
  return el?.text;
}
function all(root: XmlElement, name: string): XmlElement[] {
  return root.children.filter((c) => c.name === name);
}

describe('escaping', () => {
  it('escapes markup characters and CR', () => {
    expect(escapeXmlText(`a<b>&"c'\r\n\t`)).toBe(`a&lt;b&gt;&amp;&quot;c'&#13;\n\t`);
    expect(parseXml(`<a>${escapeXmlText('x\r\ny')}</a>`).text).toBe('x\r\ny');
  });

  it('fails closed on characters XML 1.0 cannot carry', () => {
    for (const bad of [
      '\u0000',
      '\u0001',
      '\u001f',
      '\u000b',
      '\ufffe',
      '\uffff',
      '\ud800',
      '\udc00',
    ]) {
      expect(isXmlSafe(bad)).toBe(false);
      expect(() => escapeXmlText(bad)).toThrow(XmlUnsafeCharacterError);
      expect(replaceUnsafeXmlChars(`x${bad}y`)).toBe('x\ufffdy');
    }
    expect(isXmlSafe('tab\tlf\ncr\r😀\ufffd')).toBe(true);
  });

  it('URL-encodes listing values so both unquote and unquote_plus restore them', () => {
    const v = "dir/a b+c!*'()~$&=,;:@[]ü%\u001f.txt";
    const enc = urlEncodeListingValue(v);
    expect(enc).toBe('dir/a%20b%2Bc%21%2A%27%28%29~%24%26%3D%2C%3B%3A%40%5B%5D%C3%BC%25%1F.txt');
    expect(decodeURIComponent(enc)).toBe(v);
    expect(decodeURIComponent(enc.replace(/\+/g, ' '))).toBe(v);
  });
});

const objects: ListedObject[] = [
  {
    key: 'a b+c.txt',
    lastModified: T,
    etag: 'd41d8cd98f00b204e9800998ecf8427e',
    size: 0,
    owner: { id: 'o1', displayName: 'me' },
  },
  {
    key: 'dir/x&y',
    lastModified: T,
    etag: '"abc-3"',
    size: 12,
    checksumAlgorithms: ['CRC32'],
    checksumType: 'COMPOSITE',
  },
];

describe('documents in pieces', () => {
  it('join to exactly what xmlDocument(s3Root(...)) writes, for empty, nested and skipped content', () => {
    const cases: XmlContent[][] = [
      [],
      [undefined, null, false, []],
      [leaf('A', 'x')],
      [leaf('A', ''), [el('B'), [leaf('C', 1), undefined]], false, leaf('D', 'a<b&c')],
      [Array.from({ length: 3000 }, (_, i) => el('E', leaf('K', `key-${i}-${'é'.repeat(i % 50)}`)))],
    ];
    for (const content of cases) {
      expect(text(s3DocumentChunks('Root', ...content))).toBe(xmlDocument(s3Root('Root', ...content)));
    }
  });

  it('close a piece at the first whole element past the bound, so none is large and the last holds the close tag', () => {
    const big = 'x'.repeat(5000);
    const content = Array.from({ length: 100 }, (_, i) => leaf('V', `${i}${big}`));
    const pieces = s3DocumentChunks('Root', content);
    const longest = Math.max(...content.map((c) => c!.length));
    expect(pieces.length).toBeGreaterThan(10);
    for (const p of pieces.slice(0, -1)) {
      expect(p.length).toBeGreaterThanOrEqual(XML_CHUNK_CHARS);
      expect(p.length).toBeLessThan(XML_CHUNK_CHARS + longest);
      expect(p.endsWith('</V>')).toBe(true);
    }
    expect(pieces[pieces.length - 1]!.endsWith('</Root>')).toBe(true);
    expect(text(pieces)).toBe(xmlDocument(s3Root('Root', content)));
  });

  it('a listing page of 1,000 keys is several pieces that parse as one document', () => {
    const contents = Array.from({ length: 1000 }, (_, i) => ({ key: `p${i % 7}/obj-${String(i).padStart(9, '0')}`, lastModified: T, etag: 'd41d8cd98f00b204e9800998ecf8427e', size: i }));
    const pieces = renderListObjectsV2Result({ bucket: 'b', prefix: '', maxKeys: 1000, isTruncated: false, fetchOwner: false, contents, commonPrefixes: [] });
    expect(pieces.length).toBeGreaterThan(3);
    const keys = all(parseXml(text(pieces)), 'Contents').map((c) => at(c, 'Key'));
    expect(keys).toEqual(contents.map((c) => c.key));
  });
});

describe('ListBucketResult', () => {
  it('renders each object its own LastModified and ETag, whatever its neighbours (per-listing memo)', () => {
    const t1 = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
    const t2 = t1 + 1;
    const md5 = 'd41d8cd98f00b204e9800998ecf8427e';
    const contents = [t1, t1, t2, t1, t2].map((t, i) => ({
      key: `k${i}\r"<&>`,
      lastModified: new Date(t),
      etag: i === 3 ? 'x"y' : i === 4 ? `${md5}-12` : md5,
      size: i,
      ...(i === 2 ? { storageClass: 'A&B' } : {}),
    }));
    const xml = text(renderListObjectsV2Result({ bucket: 'b', prefix: '', maxKeys: 1000, isTruncated: false, fetchOwner: false, contents, commonPrefixes: [] }));
    const root = parseXml(xml);
    const got = all(root, 'Contents').map((c) => [at(c, 'Key'), at(c, 'LastModified'), at(c, 'ETag'), at(c, 'StorageClass')]);
    const iso = (t: number) => new Date(t).toISOString();
    expect(got).toEqual([
      ['k0\r"<&>', iso(t1), `"${md5}"`, 'STANDARD'],
      ['k1\r"<&>', iso(t1), `"${md5}"`, 'STANDARD'],
      ['k2\r"<&>', iso(t2), `"${md5}"`, 'A&B'],
      ['k3\r"<&>', iso(t1), '"x"y"', 'STANDARD'],
      ['k4\r"<&>', iso(t2), `"${md5}-12"`, 'STANDARD'],
    ]);
    expect(xml).toContain('<Key>k0&#13;&quot;&lt;&amp;&gt;</Key>');
  });

  it('formats LastModified as toISOString does, given ms or a Date, across seconds, years and edges', () => {
    const iso = isoTimes();
    const times = [
      0,
      999,
      1000,
      Date.UTC(2025, 0, 2, 3, 4, 5, 678),
      Date.UTC(2025, 0, 2, 3, 4, 5, 679),
      Date.UTC(2025, 0, 2, 3, 4, 6, 0),
      Date.UTC(2024, 1, 29, 23, 59, 59, 999),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1, // year 10000: toISOString's own six-digit form
      -1, // before 1970
      1.5, // not a whole millisecond
    ];
    for (let i = 0; i < 2000; i++) times.push(Date.UTC(2026, 11, 3) + i * 997);
    for (const t of [...times, ...times.reverse()]) expect(iso(t)).toBe(new Date(t).toISOString());
    const xml = text(renderListObjectsV2Result({
      bucket: 'b',
      prefix: '',
      maxKeys: 1000,
      isTruncated: false,
      fetchOwner: false,
      contents: [
        { key: 'n', lastModified: Date.UTC(2025, 5, 6, 7, 8, 9, 10), etag: 'e', size: 1 },
        { key: 'd', lastModified: new Date(Date.UTC(2025, 5, 6, 7, 8, 9, 11)), etag: 'e', size: 1 },
      ],
      commonPrefixes: [],
    }));
    expect(all(parseXml(xml), 'Contents').map((c) => at(c, 'LastModified'))).toEqual(['2025-06-06T07:08:09.010Z', '2025-06-06T07:08:09.011Z']);
  });

  it('ListVersionsResult writes LastModified through the same formatter, given ms or a Date', () => {
    const t1 = Date.UTC(2025, 5, 6, 7, 8, 9, 10);
    const t2 = Date.UTC(1999, 11, 31, 23, 59, 59, 999);
    const xml = text(renderListVersionsResult({
      bucket: 'b',
      prefix: '',
      keyMarker: '',
      versionIdMarker: '',
      maxKeys: 1000,
      isTruncated: false,
      versions: [
        { key: 'a', versionId: 'v1', isLatest: true, lastModified: t1, deleteMarker: false, etag: 'e', size: 1 },
        { key: 'a', versionId: 'v0', isLatest: false, lastModified: new Date(t2), deleteMarker: true },
        { key: 'b', versionId: 'v2', isLatest: true, lastModified: t1 + 1, deleteMarker: false, etag: 'e', size: 2 },
      ],
      commonPrefixes: [],
    }));
    const root = parseXml(xml);
    expect(all(root, 'Version').map((v) => at(v, 'LastModified'))).toEqual([new Date(t1).toISOString(), new Date(t1 + 1).toISOString()]);
    expect(all(root, 'DeleteMarker').map((v) => at(v, 'LastModified'))).toEqual([new Date(t2).toISOString()]);
  });

  it('V2 without encoding: exact values, KeyCount, owners only with fetch-owner', () => {
    const base = {
      bucket: 'b',
      prefix: '',
      maxKeys: 1000,
      delimiter: '/',
      isTruncated: true,
      continuationToken: 'tok+/=',
      nextContinuationToken: 'next_tok-1',
      startAfter: 'a',
      contents: objects,
      commonPrefixes: ['dir/'],
    };
    const xml = text(renderListObjectsV2Result({ ...base, fetchOwner: false }));
    expect(
      xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult ' + NS + '>')
    ).toBe(true);
    expect(xml).toContain('<ETag>&quot;d41d8cd98f00b204e9800998ecf8427e&quot;</ETag>');
    expect(xml).toContain('<ETag>&quot;abc-3&quot;</ETag>');
    expect(xml).toContain('<LastModified>2025-01-02T03:04:05.678Z</LastModified>');
    expect(xml).toContain('<Prefix></Prefix>');
    const root = parseXml(xml);
    expect(at(root, 'KeyCount')).toBe('3');
    expect(at(root, 'ContinuationToken')).toBe('tok+/=');
    expect(at(root, 'NextContinuationToken')).toBe('next_tok-1');
    expect(all(root, 'Contents').map((c) => at(c, 'Key'))).toEqual(['a b+c.txt', 'dir/x&y']);
    expect(at(root, 'Contents/Owner/ID')).toBeUndefined();
    expect(at(root, 'Contents/StorageClass')).toBe('STANDARD');
    expect(at(root, 'EncodingType')).toBeUndefined();
    expect(at(root, 'CommonPrefixes/Prefix')).toBe('dir/');
    const withOwner = parseXml(text(renderListObjectsV2Result({ ...base, fetchOwner: true })));
    expect(at(withOwner, 'Contents/Owner/ID')).toBe('o1');
  });

  it('V2 with encoding-type=url encodes keys, prefixes, delimiter and StartAfter, not tokens', () => {
    const root = parseXml(
      text(renderListObjectsV2Result({
        bucket: 'b',
        prefix: 'a b/',
        maxKeys: 2,
        delimiter: ' ',
        isTruncated: false,
        continuationToken: 'x y',
        startAfter: 'a+b',
        fetchOwner: false,
        contents: objects,
        commonPrefixes: ['a b/c '],
        encodingType: 'url',
      }))
    );
    expect(at(root, 'EncodingType')).toBe('url');
    expect(at(root, 'Prefix')).toBe('a%20b/');
    expect(at(root, 'Delimiter')).toBe('%20');
    expect(at(root, 'StartAfter')).toBe('a%2Bb');
    expect(at(root, 'ContinuationToken')).toBe('x y');
    expect(at(root, 'Contents/Key')).toBe('a%20b%2Bc.txt');
    expect(at(root, 'CommonPrefixes/Prefix')).toBe('a%20b/c%20');
  });

  it('V1: Marker/NextMarker, owners, and forced URL encoding for an XML-unsafe key', () => {
    const data = {
      bucket: 'b',
      prefix: 'p',
      marker: 'm',
      maxKeys: 1000,
      delimiter: '/',
      isTruncated: true,
      nextMarker: 'n\u001f',
      contents: [{ ...objects[0]!, key: 'bad\u001fkey' }],
      commonPrefixes: [],
    };
    const xml = text(renderListObjectsV1Result(data));
    const root = parseXml(xml); // well-formed XML 1.0
    expect(at(root, 'EncodingType')).toBe('url');
    expect(at(root, 'Contents/Key')).toBe('bad%1Fkey');
    expect(at(root, 'NextMarker')).toBe('n%1F');
    expect(at(root, 'Marker')).toBe('m');
    expect(at(root, 'Contents/Owner/DisplayName')).toBe('me');
    const plain = parseXml(
      text(renderListObjectsV1Result({ ...data, nextMarker: undefined, contents: objects }))
    );
    expect(at(plain, 'EncodingType')).toBeUndefined();
    expect(at(plain, 'Contents/Key')).toBe('a b+c.txt');
    expect(at(plain, 'NextMarker')).toBeUndefined();
  });

  it('ListMultipartUploads encodes keys and markers under encoding-type=url', () => {
    const root = parseXml(
      text(renderListMultipartUploadsResult({
        bucket: 'b',
        keyMarker: 'k m',
        uploadIdMarker: 'u1',
        nextKeyMarker: 'n k',
        nextUploadIdMarker: 'u2',
        prefix: '',
        maxUploads: 1000,
        isTruncated: true,
        uploads: [
          { key: 'a b', uploadId: 'up', initiated: T, owner: { id: 'o' }, initiator: { id: 'o' } },
        ],
        commonPrefixes: [],
        encodingType: 'url',
      }))
    );
    expect(at(root, 'KeyMarker')).toBe('k%20m');
    expect(at(root, 'NextKeyMarker')).toBe('n%20k');
    expect(at(root, 'Upload/Key')).toBe('a%20b');
    expect(at(root, 'Upload/Initiated')).toBe(T.toISOString());
    expect(at(root, 'NextUploadIdMarker')).toBe('u2');
  });

  it('ListAllMyBuckets', () => {
    const root = parseXml(
      renderListAllMyBucketsResult({
        owner: { id: 'id1', displayName: 'name' },
        buckets: [
          { name: 'b1', creationDate: T },
          { name: 'b2', creationDate: T, region: 'eu-west-1' },
        ],
      })
    );
    expect(root.name).toBe('ListAllMyBucketsResult');
    expect(at(root, 'Owner/ID')).toBe('id1');
    expect(
      root.children.find((c) => c.name === 'Buckets')!.children.map((b) => at(b, 'Name'))
    ).toEqual(['b1', 'b2']);
  });
});

describe('other documents', () => {
  it('multipart results', () => {
    const init = parseXml(
      renderInitiateMultipartUploadResult({ bucket: 'b', key: 'k&\u0001', uploadId: 'u' })
    );
    expect(at(init, 'Key')).toBe('k&\ufffd');
    const done = renderCompleteMultipartUploadResult({
      location: 'http://h/b/k',
      bucket: 'b',
      key: 'k',
      etag: 'abc-2',
      checksums: { crc32: 'AAAAAA==-2' },
      checksumType: 'COMPOSITE',
    });
    expect(done).toContain(
      '<ETag>&quot;abc-2&quot;</ETag><ChecksumCRC32>AAAAAA==-2</ChecksumCRC32><ChecksumType>COMPOSITE</ChecksumType>'
    );
    const parts = parseXml(
      text(renderListPartsResult({
        bucket: 'b',
        key: 'k',
        uploadId: 'u',
        partNumberMarker: 0,
        nextPartNumberMarker: 2,
        maxParts: 2,
        isTruncated: true,
        parts: [
          { partNumber: 1, lastModified: T, etag: 'e1', size: 5242880, checksums: { crc32: 'x' } },
          { partNumber: 2, lastModified: T, etag: 'e2', size: 1 },
        ],
        checksumAlgorithm: 'CRC32',
      }))
    );
    expect(
      all(parts, 'Part').map((p) => [at(p, 'PartNumber'), at(p, 'ETag'), at(p, 'Size')])
    ).toEqual([
      ['1', '"e1"', '5242880'],
      ['2', '"e2"', '1'],
    ]);
    expect(at(parts, 'Part/ChecksumCRC32')).toBe('x');
    expect(at(parts, 'IsTruncated')).toBe('true');
    const copyPart = renderCopyPartResult({ etag: 'e', lastModified: T });
    expect(copyPart).toContain(`<CopyPartResult ${NS}><ETag>&quot;e&quot;</ETag><LastModified>`);
    const copy = parseXml(renderCopyObjectResult({ etag: '"e"', lastModified: T }));
    expect(at(copy, 'ETag')).toBe('"e"');
  });

  it('DeleteResult', () => {
    const root = parseXml(
      text(renderDeleteResult({
        deleted: [{ key: 'a&b' }, { key: 'c', versionId: 'null' }],
        errors: [{ key: 'd\u0002', code: 'AccessDenied', message: 'Access Denied' }],
      }))
    );
    expect(all(root, 'Deleted').map((d) => at(d, 'Key'))).toEqual(['a&b', 'c']);
    expect(at(root, 'Error/Key')).toBe('d\ufffd');
    expect(at(root, 'Error/Code')).toBe('AccessDenied');
  });

  it('Tagging and CORS round-trip through their parsers', () => {
    const tags = [
      { key: 'a <b>', value: 'c&d' },
      { key: 'e', value: '' },
    ];
    expect(parseTagging(renderTagging(tags)).tags).toEqual(tags);
    expect(renderTagging([])).toContain('<TagSet/>');
    const rules = [
      {
        id: 'r',
        allowedOrigins: ['https://a.example'],
        allowedMethods: ['GET' as const, 'PUT' as const],
        allowedHeaders: ['*'],
        exposeHeaders: ['ETag', 'x-amz-request-id'],
        maxAgeSeconds: 600,
      },
    ];
    expect(parseCorsConfiguration(renderCorsConfiguration(rules)).rules).toEqual(rules);
  });

  it('LocationConstraint is empty for us-east-1', () => {
    expect(renderLocationConstraint(undefined)).toBe(
      `<?xml version="1.0" encoding="UTF-8"?>\n<LocationConstraint ${NS}/>`
    );
    expect(renderLocationConstraint('us-east-1')).toBe(renderLocationConstraint(undefined));
    expect(parseXml(renderLocationConstraint('eu-west-1')).text).toBe('eu-west-1');
  });
});

describe('errors', () => {
  it('renders <Error> without namespace, details in order, unsafe characters replaced', () => {
    const err = new S3Error('NoSuchKey', undefined, { Key: 'a<b>\u0001', BucketName: 'b' });
    const xml = renderError(err, 'REQ123', '/b/a<b>');
    expect(xml).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code>' +
        '<Message>The specified key does not exist.</Message><Key>a&lt;b&gt;\ufffd</Key>' +
        '<BucketName>b</BucketName><Resource>/b/a&lt;b&gt;</Resource><RequestId>REQ123</RequestId></Error>'
    );
    parseXml(xml);
  });

  it('includes SignatureDoesNotMatch debugging details and odd detail names', () => {
    const err = new S3Error('SignatureDoesNotMatch', undefined, {
      StringToSign: 'AWS4-HMAC-SHA256\n2025',
      CanonicalRequest: 'GET\n/\n',
      'X-Amz-Expires': 60,
      'bad name': 'skipped',
      Code: 'spoofed',
    });
    const root = parseXml(renderError(err, 'r', '/'));
    expect(root.children.map((c) => c.name)).toEqual([
      'Code',
      'Message',
      'StringToSign',
      'CanonicalRequest',
      'X-Amz-Expires',
      'Resource',
      'RequestId',
    ]);
    expect(at(root, 'Code')).toBe('SignatureDoesNotMatch');
    expect(at(root, 'StringToSign')).toBe('AWS4-HMAC-SHA256\n2025');
  });

  it('maps codes to the statuses clients branch on', () => {
    const expected: Record<string, number> = {
      NoSuchKey: 404,
      NoSuchBucket: 404,
      NoSuchUpload: 404,
      NoSuchVersion: 404,
      NoSuchTagSet: 404,
      NoSuchCORSConfiguration: 404,
      BucketAlreadyOwnedByYou: 409,
      BucketAlreadyExists: 409,
      BucketNotEmpty: 409,
      ConditionalRequestConflict: 409,
      InvalidRange: 416,
      PreconditionFailed: 412,
      NotModified: 304,
      MissingContentLength: 411,
      AccessDenied: 403,
      InvalidAccessKeyId: 403,
      SignatureDoesNotMatch: 403,
      RequestTimeTooSkewed: 403,
      MethodNotAllowed: 405,
      NotImplemented: 501,
      SlowDown: 503,
      ServiceUnavailable: 503,
      InternalError: 500,
      XAmzContentSHA256Mismatch: 400,
      AuthorizationHeaderMalformed: 400,
      InvalidURI: 400,
      KeyTooLongError: 400,
      EntityTooSmall: 400,
      MalformedXML: 400,
    };
    for (const [code, status] of Object.entries(expected)) {
      expect(CODE_STATUS[code as keyof typeof CODE_STATUS][0], code).toBe(status);
      expect(new S3Error(code as keyof typeof CODE_STATUS).status).toBe(status);
    }
    expect(new S3Error('NoSuchBucket').message).toBe('The specified bucket does not exist');
    expect(isS3Error(new S3Error('SlowDown'), 'SlowDown')).toBe(true);
    expect(isS3Error(new Error('x'))).toBe(false);
    const internal = toS3Error(new TypeError('secret detail'));
    expect(internal.code).toBe('InternalError');
    expect(internal.message).not.toContain('secret');
  });
});
