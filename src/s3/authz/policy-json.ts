/**
 * @module A strict JSON reader for bucket policies.
 *
 * `JSON.parse` is not strict enough for a document that grants access: it silently keeps the
 * last of duplicated member names (`{"Effect":"Deny","Effect":"Allow"}` reads as Allow while a
 * human or another tool reads Deny), turns `"__proto__"` members into prototype changes when
 * copied naively, and accepts lone surrogates. This reader follows RFC 8259 exactly and, on
 * top of it, refuses duplicate member names, lone surrogates (escaped or not) and nesting
 * deeper than a policy can need. Objects come back as `Map`s (member order kept, no prototype).
 *
 * It is bounded: the caller caps the input (20 KB for a policy), nesting is capped by
 * {@link MAX_POLICY_JSON_DEPTH}, and the scan is one linear pass.
 */

/** A parsed JSON value; objects are Maps so no member name can reach a prototype. */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
export type JsonObject = Map<string, JsonValue>;

/**
 * Deepest nesting accepted. A policy needs 5 (document, Statement list, statement, Condition,
 * operator block, value list = 6 levels counting the value list); 16 leaves room and still
 * keeps the recursion trivially small.
 */
export const MAX_POLICY_JSON_DEPTH = 16;

/** A JSON syntax error, with the character offset where it was found. */
export class PolicyJsonError extends Error {
  override readonly name = 'PolicyJsonError';
  readonly offset: number;
  constructor(message: string, offset: number) {
    super(`${message} at offset ${offset}`);
    this.offset = offset;
  }
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const SIMPLE_ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

class Reader {
  readonly #s: string;
  #i = 0;

  constructor(s: string) {
    this.#s = s;
  }

  fail(message: string): never {
    throw new PolicyJsonError(message, this.#i);
  }

  skipWs(): void {
    while (this.#i < this.#s.length && WS.has(this.#s.charCodeAt(this.#i))) this.#i++;
  }

  atEnd(): boolean {
    return this.#i >= this.#s.length;
  }

  value(depth: number): JsonValue {
    if (depth > MAX_POLICY_JSON_DEPTH) this.fail(`nesting deeper than ${MAX_POLICY_JSON_DEPTH}`);
    this.skipWs();
    const c = this.#s[this.#i];
    switch (c) {
      case '{':
        return this.object(depth);
      case '[':
        return this.array(depth);
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
        return this.fail(c === undefined ? 'unexpected end of input' : `unexpected character ${JSON.stringify(c)}`);
    }
  }

  literal<T>(word: string, v: T): T {
    if (!this.#s.startsWith(word, this.#i)) this.fail('invalid literal');
    this.#i += word.length;
    return v;
  }

  number(): number {
    NUMBER.lastIndex = this.#i;
    const m = NUMBER.exec(this.#s);
    if (!m) this.fail('invalid number');
    this.#i += m[0].length;
    const n = Number(m[0]);
    if (!Number.isFinite(n)) this.fail('number out of range');
    return n;
  }

  string(): string {
    this.#i++; // opening quote
    let out = '';
    let start = this.#i;
    for (;;) {
      if (this.#i >= this.#s.length) this.fail('unterminated string');
      const code = this.#s.charCodeAt(this.#i);
      if (code === 0x22) {
        out += this.#s.slice(start, this.#i);
        this.#i++;
        break;
      }
      if (code < 0x20) this.fail('control character in string');
      if (code === 0x5c) {
        out += this.#s.slice(start, this.#i);
        out += this.escape();
        start = this.#i;
        continue;
      }
      this.#i++;
    }
    if (LONE_SURROGATE.test(out)) this.fail('lone surrogate in string');
    return out;
  }

  escape(): string {
    const e = this.#s[this.#i + 1];
    if (e === undefined) this.fail('unterminated escape');
    if (e !== 'u') {
      const v = SIMPLE_ESCAPES[e];
      if (v === undefined) this.fail(`invalid escape \\${e}`);
      this.#i += 2;
      return v;
    }
    const hex = this.#s.slice(this.#i + 2, this.#i + 6);
    if (!/^[0-9A-Fa-f]{4}$/.test(hex)) this.fail('invalid \\u escape');
    this.#i += 6;
    return String.fromCharCode(parseInt(hex, 16));
  }

  array(depth: number): JsonValue[] {
    this.#i++;
    const out: JsonValue[] = [];
    this.skipWs();
    if (this.#s[this.#i] === ']') {
      this.#i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth + 1));
      this.skipWs();
      const c = this.#s[this.#i++];
      if (c === ']') return out;
      if (c !== ',') this.fail('expected , or ] in array');
    }
  }

  object(depth: number): JsonObject {
    this.#i++;
    const out: JsonObject = new Map();
    this.skipWs();
    if (this.#s[this.#i] === '}') {
      this.#i++;
      return out;
    }
    for (;;) {
      this.skipWs();
      if (this.#s[this.#i] !== '"') this.fail('expected a member name');
      const at = this.#i;
      const name = this.string();
      if (out.has(name)) throw new PolicyJsonError(`duplicate member ${JSON.stringify(name)}`, at);
      this.skipWs();
      if (this.#s[this.#i++] !== ':') this.fail('expected : after member name');
      out.set(name, this.value(depth + 1));
      this.skipWs();
      const c = this.#s[this.#i++];
      if (c === '}') return out;
      if (c !== ',') this.fail('expected , or } in object');
    }
  }
}

/**
 * Parses one JSON text (RFC 8259), strictly: duplicate member names, lone surrogates,
 * nesting deeper than {@link MAX_POLICY_JSON_DEPTH} and trailing content are errors. Pure.
 * Throws PolicyJsonError. The caller bounds the input size.
 */
export function parseStrictJson(text: string): JsonValue {
  const r = new Reader(text);
  const v = r.value(1);
  r.skipWs();
  if (!r.atEnd()) r.fail('content after the JSON value');
  return v;
}
