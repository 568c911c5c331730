/**
 * @module GetObjectAttributes (`GET /bucket/key?attributes`): the attributes named in
 * `x-amz-object-attributes` — ETag (unquoted, as S3 sends it here), Checksum, ObjectParts
 * (paged by `x-amz-max-parts` / `x-amz-part-number-marker`), StorageClass, ObjectSize —
 * without the body. Headers: Last-Modified.
 *
 * ObjectParts is returned for multipart objects only. S3 lists the `<Part>` entries of
 * objects that carry an additional checksum; every Strata object carries one (CRC64NVME
 * at least, as S3 does by default since 2024), so parts are always listed, each with the
 * object's checksum algorithm when the part recorded it.
 */
import { versionIdHeader } from './versions.js';
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { sendXml } from '../respond.js';
import { S3Error } from '../errors.js';
import { checksumLeaves, el, leaf, s3Root, xmlDocument, type ChecksumValues, type Xml } from '../xml/index.js';
import { etagOf, type ObjectVersion } from '../../store/records.js';
import { versionChecksums } from './multipart.js';
import { MAX_LIST_ENTRIES } from '../limits.js';
import { encryptionHeaders, readKeys } from '../sse.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

/** The attribute names S3 accepts in x-amz-object-attributes (case-sensitive, as S3 is). */
export const OBJECT_ATTRIBUTES = ['ETag', 'Checksum', 'ObjectParts', 'StorageClass', 'ObjectSize'] as const;
export type ObjectAttribute = (typeof OBJECT_ATTRIBUTES)[number];

/** Largest integer S3 accepts in these headers (a signed 32-bit int). */
const MAX_HEADER_INT = 2 ** 31 - 1;

/**
 * The attributes a request asks for. Throws S3Error InvalidRequest when the header is
 * missing or empty, InvalidArgument for a name S3 does not know. Pure.
 */
export function parseObjectAttributes(value: string | undefined): Set<ObjectAttribute> {
  const names = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (names.length === 0) {
    throw new S3Error('InvalidRequest', 'The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty');
  }
  const out = new Set<ObjectAttribute>();
  for (const n of names) {
    if (!(OBJECT_ATTRIBUTES as readonly string[]).includes(n)) {
      throw new S3Error('InvalidArgument', 'Invalid attribute name specified.', { ArgumentName: 'x-amz-object-attributes', ArgumentValue: n });
    }
    out.add(n as ObjectAttribute);
  }
  return out;
}

/** A non-negative integer header (`fallback` when absent); InvalidArgument otherwise. Pure. */
export function intHeader(h: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = h[name];
  if (raw === undefined) return fallback;
  const v = raw.trim();
  if (!/^[0-9]{1,10}$/.test(v) || Number(v) > MAX_HEADER_INT) {
    throw new S3Error('InvalidArgument', `Provided ${name} not an integer or within integer range`, { ArgumentName: name, ArgumentValue: raw });
  }
  return Number(v);
}

const b64 = (v: Uint8Array) => Buffer.from(v).toString('base64');

/** The `<ObjectParts>` of a multipart version, one page of it. Pure. */
function objectPartsXml(v: ObjectVersion, maxParts: number, marker: number): Xml | undefined {
  const parts = v.parts;
  if (!parts || parts.length === 0) return undefined;
  const after = parts.filter((p) => p.number > marker);
  const page = after.slice(0, maxParts);
  const truncated = after.length > page.length;
  const alg = v.checksums?.primary;
  return el(
    'ObjectParts',
    leaf('PartsCount', parts.length),
    leaf('PartNumberMarker', marker),
    truncated && page.length > 0 ? leaf('NextPartNumberMarker', page[page.length - 1]!.number) : undefined,
    leaf('MaxParts', maxParts),
    leaf('IsTruncated', truncated),
    page.map((p) => {
      const values: ChecksumValues = {};
      const digest = alg ? p.checksums[alg] : undefined;
      if (alg && digest) values[alg] = b64(digest);
      return el('Part', checksumLeaves(values), leaf('PartNumber', p.number), leaf('Size', p.size));
    })
  );
}

/** The GetObjectAttributesResponse document for `v`. Pure. */
export function renderObjectAttributes(v: ObjectVersion, want: ReadonlySet<ObjectAttribute>, maxParts: number, marker: number): string {
  let checksum: Xml | undefined;
  if (want.has('Checksum')) {
    const { checksums, checksumType } = versionChecksums(v);
    if (Object.keys(checksums).length > 0) checksum = el('Checksum', checksumLeaves(checksums), leaf('ChecksumType', checksumType));
  }
  return xmlDocument(
    s3Root(
      'GetObjectAttributesResponse',
      want.has('ETag') ? leaf('ETag', etagOf(v)) : undefined,
      checksum,
      want.has('ObjectParts') ? objectPartsXml(v, maxParts, marker) : undefined,
      want.has('StorageClass') ? leaf('StorageClass', 'STANDARD') : undefined,
      want.has('ObjectSize') ? leaf('ObjectSize', v.size) : undefined
    )
  );
}

export async function handleGetObjectAttributes(r: RequestContext, e: Op<'GetObjectAttributes'>): Promise<void> {
  const want = parseObjectAttributes(r.headers['x-amz-object-attributes']);
  const maxParts = Math.min(intHeader(r.headers, 'x-amz-max-parts', MAX_LIST_ENTRIES), MAX_LIST_ENTRIES);
  const marker = intHeader(r.headers, 'x-amz-part-number-marker', 0);
  // An SSE-C object's attributes (its checksums among them) go only to the key's holder.
  const { keys, customer } = readKeys(r);
  const v = (await r.store.headObject(e.bucket, e.key, { keys, ...(e.versionId !== undefined && { versionId: e.versionId }) })).version;
  sendXml(r, 200, renderObjectAttributes(v, want, maxParts, marker), {
    'last-modified': new Date(v.lastModified).toUTCString(),
    ...versionIdHeader(r, e.bucket, v.versionId, e.versionId !== undefined),
    ...encryptionHeaders(v.encryption?.mode, customer),
  });
}
