/**
 * The policy's strict JSON reader and its wildcard matcher: agreement with JSON.parse and
 * with a regular-expression reference on seeded grids, and refusal of malformed, truncated,
 * hostile and pathological input.
 */
import { describe, expect, it } from 'vitest';
import { MAX_POLICY_JSON_DEPTH, parseStrictJson, PolicyJsonError, type JsonValue } from '../../../src/s3/authz/policy-json.js';
import { compileGlob, globCanStartWith, globMatch, MatchBudgetExceeded, MAX_MATCH_STEPS, withMatchBudget } from '../../../src/s3/authz/policy-match.js';
import { prng, randInt } from '../../support/random.js';

/** A parsed value as plain JSON data (Maps become objects) to compare with JSON.parse. */
function plain(v: JsonValue): unknown {
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, plain(x)]));
  if (Array.isArray(v)) return v.map(plain);
  return v;
}

const SAMPLES = [
  '{}',
  '[]',
  '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}',
  ' { "a" : [ 1 , -2.5e3 , 0 , 0.125 , true , false , null ] , "b" : { "c" : "\\u00e9\\n\\t\\"\\\\\\/" } } ',
  '"\\ud83d\\ude00 emoji"',
  '-0',
  '1E-7',
  '{"__proto__":{"polluted":1},"constructor":"x"}',
];

describe('strict JSON reader', () => {
  it('reads what JSON.parse reads, objects as Maps', () => {
    for (const s of SAMPLES) expect(plain(parseStrictJson(s)), s).toEqual(JSON.parse(s));
  });

  it('"__proto__" is an ordinary member, never a prototype', () => {
    const v = parseStrictJson('{"__proto__":{"polluted":1}}') as Map<string, JsonValue>;
    expect(v).toBeInstanceOf(Map);
    expect(v.get('__proto__')).toBeInstanceOf(Map);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses duplicate member names (JSON.parse would keep the last silently)', () => {
    for (const s of ['{"Effect":"Deny","Effect":"Allow"}', '{"a":{"b":1,"b":1}}', '[{"x":1,"y":2,"x":3}]', '{"a":1,"\\u0061":2}']) {
      expect(() => parseStrictJson(s), s).toThrow(PolicyJsonError);
    }
  });

  it('refuses lone surrogates, escaped or raw', () => {
    for (const s of ['"\\ud800"', '"\\udc00x"', '"a\\ud83d"', `"${'\ud800'}"`]) expect(() => parseStrictJson(s), s).toThrow(PolicyJsonError);
    expect(parseStrictJson('"\\ud83d\\ude00"')).toBe('\u{1F600}');
  });

  it('refuses what RFC 8259 does not allow', () => {
    const bad = [
      '',
      ' ',
      '{',
      '{"a"}',
      '{"a":}',
      '{a:1}',
      "{'a':1}",
      '{"a":1,}',
      '[1,]',
      '[,1]',
      '01',
      '1.',
      '.5',
      '+1',
      '1e',
      'NaN',
      'Infinity',
      '-Infinity',
      'tru',
      'nulls',
      '"\\x41"',
      '"\\u12"',
      '"tab\there"',
      '"nl\nhere"',
      '{} {}',
      '{}x',
      '/* c */ {}',
      '1e400',
      '\ufeff{}',
    ];
    for (const s of bad) expect(() => parseStrictJson(s), JSON.stringify(s)).toThrow(PolicyJsonError);
  });

  it('every proper prefix of a valid document is refused (truncation)', () => {
    const doc = SAMPLES[2]!;
    for (let n = 0; n < doc.length; n++) expect(() => parseStrictJson(doc.slice(0, n)), `prefix ${n}`).toThrow(PolicyJsonError);
  });

  it('nesting is capped: depth 16 reads, 17 is refused, 100,000 brackets fail fast without recursion trouble', () => {
    const nest = (d: number) => '['.repeat(d) + ']'.repeat(d);
    expect(() => parseStrictJson(nest(MAX_POLICY_JSON_DEPTH))).not.toThrow();
    expect(() => parseStrictJson(nest(MAX_POLICY_JSON_DEPTH + 1))).toThrow(/nesting/);
    const t = performance.now();
    expect(() => parseStrictJson('['.repeat(100_000))).toThrow(PolicyJsonError);
    expect(() => parseStrictJson('{"a":'.repeat(50_000))).toThrow(PolicyJsonError);
    expect(performance.now() - t).toBeLessThan(500);
  });

  it('seeded mutations: it either refuses with PolicyJsonError or agrees with JSON.parse', () => {
    const next = prng(20261201);
    const alphabet = '{}[]",:\\u0123456789abcdefEtrnl -.+\u00e9';
    let accepted = 0;
    for (let i = 0; i < 3000; i++) {
      const base = SAMPLES[next() % SAMPLES.length]!;
      const chars = [...base];
      const edits = randInt(next, 1, 3);
      for (let e = 0; e < edits; e++) {
        const at = next() % (chars.length + 1);
        const op = next() % 3;
        const c = alphabet[next() % alphabet.length]!;
        if (op === 0) chars.splice(at, 0, c);
        else if (op === 1) chars.splice(at, 1);
        else chars[at] = c;
      }
      const s = chars.join('');
      let ours: unknown;
      try {
        ours = plain(parseStrictJson(s));
      } catch (err) {
        expect(err, s).toBeInstanceOf(PolicyJsonError);
        continue;
      }
      accepted++;
      expect(ours, s).toEqual(JSON.parse(s));
    }
    expect(accepted).toBeGreaterThan(50);
  });
});

/** Reference: the pattern as an anchored regular expression over code points. */
function reference(pattern: string, text: string, ignoreCase = false): boolean {
  const body = [...pattern].map((c) => (c === '*' ? '[\\s\\S]*' : c === '?' ? '[\\s\\S]' : c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`, ignoreCase ? 'iu' : 'u').test(text);
}

describe('policy wildcards', () => {
  it('agree with a regular-expression reference on a seeded grid (stars, question marks, slashes, emoji)', () => {
    const next = prng(77);
    const atoms = ['a', 'b', '/', '*', '?', '\u{1F600}', 'é'];
    const textAtoms = ['a', 'b', '/', '\u{1F600}', 'é', 'ab'];
    for (let i = 0; i < 4000; i++) {
      const pattern = Array.from({ length: randInt(next, 0, 7) }, () => atoms[next() % atoms.length]).join('');
      const text = Array.from({ length: randInt(next, 0, 8) }, () => textAtoms[next() % textAtoms.length]).join('');
      expect(globMatch(compileGlob(pattern), text), `${pattern} ~ ${text}`).toBe(reference(pattern, text));
    }
  });

  it('long segments with ? (the multi-word bit-parallel scan) agree with the reference', () => {
    const next = prng(4242);
    for (let i = 0; i < 400; i++) {
      // Texts over a two-letter alphabet make near-misses everywhere; segments of 20..120.
      const text = Array.from({ length: randInt(next, 0, 300) }, () => 'ab'[next() % 2]).join('');
      const seg = () => Array.from({ length: randInt(next, 20, 120) }, () => 'ab?'[next() % 3]).join('');
      const pattern = ['', seg(), seg(), ''].slice(0, randInt(next, 2, 4)).join('*');
      // Often plant the pattern (with ? and * filled in) so matches happen too.
      const planted = next() % 2 === 0 ? pattern.replace(/\?/g, () => 'ab'[next() % 2]).replace(/\*/g, () => text.slice(0, next() % 5)) : text;
      const g = compileGlob(pattern);
      expect(globMatch(g, planted), `${pattern} ~ ${planted}`).toBe(reference(pattern, planted));
    }
  });

  it('matching has a budget: past it, MatchBudgetExceeded (the policy then denies)', () => {
    const g = compileGlob('*' + 'a'.repeat(500) + '?b*');
    const text = 'a'.repeat(1024);
    expect(() => withMatchBudget(MAX_MATCH_STEPS, () => globMatch(g, text))).not.toThrow();
    expect(() => withMatchBudget(MAX_MATCH_STEPS, () => { for (let i = 0; i < 40; i++) globMatch(g, text); })).toThrow(MatchBudgetExceeded);
    // The budget is per evaluation: a fresh one starts full, and none applies outside.
    expect(() => withMatchBudget(MAX_MATCH_STEPS, () => globMatch(g, text))).not.toThrow();
    for (let i = 0; i < 40; i++) globMatch(g, text);
  });

  it('edge cases: empty, only stars, ? is one code point, case folding only when asked', () => {
    expect(globMatch(compileGlob(''), '')).toBe(true);
    expect(globMatch(compileGlob(''), 'a')).toBe(false);
    expect(globMatch(compileGlob('*'), '')).toBe(true);
    expect(globMatch(compileGlob('**'), 'any/thing')).toBe(true);
    expect(globMatch(compileGlob('?'), '\u{1F600}')).toBe(true);
    expect(globMatch(compileGlob('??'), '\u{1F600}')).toBe(false);
    expect(globMatch(compileGlob('bucket/*'), 'bucket')).toBe(false);
    expect(globMatch(compileGlob('bucket/*'), 'bucket/')).toBe(true);
    expect(globMatch(compileGlob('Bucket/*'), 'bucket/k')).toBe(false);
    expect(globMatch(compileGlob('s3:get*', true), 's3:GetObject')).toBe(true);
    expect(globMatch(compileGlob('S3:GETOBJECT', true), 's3:getobject')).toBe(true);
    expect(globMatch(compileGlob('a*b*c'), 'aXbYbZc')).toBe(true);
    expect(globMatch(compileGlob('a*b*c'), 'acb')).toBe(false);
  });

  it('a pathological pattern against a maximal key stays cheap (no backtracking, bit-parallel ?)', () => {
    const pattern = 'a*'.repeat(1000) + 'b';
    const text = 'a'.repeat(1024);
    const g = compileGlob(pattern);
    const t = performance.now();
    for (let i = 0; i < 100; i++) expect(globMatch(g, text)).toBe(false);
    const q = compileGlob('?*'.repeat(500) + 'b');
    expect(globMatch(q, text)).toBe(false);
    expect(performance.now() - t).toBeLessThan(1000);
  });

  it('globCanStartWith agrees with a brute force over short suffixes', () => {
    const next = prng(5);
    const atoms = ['a', 'b', '/', '*', '?'];
    for (let i = 0; i < 600; i++) {
      const pattern = Array.from({ length: randInt(next, 0, 5) }, () => atoms[next() % atoms.length]).join('');
      const prefix = Array.from({ length: randInt(next, 0, 3) }, () => 'ab/'[next() % 3]).join('');
      const g = compileGlob(pattern);
      // Any matching string is at most as long as prefix + the pattern's literals, with
      // characters from the pattern plus one other: enumerate suffixes up to that length.
      const alphabet = ['a', 'b', '/', 'z'];
      let brute = false;
      const walk = (suffix: string, depth: number) => {
        if (brute) return;
        if (globMatch(g, prefix + suffix)) brute = true;
        if (depth === 0) return;
        for (const c of alphabet) walk(suffix + c, depth - 1);
      };
      walk('', pattern.length);
      expect(globCanStartWith(g, prefix), `${pattern} starts with ${prefix}`).toBe(brute);
    }
  });
});
