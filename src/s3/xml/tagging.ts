/**
 * @module Tagging documents (Get/PutObjectTagging) and S3's tag-set rules.
 *
 * Rules enforced (S3 user guide, "Categorizing your storage using tags"): at most 10 tags on
 * an object (50 on a bucket), keys 1..128 and values 0..256 Unicode characters, unique
 * keys, no `aws:` prefix. The documented character set (letters, digits, spaces and
 * `+ - = . _ : / @`) is not enforced: S3 itself does not reject other characters on
 * object tags.
 */
import { S3Error } from '../errors.js';
import { MAX_OBJECT_TAGS, MAX_TAG_KEY_CHARS, MAX_TAG_VALUE_CHARS } from '../limits.js';
import { el, leaf, s3Root, xmlDocument } from './build.js';
import { replaceUnsafeXmlChars as safe } from './escape.js';
import { malformedXml } from './parse.js';
import { childrenNamed, leafText, parseRoot, requiredLeafText } from './read.js';

export interface Tag {
  key: string;
  value: string;
}

/** Prefix reserved for tags AWS sets itself. */
const RESERVED_TAG_PREFIX = 'aws:';

function charCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * Checks a tag set against S3's rules. Pure. Throws S3Error `InvalidTag` naming the rule
 * broken. `maxTags` is {@link MAX_OBJECT_TAGS} for objects, MAX_BUCKET_TAGS for buckets.
 * Also for tags from the `x-amz-tagging` header.
 */
export function validateTags(tags: readonly Tag[], maxTags: number = MAX_OBJECT_TAGS): void {
  if (tags.length > maxTags)
    throw new S3Error('InvalidTag', `Object tags cannot be greater than ${maxTags}`);
  const seen = new Set<string>();
  for (const { key, value } of tags) {
    if (key === '') throw new S3Error('InvalidTag', 'The TagKey you have provided is invalid');
    if (charCount(key) > MAX_TAG_KEY_CHARS)
      throw new S3Error(
        'InvalidTag',
        `The TagKey you have provided is too long, max ${MAX_TAG_KEY_CHARS}`
      );
    if (charCount(value) > MAX_TAG_VALUE_CHARS)
      throw new S3Error(
        'InvalidTag',
        `The TagValue you have provided is too long, max ${MAX_TAG_VALUE_CHARS}`
      );
    if (key.toLowerCase().startsWith(RESERVED_TAG_PREFIX))
      throw new S3Error('InvalidTag', 'Your TagKey cannot be prefixed with aws:');
    if (seen.has(key))
      throw new S3Error('InvalidTag', 'Cannot provide multiple Tags with the same key');
    seen.add(key);
  }
}

/**
 * Parses a `<Tagging><TagSet><Tag><Key/><Value/></Tag>…</TagSet></Tagging>` body and
 * validates it ({@link validateTags}). An empty TagSet is allowed (it clears the tags); a
 * missing `<Value>` reads as ''. Pure. Throws S3Error `MalformedXML` (shape) or
 * `InvalidTag` (rules).
 */
export function parseTagging(
  body: string | Uint8Array,
  maxTags: number = MAX_OBJECT_TAGS
): { tags: Tag[] } {
  const root = parseRoot(body, 'Tagging');
  const sets = childrenNamed(root, 'TagSet');
  if (sets.length !== 1) throw malformedXml('<Tagging> must hold exactly one <TagSet>');
  const tags = childrenNamed(sets[0]!, 'Tag').map((t) => ({
    key: requiredLeafText(t, 'Key'),
    value: leafText(t, 'Value') ?? '',
  }));
  validateTags(tags, maxTags);
  return { tags };
}

/** `Tagging` with the tags in the given order. Pure. */
export function renderTagging(tags: readonly Tag[]): string {
  return xmlDocument(
    s3Root(
      'Tagging',
      el(
        'TagSet',
        tags.map((t) => el('Tag', leaf('Key', safe(t.key)), leaf('Value', safe(t.value))))
      )
    )
  );
}
