/**
 * @module Text of header values beyond ASCII, the way S3 treats user metadata.
 *
 * Node delivers a header value one character per wire byte (latin1). Clients send
 * non-ASCII values as UTF-8 (botocore, the SDKs, browsers) or as RFC 2047 encoded words
 * (`=?UTF-8?B?...?=`). S3 decodes both before storing user metadata and returns any value
 * that is not US-ASCII as an RFC 2047 encoded word, so the response header stays
 * mail-safe ASCII (https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingMetadata.html).
 */

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The text a header value carries: its wire bytes read as UTF-8 when they are valid UTF-8,
 * else as latin1 (one character per byte). ASCII values come back unchanged. Pure.
 */
export function headerText(value: string): string {
  if (!/[\u0080-\u00ff]/.test(value)) return value;
  const bytes = Buffer.from(value, 'latin1');
  try {
    return UTF8.decode(bytes);
  } catch {
    return value;
  }
}

/** One RFC 2047 encoded word: =?charset?B|Q?text?= (an optional *language after the charset). */
const ENCODED_WORD = /=\?([^?*\s]+)(?:\*[^?\s]*)?\?([BbQq])\?([^?\s]*)\?=/g;

function decodeWord(charset: string, encoding: string, text: string): string | undefined {
  let bytes: Uint8Array;
  if (encoding.toUpperCase() === 'B') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
    bytes = Buffer.from(text, 'base64');
  } else {
    const out: number[] = [];
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (c === '_') out.push(0x20);
      else if (c === '=') {
        const hex = text.slice(i + 1, i + 3);
        if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
        out.push(parseInt(hex, 16));
        i += 2;
      } else out.push(c.charCodeAt(0) & 0xff);
    }
    bytes = Uint8Array.from(out);
  }
  try {
    return new TextDecoder(charset.toLowerCase(), { fatal: true }).decode(bytes);
  } catch {
    return undefined; // an unknown charset or bytes it cannot decode: the word stays as sent
  }
}

/**
 * Decodes the RFC 2047 encoded words in `value` (whitespace between two adjacent encoded
 * words is dropped, as the RFC says); words that do not decode stay as they are. Pure.
 */
export function decodeEncodedWords(value: string): string {
  if (!value.includes('=?')) return value;
  let out = '';
  let last = 0;
  let previousWordEnd = -1;
  for (const m of value.matchAll(ENCODED_WORD)) {
    const decoded = decodeWord(m[1]!, m[2]!, m[3]!);
    if (decoded === undefined) continue;
    const between = value.slice(last, m.index);
    if (!(previousWordEnd === last && /^\s+$/.test(between))) out += between;
    out += decoded;
    last = m.index + m[0].length;
    previousWordEnd = last;
  }
  return out + value.slice(last);
}

/** A user metadata value as S3 stores it: wire bytes as text, encoded words decoded. Pure. */
export function metadataValueIn(value: string): string {
  return decodeEncodedWords(headerText(value));
}

/**
 * A stored user metadata value as S3 returns it: as is if printable US-ASCII, else one RFC
 * 2047 B word. Control characters count as not printable: an encoded word on the way in
 * may decode to a CR or LF, which no response header can carry (every GET and HEAD of the
 * object failed with 500). Pure.
 */
export function metadataValueOut(value: string): string {
  if (/^[\x20-\x7e\t]*$/.test(value)) return value;
  return `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}
