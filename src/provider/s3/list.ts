/**
 * @module Reading a ListObjectsV2 answer.
 *
 * Keys are requested with `encoding-type=url` so that characters XML 1.0 cannot
 * carry (controls) survive; a server that honours it says so with
 * `<EncodingType>url</EncodingType>` and only then are keys URL-decoded (`+` is a
 * space, as S3 encodes). Servers that ignore the parameter send raw keys.
 */
import { ProviderError, type BlobInfo } from '../provider.js';
import { child, children, childText, parseXml } from './xml.js';

/** Largest ListObjectsV2 answer read: 1000 keys × 1024 bytes, URL-encoded (×3), plus markup. */
export const LIST_RESPONSE_MAX_BYTES = 16 * 1024 * 1024;

export interface ParsedList {
  items: BlobInfo[];
  truncated: boolean;
}

/** Strips the quotes S3 puts around ETags. */
export function unquoteEtag(etag: string | undefined): string {
  if (!etag) return '';
  const t = etag.trim();
  return t.length >= 2 && t.startsWith('"') && t.endsWith('"') ? t.slice(1, -1) : t;
}

function decodeUrlKey(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch (err) {
    throw new ProviderError('Io', `list: undecodable key ${JSON.stringify(text)}`, { cause: err });
  }
}

/**
 * Parses the XML of a ListObjectsV2 answer; keys are returned with `keyPrefix`
 * removed. Throws ProviderError 'Io' if the document is malformed, holds more than
 * `maxKeys` entries, or holds a key outside `keyPrefix`.
 */
export function parseListResult(xml: string, keyPrefix: string, maxKeys: number): ParsedList {
  const root = parseXml(xml);
  if (root.name !== 'ListBucketResult')
    throw new ProviderError('Io', `list: unexpected <${root.name}> answer`);
  const urlEncoded = childText(root, 'EncodingType')?.trim().toLowerCase() === 'url';
  const contents = children(root, 'Contents');
  if (contents.length > maxKeys)
    throw new ProviderError('Io', `list: ${contents.length} keys returned for max-keys ${maxKeys}`);
  const items = contents.map((c): BlobInfo => {
    const raw = child(c, 'Key')?.text;
    if (raw === undefined) throw new ProviderError('Io', 'list: <Contents> without <Key>');
    const full = urlEncoded ? decodeUrlKey(raw) : raw;
    if (!full.startsWith(keyPrefix))
      throw new ProviderError('Io', `list: key ${JSON.stringify(full)} is outside the prefix`);
    const size = Number(childText(c, 'Size'));
    if (!Number.isSafeInteger(size) || size < 0)
      throw new ProviderError('Io', `list: bad <Size> for ${JSON.stringify(full)}`);
    return {
      key: full.slice(keyPrefix.length),
      size,
      etag: unquoteEtag(childText(c, 'ETag')),
      lastModified: new Date(childText(c, 'LastModified') ?? 0),
    };
  });
  return { items, truncated: childText(root, 'IsTruncated')?.trim() === 'true' };
}
