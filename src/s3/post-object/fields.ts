/**
 * @module POST Object form fields as the request headers they stand for, so the form's
 * object goes through the same write path as PutObject (putFromHeaders) and every check
 * keyed on headers (metadata limits, ACLs, encryption, fail-closed refusals) applies.
 *
 *   Content-Type, Cache-Control, Content-Disposition, Content-Encoding,
 *   Content-Language, Expires                    -> the same header
 *   acl                                          -> x-amz-acl
 *   tagging (a <Tagging> XML document)           -> x-amz-tagging (k=v&..., URL-encoded)
 *   x-amz-* (meta, checksum, server-side
 *   encryption, storage class, object lock, ...) -> the same header
 *
 * The form's own authentication fields (x-amz-algorithm, -credential, -date, -signature,
 * -security-token) and the form controls (key, policy, success_action_*, redirect, file,
 * bucket, x-ignore-*) are not headers. Values keep the header convention of Node's parser:
 * surrounding spaces and tabs dropped, no control characters, one character per byte of
 * their UTF-8 text, so every check keyed on headers reads a form as it reads a request.
 */
import { parseTagging } from '../xml/index.js';
import { S3Error } from '../errors.js';

/** Fields that become the header of the same name. */
const STANDARD_HEADERS = new Set(['content-type', 'cache-control', 'content-disposition', 'content-encoding', 'content-language', 'expires']);

/** x-amz-* fields that authenticate the form, never object headers. */
const AUTH_FIELDS = new Set(['x-amz-algorithm', 'x-amz-credential', 'x-amz-date', 'x-amz-signature', 'x-amz-security-token']);

/** Characters no header value can carry (controls other than HTAB): HTTP refuses them on the wire. */
const NOT_IN_HEADER = /[\x00-\x08\x0a-\x1f\x7f]/;

/**
 * Field `name`'s text as Node would deliver it as a header value: surrounding spaces and
 * tabs stripped (HTTP's optional whitespace; otherwise `acl = "public-read "` slipped past a
 * policy condition on s3:x-amz-acl while the ACL set was `public-read`), one character per
 * UTF-8 byte. Throws S3Error InvalidArgument for a character no header could carry (a CR or
 * LF in Content-Disposition was stored and then made every GET of the object fail).
 */
function asHeader(name: string, text: string): string {
  if (NOT_IN_HEADER.test(text)) {
    throw new S3Error('InvalidArgument', `POST form field "${name}" holds a control character a header cannot carry`, { ArgumentName: name, ArgumentValue: '' });
  }
  return Buffer.from(text.replace(/^[ \t]+|[ \t]+$/g, ''), 'utf8').toString('latin1');
}

/** URL encoding for tag keys and values in x-amz-tagging (RFC 3986 unreserved kept). */
const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The header record of a form (fields by lower-case name, values as text). Pure. Throws
 * S3Error MalformedXML / InvalidTag for a bad `tagging` document, InvalidArgument for a
 * value holding a control character.
 */
export function headersFromFields(fields: ReadonlyMap<string, string>): Record<string, string> {
  const h: Record<string, string> = {};
  for (const [name, value] of fields) {
    // An empty Content-Type field leaves S3's default type (binary/octet-stream).
    if (name === 'content-type' && value.trim() === '') continue;
    if (STANDARD_HEADERS.has(name) || (name.startsWith('x-amz-') && !AUTH_FIELDS.has(name))) h[name] = asHeader(name, value);
  }
  const acl = fields.get('acl');
  if (acl !== undefined) h['x-amz-acl'] = asHeader('acl', acl);
  const tagging = fields.get('tagging');
  if (tagging !== undefined && tagging.trim() !== '') {
    const { tags } = parseTagging(Buffer.from(tagging, 'utf8'));
    h['x-amz-tagging'] = tags.map((t) => `${enc(t.key)}=${enc(t.value)}`).join('&');
  }
  return h;
}
