/**
 * @module Bucket policies: validation of the JSON document a client stores with
 * PutBucketPolicy, and its compiled form.
 *
 * What Strata implements of the policy language:
 * - `Version` 2012-10-17 or 2008-10-17 (default), optional `Id`, `Statement` (one object or
 *   a non-empty list), each with optional unique `Sid`, `Effect` Allow | Deny;
 * - `Principal`: `"*"`, `{"AWS": ...}` or `{"CanonicalUser": ...}` naming `*` or access key
 *   ids, bare or as `arn:aws:iam::<key id>:root` / `arn:aws:iam::<account>:user/<key id>`;
 *   `NotPrincipal` only in Deny statements (S3 refuses it with Allow);
 * - `Action` / `NotAction`: `*` or `s3:<name>` with `*`/`?` wildcards, case-insensitive, each
 *   naming at least one S3 action (policy-actions.ts);
 * - `Resource` / `NotResource`: `*` or `arn:aws:s3:::<bucket>[/<key pattern>]` with wildcards;
 *   a Resource must be able to name this bucket or something in it (S3: a bucket policy
 *   covers one bucket);
 * - `Condition`: the operators and keys of policy-conditions.ts.
 *
 * Everything else — unknown members, other principal types (Service, Federated), policy
 * variables, unsupported condition operators or keys — is refused with `MalformedPolicy`
 * rather than ignored. Size: at most {@link MAX_POLICY_BYTES}, S3's limit.
 */
import { S3Error } from '../errors.js';
import { parseStrictJson, PolicyJsonError, type JsonObject, type JsonValue } from './policy-json.js';
import { compileGlob, globCanStartWith, globMatch, type Glob } from './policy-match.js';
import { S3_ACTIONS } from './policy-actions.js';
import { compileCondition, ConditionError, type Condition } from './policy-conditions.js';

/** S3's bucket policy size limit: 20 KB. */
export const MAX_POLICY_BYTES = 20 * 1024;

export type Effect = 'Allow' | 'Deny';

export interface PolicyStatement {
  sid?: string;
  effect: Effect;
  /** `not`: NotPrincipal. `any`: `*` is listed. `ids`: access key ids listed. */
  principal: { not: boolean; any: boolean; ids: ReadonlySet<string> };
  /** Patterns over lower-cased `s3:action` names. */
  action: { not: boolean; globs: readonly Glob[] };
  /** Patterns over `bucket` or `bucket/key` (the ARN without `arn:aws:s3:::`). */
  resource: { not: boolean; globs: readonly Glob[] };
  conditions: readonly Condition[];
}

export interface BucketPolicy {
  version: string;
  id?: string;
  statements: readonly PolicyStatement[];
  /** Some condition reads the stored object's tags (s3:ExistingObjectTag/...). */
  readsObjectTags: boolean;
}

const ARN_PREFIX = 'arn:aws:s3:::';
const KEY_ID = /^[A-Za-z0-9._-]{1,128}$/;
const ROOT_ARN = /^arn:aws:iam::([A-Za-z0-9._-]{1,128}):root$/;
const USER_ARN = /^arn:aws:iam::[A-Za-z0-9._-]{0,128}:user\/(?:[\x21-\x7e]*\/)?([A-Za-z0-9._-]{1,128})$/;
const STATEMENT_FIELDS = new Set(['Sid', 'Effect', 'Principal', 'NotPrincipal', 'Action', 'NotAction', 'Resource', 'NotResource', 'Condition']);
const ACTION_NAMES = S3_ACTIONS.map((a) => a.toLowerCase());

const malformed = (message: string) => new S3Error('MalformedPolicy', message);

function isObject(v: JsonValue | undefined): v is JsonObject {
  return v instanceof Map;
}

/** A string or a non-empty list of strings. */
function stringList(v: JsonValue | undefined, what: string): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) return v as string[];
  throw malformed(`${what} must be a string or a non-empty list of strings`);
}

/** The key id a principal value names, `*`, or a MalformedPolicy error. */
function principalId(v: string): string {
  if (v === '*') return v;
  const m = ROOT_ARN.exec(v) ?? USER_ARN.exec(v);
  if (m) return m[1]!;
  if (KEY_ID.test(v)) return v;
  throw malformed(`Invalid principal in policy: ${JSON.stringify(v)}`);
}

function parsePrincipal(v: JsonValue | undefined, not: boolean): PolicyStatement['principal'] {
  const values: string[] = [];
  if (v === '*') values.push('*');
  else if (isObject(v) && v.size > 0) {
    for (const [type, list] of v) {
      if (type !== 'AWS' && type !== 'CanonicalUser') throw malformed(`Invalid principal in policy: principal type ${JSON.stringify(type)} is not supported`);
      values.push(...stringList(list, `Principal ${type}`));
    }
  } else throw malformed('Invalid principal in policy');
  const ids = new Set<string>();
  let any = false;
  for (const value of values) {
    const id = principalId(value);
    if (id === '*') any = true;
    else ids.add(id);
  }
  return { not, any, ids };
}

function parseActions(v: JsonValue | undefined): Glob[] {
  return stringList(v, 'Action').map((a) => {
    if (a === '*') return compileGlob('*');
    const lower = a.toLowerCase();
    if (!lower.startsWith('s3:') || lower.length === 3) throw malformed(`Policy has invalid action: ${JSON.stringify(a)}`);
    const g = compileGlob(lower, true);
    if (!ACTION_NAMES.some((n) => globMatch(g, n))) throw malformed(`Policy has invalid action: ${JSON.stringify(a)}`);
    return g;
  });
}

function parseResources(v: JsonValue | undefined, bucket: string, not: boolean, variables: boolean): Glob[] {
  return stringList(v, 'Resource').map((r) => {
    if (r === '*') return compileGlob('*');
    if (!r.startsWith(ARN_PREFIX) || r.length === ARN_PREFIX.length) throw malformed(`Policy has invalid resource: ${JSON.stringify(r)}`);
    if (variables && r.includes('${')) throw malformed(`Policy has invalid resource: policy variables are not supported (${JSON.stringify(r)})`);
    const g = compileGlob(r.slice(ARN_PREFIX.length));
    // S3: a bucket policy covers its own bucket and the objects in it, nothing else.
    if (!not && !globMatch(g, bucket) && !globCanStartWith(g, `${bucket}/`)) throw malformed(`Policy has invalid resource: ${JSON.stringify(r)}`);
    return g;
  });
}

function conditionValues(v: JsonValue | undefined, what: string): string[] {
  const list = Array.isArray(v) ? v : [v];
  if (list.length === 0) throw malformed(`${what} has no value`);
  return list.map((x) => {
    if (typeof x === 'string') return x;
    if (typeof x === 'number' || typeof x === 'boolean') return String(x);
    throw malformed(`${what} values must be strings, numbers or booleans`);
  });
}

function parseConditions(v: JsonValue | undefined, variables: boolean): Condition[] {
  if (v === undefined) return [];
  if (!isObject(v)) throw malformed('Condition must be an object');
  const out: Condition[] = [];
  for (const [operator, block] of v) {
    if (!isObject(block) || block.size === 0) throw malformed(`Condition ${operator} must map condition keys to values`);
    for (const [key, values] of block) {
      try {
        out.push(compileCondition(operator, key, conditionValues(values, `Condition ${operator} ${key}`), variables));
      } catch (err) {
        if (err instanceof ConditionError) throw malformed(err.message);
        throw err;
      }
    }
  }
  return out;
}

/** Exactly one of `name` / `Not<name>`. */
function pick(s: JsonObject, name: string): { not: boolean; value: JsonValue } {
  const a = s.get(name);
  const b = s.get(`Not${name}`);
  if (a !== undefined && b !== undefined) throw malformed(`Statement cannot have both ${name} and Not${name}`);
  if (a === undefined && b === undefined) throw malformed(`Missing required field ${name}`);
  return a !== undefined ? { not: false, value: a } : { not: true, value: b! };
}

function parseStatement(s: JsonValue, bucket: string, variables: boolean): PolicyStatement {
  if (!isObject(s)) throw malformed('Statement must be an object or a list of objects');
  for (const name of s.keys()) if (!STATEMENT_FIELDS.has(name)) throw malformed(`Unknown field ${name}`);
  const sid = s.get('Sid');
  if (sid !== undefined && typeof sid !== 'string') throw malformed('Sid must be a string');
  const effect = s.get('Effect');
  if (effect === undefined) throw malformed('Missing required field Effect');
  if (effect !== 'Allow' && effect !== 'Deny') throw malformed(`Invalid effect: ${typeof effect === 'string' ? effect : JSON.stringify(effect)}`);
  const p = pick(s, 'Principal');
  if (p.not && effect === 'Allow') throw malformed('NotPrincipal is not allowed with "Effect": "Allow"');
  const a = pick(s, 'Action');
  const r = pick(s, 'Resource');
  const statement: PolicyStatement = {
    effect,
    principal: parsePrincipal(p.value, p.not),
    action: { not: a.not, globs: parseActions(a.value) },
    resource: { not: r.not, globs: parseResources(r.value, bucket, r.not, variables) },
    conditions: parseConditions(s.get('Condition'), variables),
  };
  if (sid !== undefined) statement.sid = sid;
  return statement;
}

/**
 * Validates and compiles the policy `bytes` stored on `bucket`. Pure. Throws S3Error
 * `MalformedPolicy` (size, invalid UTF-8 or JSON, any unsupported or invalid element).
 */
export function parseBucketPolicy(bytes: Uint8Array, bucket: string): BucketPolicy {
  if (bytes.length > MAX_POLICY_BYTES) throw malformed(`Policies must be smaller than ${MAX_POLICY_BYTES} bytes (20 KB)`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw malformed('Policies must be valid UTF-8 JSON');
  }
  let doc: JsonValue;
  try {
    doc = parseStrictJson(text);
  } catch (err) {
    if (err instanceof PolicyJsonError) throw malformed(`Policies must be valid JSON and the first byte must be '{' (${err.message})`);
    throw err;
  }
  if (!isObject(doc)) throw malformed("Policies must be valid JSON and the first byte must be '{'");
  for (const name of doc.keys()) if (name !== 'Version' && name !== 'Id' && name !== 'Statement') throw malformed(`Unknown field ${name}`);
  const version = doc.get('Version') ?? '2008-10-17';
  if (version !== '2012-10-17' && version !== '2008-10-17') throw malformed(`The policy language version ${JSON.stringify(version)} is not supported`);
  const id = doc.get('Id');
  if (id !== undefined && typeof id !== 'string') throw malformed('Id must be a string');
  const raw = doc.get('Statement');
  if (raw === undefined) throw malformed('Missing required field Statement');
  const list = Array.isArray(raw) ? raw : [raw];
  if (list.length === 0) throw malformed('Statement must not be empty');
  const statements = list.map((s) => parseStatement(s, bucket, version === '2012-10-17'));
  const sids = new Set<string>();
  for (const s of statements) {
    if (s.sid === undefined || s.sid === '') continue;
    if (sids.has(s.sid)) throw malformed(`Statement IDs (SID) in a single policy must be unique: ${JSON.stringify(s.sid)}`);
    sids.add(s.sid);
  }
  const policy: BucketPolicy = {
    version,
    statements,
    readsObjectTags: statements.some((s) => s.conditions.some((c) => c.key.startsWith('s3:existingobjecttag/'))),
  };
  if (id !== undefined) policy.id = id;
  return policy;
}
