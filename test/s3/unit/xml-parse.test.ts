/**
 * The request-body XML parser and the typed body parsers: the real bodies clients send
 * (SDK v3, botocore, rclone, s3cmd — s3-clients.md), and hostile or broken input, which
 * must always end in an S3Error, never a crash or a hang.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_XML_BODY_BYTES,
  parseCompleteMultipartUpload,
  parseCorsConfiguration,
  parseCreateBucketConfiguration,
  parseDelete,
  parseTagging,
  parseXml,
  validateTags,
} from '../../../src/s3/xml/index.js';
import { expectS3Error } from './helpers.js';

const NS = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"';
const DECL = '<?xml version="1.0" encoding="UTF-8"?>';
const ETAG = 'cef04c49ca33dcfb6691e43d4734262f';

describe('parseXml', () => {
  it('reads elements, prefixes, attributes, text, CDATA, comments and entities', () => {
    const root = parseXml(
      `${DECL}\n<!-- c --><s3:A ${NS} xmlns:s3="x" k='v&amp;w'>\n  <s3:B>a &lt;&gt;&amp;&quot;&apos; &#65;&#x42;&#x1F600;</s3:B>` +
        `<C><![CDATA[<raw> & ]]></C><D/><?pi ignored?></s3:A>\n<!-- after -->\n`
    );
    expect(root.name).toBe('A');
    expect(root.attributes.k).toBe('v&w');
    expect(root.children.map((c) => c.name)).toEqual(['B', 'C', 'D']);
    expect(root.children[0]!.text).toBe('a <>&"\' AB😀');
    expect(root.children[1]!.text).toBe('<raw> & ');
    expect(root.children[2]!.text).toBe('');
  });

  it('normalises line ends but keeps &#13;', () => {
    expect(parseXml('<a>x\r\ny\rz&#13;</a>').text).toBe('x\ny\nz\r');
  });

  it('accepts UTF-8 bytes with a BOM and refuses invalid UTF-8', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<a>ü</a>')]);
    expect(parseXml(bytes).text).toBe('ü');
    expectS3Error(
      () => parseXml(Buffer.from([0x3c, 0x61, 0x3e, 0xff, 0x3c, 0x2f, 0x61, 0x3e])),
      'MalformedXML'
    );
  });

  const malformed: [string, string][] = [
    ['empty', ''],
    ['whitespace only', '  \n'],
    ['text only', 'hello'],
    ['unclosed', '<a><b></b>'],
    ['truncated tag', '<a><b'],
    ['mismatched', '<a></b>'],
    ['two roots', '<a/><b/>'],
    ['text after root', '<a/>x'],
    ['DOCTYPE', '<!DOCTYPE a><a/>'],
    ['internal entity', '<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>'],
    ['external entity', '<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>'],
    ['undefined entity', '<a>&nbsp;</a>'],
    ['bare ampersand', '<a>a & b</a>'],
    ['unterminated reference', '<a>&#x41</a>'],
    ['NUL reference', '<a>&#0;</a>'],
    ['surrogate reference', '<a>&#xD800;</a>'],
    ['FFFE reference', '<a>&#xFFFE;</a>'],
    ['out of range reference', '<a>&#x110000;</a>'],
    ['raw control character', '<a>\u0001</a>'],
    ['raw U+FFFF', '<a>\uFFFF</a>'],
    ['lt in attribute', '<a b="<"/>'],
    ['unquoted attribute', '<a b=c/>'],
    ['duplicate attribute', '<a b="1" b="2"/>'],
    ['attributes without space', '<a b="1"c="2"/>'],
    ['bad name', '<1a/>'],
    ['space after <', '< a/>'],
    ['unterminated comment', '<a><!-- x</a>'],
    ['unterminated CDATA', '<a><![CDATA[x</a>'],
    ['misplaced declaration', '<a><?xml version="1.0"?></a>'],
    ['declaration inside', '<a><!ELEMENT a ANY></a>'],
  ];
  for (const [what, text] of malformed) {
    it(`refuses ${what}`, () => {
      expectS3Error(() => parseXml(text), 'MalformedXML');
    });
  }

  it('refuses the billion laughs without expanding anything', () => {
    const lol =
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">' +
      Array.from(
        { length: 9 },
        (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`
      ).join('') +
      ']><lolz>&lol9;</lolz>';
    const t = performance.now();
    expectS3Error(() => parseXml(lol), 'MalformedXML');
    expect(performance.now() - t).toBeLessThan(100);
  });

  it('bounds depth, element count and size', () => {
    const deep = (n: number) => '<a>'.repeat(n) + '</a>'.repeat(n);
    parseXml(deep(16));
    expectS3Error(() => parseXml(deep(17)), 'MalformedXML');
    expectS3Error(() => parseXml(deep(100_000)), 'MalformedXML');
    expectS3Error(() => parseXml(`<a>${'<b/>'.repeat(10_000)}</a>`), 'MalformedXML');
    parseXml(`<a>${'<b/>'.repeat(9_999)}</a>`);
    const big = `<a>${'x'.repeat(MAX_XML_BODY_BYTES)}</a>`;
    expectS3Error(() => parseXml(big), 'MaxMessageLengthExceeded');
    expectS3Error(() => parseXml(Buffer.from(big)), 'MaxMessageLengthExceeded');
  });

  it('never hangs or crashes on truncations of a valid document', () => {
    const doc = `${DECL}<Delete ${NS}><Object><Key>a&amp;b</Key></Object><![CDATA[x]]><!--c--></Delete>`;
    for (let i = 0; i < doc.length; i++)
      expectS3Error(() => parseXml(doc.slice(0, i)), 'MalformedXML');
  });
});

describe('parseCompleteMultipartUpload', () => {
  const bodies: [string, string][] = [
    [
      'SDK v3 (&quot;, checksum, namespace)',
      `${DECL}<CompleteMultipartUpload ${NS}><Part><ETag>&quot;${ETAG}&quot;</ETag><ChecksumCRC32>Fn8CmA==</ChecksumCRC32><PartNumber>1</PartNumber></Part><Part><ETag>&quot;${ETAG.toUpperCase()}&quot;</ETag><PartNumber>2</PartNumber></Part></CompleteMultipartUpload>`,
    ],
    [
      'botocore (raw quotes)',
      `<CompleteMultipartUpload ${NS}><Part><ETag>"${ETAG}"</ETag><PartNumber>1</PartNumber><ChecksumCRC32>Fn8CmA==</ChecksumCRC32></Part><Part><ETag>"${ETAG}"</ETag><PartNumber>2</PartNumber></Part></CompleteMultipartUpload>`,
    ],
    [
      'rclone (&#34;)',
      `<CompleteMultipartUpload ${NS}>\n  <Part>\n    <PartNumber>1</PartNumber>\n    <ETag>&#34;${ETAG}&#34;</ETag>\n    <ChecksumCRC32>Fn8CmA==</ChecksumCRC32>\n  </Part>\n  <Part><PartNumber>2</PartNumber><ETag>&#34;${ETAG}&#34;</ETag></Part>\n</CompleteMultipartUpload>`,
    ],
    [
      's3cmd (no namespace, bare ETag)',
      `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${ETAG}</ETag><ChecksumCRC32>Fn8CmA==</ChecksumCRC32></Part><Part><PartNumber>2</PartNumber><ETag>${ETAG}</ETag></Part></CompleteMultipartUpload>`,
    ],
  ];
  for (const [who, body] of bodies) {
    it(`reads the ${who} body`, () => {
      expect(parseCompleteMultipartUpload(body)).toEqual({
        parts: [
          { partNumber: 1, etag: ETAG, checksums: { crc32: 'Fn8CmA==' } },
          { partNumber: 2, etag: ETAG, checksums: {} },
        ],
      });
    });
  }

  const part = (n: string, etag = ETAG) =>
    `<Part><PartNumber>${n}</PartNumber><ETag>${etag}</ETag></Part>`;
  const doc = (...parts: string[]) =>
    `<CompleteMultipartUpload>${parts.join('')}</CompleteMultipartUpload>`;

  it('reads every checksum element', () => {
    const p = `<Part><PartNumber>1</PartNumber><ETag>x</ETag><ChecksumCRC32C>a</ChecksumCRC32C><ChecksumCRC64NVME>b</ChecksumCRC64NVME><ChecksumSHA1>c</ChecksumSHA1><ChecksumSHA256>d</ChecksumSHA256></Part>`;
    expect(parseCompleteMultipartUpload(doc(p)).parts[0]!.checksums).toEqual({
      crc32c: 'a',
      crc64nvme: 'b',
      sha1: 'c',
      sha256: 'd',
    });
  });

  it('refuses bad documents with the right codes', () => {
    expectS3Error(() => parseCompleteMultipartUpload(doc()), 'MalformedXML');
    expectS3Error(() => parseCompleteMultipartUpload('<Complete/>'), 'MalformedXML');
    expectS3Error(
      () => parseCompleteMultipartUpload(doc('<Part><PartNumber>1</PartNumber></Part>')),
      'MalformedXML'
    );
    expectS3Error(() => parseCompleteMultipartUpload(doc(part('x'))), 'MalformedXML');
    expectS3Error(() => parseCompleteMultipartUpload(doc(part('0'))), 'InvalidArgument');
    expectS3Error(() => parseCompleteMultipartUpload(doc(part('10001'))), 'InvalidArgument');
    expectS3Error(
      () => parseCompleteMultipartUpload(doc(part('2'), part('1'))),
      'InvalidPartOrder'
    );
    expectS3Error(
      () => parseCompleteMultipartUpload(doc(part('1'), part('1'))),
      'InvalidPartOrder'
    );
  });

  it('accepts 10 000 parts with checksums (bodies over 1 MiB)', () => {
    const parts = Array.from(
      { length: 10_000 },
      (_, i) =>
        `<Part><ETag>"${ETAG}"</ETag><PartNumber>${i + 1}</PartNumber><ChecksumSHA256>n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=</ChecksumSHA256></Part>`
    );
    const body = doc(...parts);
    expect(body.length).toBeGreaterThan(MAX_XML_BODY_BYTES);
    expect(parseCompleteMultipartUpload(body).parts).toHaveLength(10_000);
  });
});

describe('parseDelete', () => {
  it('reads the SDK v3 body, keys exact', () => {
    const body = `${DECL}<Delete ${NS}><Object><Key>buf64k</Key></Object><Object><Key>a&amp;b</Key></Object><Object><Key> spaced </Key><VersionId>null</VersionId></Object><Object><Key>cr&#13;lf&#10;&#x1F;</Key></Object></Delete>`;
    expect(parseDelete(body)).toEqual({
      quiet: false,
      objects: [
        { key: 'buf64k' },
        { key: 'a&b' },
        { key: ' spaced ', versionId: 'null' },
        { key: 'cr\rlf\n\u001f' },
      ],
    });
  });

  it('reads Quiet and refuses bad shapes', () => {
    expect(
      parseDelete('<Delete><Quiet>true</Quiet><Object><Key>k</Key></Object></Delete>').quiet
    ).toBe(true);
    expect(
      parseDelete('<Delete><Quiet> FALSE </Quiet><Object><Key>k</Key></Object></Delete>').quiet
    ).toBe(false);
    expectS3Error(
      () => parseDelete('<Delete><Quiet>yes</Quiet><Object><Key>k</Key></Object></Delete>'),
      'MalformedXML'
    );
    expectS3Error(() => parseDelete('<Delete></Delete>'), 'MalformedXML');
    expectS3Error(
      () => parseDelete('<Delete><Object><VersionId>1</VersionId></Object></Delete>'),
      'MalformedXML'
    );
    expectS3Error(
      () => parseDelete('<Delete><Object><Key>a</Key><Key>b</Key></Object></Delete>'),
      'MalformedXML'
    );
    expectS3Error(
      () => parseDelete('<Delete><Object><Key><b/></Key></Object></Delete>'),
      'MalformedXML'
    );
    expectS3Error(() => parseDelete('<Tagging/>'), 'MalformedXML');
  });

  it('takes 1000 objects and refuses 1001', () => {
    const objs = (n: number) => `<Delete>${'<Object><Key>k</Key></Object>'.repeat(n)}</Delete>`;
    expect(parseDelete(objs(1000)).objects).toHaveLength(1000);
    expectS3Error(() => parseDelete(objs(1001)), 'MalformedXML');
  });
});

describe('parseCreateBucketConfiguration', () => {
  it('allows an empty body and reads LocationConstraint', () => {
    expect(parseCreateBucketConfiguration('')).toEqual({});
    expect(parseCreateBucketConfiguration(Buffer.from('\n '))).toEqual({});
    expect(
      parseCreateBucketConfiguration(
        `<CreateBucketConfiguration ${NS}><LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>`
      )
    ).toEqual({ locationConstraint: 'eu-west-1' });
    expect(parseCreateBucketConfiguration('<CreateBucketConfiguration/>')).toEqual({});
    expectS3Error(() => parseCreateBucketConfiguration('<Other/>'), 'MalformedXML');
    expectS3Error(() => parseCreateBucketConfiguration('not xml'), 'MalformedXML');
  });
});

describe('parseTagging', () => {
  const tagging = (tags: [string, string][]) =>
    `<Tagging ${NS}><TagSet>${tags.map(([k, v]) => `<Tag><Key>${k}</Key><Value>${v}</Value></Tag>`).join('')}</TagSet></Tagging>`;

  it('reads tags, and an empty TagSet', () => {
    expect(
      parseTagging(
        tagging([
          ['a', '1'],
          ['b b', ''],
        ])
      )
    ).toEqual({
      tags: [
        { key: 'a', value: '1' },
        { key: 'b b', value: '' },
      ],
    });
    expect(parseTagging('<Tagging><TagSet/></Tagging>')).toEqual({ tags: [] });
  });

  it('enforces S3 tag rules with InvalidTag', () => {
    const ten = Array.from({ length: 10 }, (_, i) => [`k${i}`, 'v'] as [string, string]);
    parseTagging(tagging(ten));
    expectS3Error(() => parseTagging(tagging([...ten, ['k10', 'v']])), 'InvalidTag');
    parseTagging(tagging([['😀'.repeat(128), 'v'.repeat(256)]]));
    expectS3Error(() => parseTagging(tagging([['k'.repeat(129), 'v']])), 'InvalidTag');
    expectS3Error(() => parseTagging(tagging([['k', 'v'.repeat(257)]])), 'InvalidTag');
    expectS3Error(
      () =>
        parseTagging(
          tagging([
            ['k', '1'],
            ['k', '2'],
          ])
        ),
      'InvalidTag'
    );
    expectS3Error(() => parseTagging(tagging([['', '1']])), 'InvalidTag');
    expectS3Error(() => parseTagging(tagging([['aws:x', '1']])), 'InvalidTag');
    expectS3Error(() => parseTagging('<Tagging/>'), 'MalformedXML');
    expectS3Error(
      () => parseTagging('<Tagging><TagSet><Tag><Value>1</Value></Tag></TagSet></Tagging>'),
      'MalformedXML'
    );
    validateTags(
      Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: '' })),
      50
    );
  });
});

describe('parseCorsConfiguration', () => {
  it('reads rules', () => {
    const body = `<CORSConfiguration ${NS}><CORSRule><ID>r1</ID><AllowedOrigin>https://*.example.com</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod><AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>3000</MaxAgeSeconds></CORSRule><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>HEAD</AllowedMethod></CORSRule></CORSConfiguration>`;
    expect(parseCorsConfiguration(body)).toEqual({
      rules: [
        {
          id: 'r1',
          allowedOrigins: ['https://*.example.com'],
          allowedMethods: ['GET', 'PUT'],
          allowedHeaders: ['*'],
          exposeHeaders: ['ETag'],
          maxAgeSeconds: 3000,
        },
        { allowedOrigins: ['*'], allowedMethods: ['HEAD'], allowedHeaders: [], exposeHeaders: [] },
      ],
    });
  });

  it('refuses bad rules', () => {
    const rule = (inner: string) =>
      `<CORSConfiguration><CORSRule>${inner}</CORSRule></CORSConfiguration>`;
    expectS3Error(() => parseCorsConfiguration('<CORSConfiguration/>'), 'MalformedXML');
    expectS3Error(
      () => parseCorsConfiguration(rule('<AllowedMethod>GET</AllowedMethod>')),
      'MalformedXML'
    );
    expectS3Error(
      () => parseCorsConfiguration(rule('<AllowedOrigin>*</AllowedOrigin>')),
      'MalformedXML'
    );
    expectS3Error(
      () =>
        parseCorsConfiguration(
          rule('<AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod>')
        ),
      'InvalidRequest'
    );
    expectS3Error(
      () =>
        parseCorsConfiguration(
          rule('<AllowedOrigin>*.*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>')
        ),
      'InvalidRequest'
    );
    expectS3Error(
      () =>
        parseCorsConfiguration(
          rule(
            '<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>-1</MaxAgeSeconds>'
          )
        ),
      'MalformedXML'
    );
    const many = `<CORSConfiguration>${'<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>'.repeat(101)}</CORSConfiguration>`;
    expectS3Error(() => parseCorsConfiguration(many), 'MalformedXML');
  });
});
