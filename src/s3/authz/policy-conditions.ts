/**
 * @module Policy Condition blocks: the operators and keys Strata implements, their
 * validation when a policy is stored, and their evaluation against a request.
 *
 * Fail closed: an operator or key that is not implemented here makes the whole policy
 * invalid (MalformedPolicy) instead of being ignored, because an ignored condition could grant
 * more (in an Allow) or deny less (in a Deny) than written. The same holds for an operator
 * applied to a key of another type (IpAddress on a header, a date compared with a number).
 *
 * Semantics (IAM user guide, "Condition operators"): values listed for one key are ORed, keys
 * and operators are ANDed; a key absent from the request makes a positive operator false and
 * a negated one (StringNotEquals, NotIpAddress...) true; `...IfExists` is true when the key is
 * absent; `Null` tests presence; `ForAnyValue:` / `ForAllValues:` compare every request value
 * of a multi-valued key (ForAllValues is true when the key is absent or empty).
 *
 * A request value that cannot be known when access is decided (tags in a body not yet read)
 * is {@link UNKNOWN}: the statement holding that condition then counts as matching when it
 * denies and as not matching when it allows.
 */
import { BlockList, isIP } from 'node:net';
import { compileGlob, globMatch, type Glob } from './policy-match.js';

/** The value types of condition keys. `epoch` (aws:EpochTime) compares as a date or a number. */
type KeyType = 'string' | 'numeric' | 'date' | 'epoch' | 'bool' | 'ip';

/** Supported keys by lower-cased name; names ending in `/` take a tag key after them. */
const KEYS: ReadonlyMap<string, KeyType> = new Map<string, KeyType>([
  ['aws:sourceip', 'ip'],
  ['aws:securetransport', 'bool'],
  ['aws:currenttime', 'date'],
  ['aws:epochtime', 'epoch'],
  ['aws:referer', 'string'],
  ['aws:useragent', 'string'],
  ['aws:principaltype', 'string'],
  ['s3:prefix', 'string'],
  ['s3:delimiter', 'string'],
  ['s3:max-keys', 'numeric'],
  ['s3:authtype', 'string'],
  ['s3:signatureversion', 'string'],
  ['s3:requestobjecttagkeys', 'string'],
  ['s3:existingobjecttag/', 'string'],
  ['s3:requestobjecttag/', 'string'],
  ...[
    'acl',
    'copy-source',
    'metadata-directive',
    'server-side-encryption',
    'server-side-encryption-aws-kms-key-id',
    'server-side-encryption-customer-algorithm',
    'storage-class',
    'content-sha256',
    'grant-read',
    'grant-write',
    'grant-read-acp',
    'grant-write-acp',
    'grant-full-control',
  ].map((h): [string, KeyType] => [`s3:x-amz-${h}`, 'string']),
]);

/** Request values of a key: absent (undefined), known (a list), or not knowable now. */
export const UNKNOWN: unique symbol = Symbol('unknown condition value');
export type ContextValue = readonly string[] | undefined | typeof UNKNOWN;

/** The request as conditions see it, by canonical key name (see {@link canonicalKey}). */
export interface ConditionContext {
  get(key: string): ContextValue;
}

type Kind = 'string' | 'numeric' | 'date' | 'bool' | 'ip' | 'null';
type Compare = 'eq' | 'eqi' | 'like' | 'lt' | 'le' | 'gt' | 'ge';

const OPERATORS: ReadonlyMap<string, { kind: Kind; cmp: Compare; negated: boolean }> = (() => {
  const m = new Map<string, { kind: Kind; cmp: Compare; negated: boolean }>();
  const add = (name: string, kind: Kind, cmp: Compare, negated = false) => m.set(name, { kind, cmp, negated });
  add('StringEquals', 'string', 'eq');
  add('StringNotEquals', 'string', 'eq', true);
  add('StringEqualsIgnoreCase', 'string', 'eqi');
  add('StringNotEqualsIgnoreCase', 'string', 'eqi', true);
  add('StringLike', 'string', 'like');
  add('StringNotLike', 'string', 'like', true);
  for (const kind of ['numeric', 'date'] as const) {
    const p = kind === 'numeric' ? 'Numeric' : 'Date';
    add(`${p}Equals`, kind, 'eq');
    add(`${p}NotEquals`, kind, 'eq', true);
    add(`${p}LessThan`, kind, 'lt');
    add(`${p}LessThanEquals`, kind, 'le');
    add(`${p}GreaterThan`, kind, 'gt');
    add(`${p}GreaterThanEquals`, kind, 'ge');
  }
  add('Bool', 'bool', 'eq');
  add('IpAddress', 'ip', 'eq');
  add('NotIpAddress', 'ip', 'eq', true);
  add('Null', 'null', 'eq');
  return m;
})();

/** One compiled (operator, key, values) test. */
export interface Condition {
  /** The operator as written, e.g. `ForAnyValue:StringLikeIfExists`. */
  operator: string;
  kind: Kind;
  cmp: Compare;
  negated: boolean;
  ifExists: boolean;
  set?: 'any' | 'all';
  /** Canonical key name. */
  key: string;
  strings: string[];
  globs: Glob[];
  /** Numbers, or dates as ms since the epoch. */
  numbers: number[];
  /** IpAddress: the networks; `cidrs` keeps their prefix lengths for the public check. */
  networks?: BlockList;
  cidrs: { family: 'ipv4' | 'ipv6'; prefix: number }[];
}

/** A condition problem, reported by the policy parser as MalformedPolicy. */
export class ConditionError extends Error {
  override readonly name = 'ConditionError';
}

/**
 * The canonical form of a key name (lower-cased; a tag key after `ExistingObjectTag/` or
 * `RequestObjectTag/` keeps its case, tag keys being case-sensitive), or undefined when the
 * key is not supported. Pure.
 */
export function canonicalKey(name: string): { key: string; type: KeyType } | undefined {
  const lower = name.toLowerCase();
  const slash = lower.indexOf('/');
  if (slash >= 0) {
    const type = KEYS.get(lower.slice(0, slash + 1));
    const tag = name.slice(slash + 1);
    return type && tag !== '' ? { key: lower.slice(0, slash + 1) + tag, type } : undefined;
  }
  const type = KEYS.get(lower);
  return type ? { key: lower, type } : undefined;
}

function compatible(kind: Kind, type: KeyType): boolean {
  switch (kind) {
    case 'null':
      return true;
    case 'string':
      return type === 'string';
    case 'numeric':
      return type === 'numeric' || type === 'epoch';
    case 'date':
      return type === 'date' || type === 'epoch';
    case 'bool':
      return type === 'bool';
    case 'ip':
      return type === 'ip';
  }
}

/** ISO 8601 date or date-time (what IAM accepts besides epoch seconds). */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function dateMs(v: string): number | undefined {
  if (/^\d{1,12}$/.test(v)) return Number(v) * 1000;
  if (!ISO_DATE.test(v)) return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : undefined;
}

function numberOf(v: string): number | undefined {
  if (!/^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(v.trim())) return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** `1.2.3.4`, `1.2.3.0/24`, `2001:db8::/32` → family and prefix, or undefined. */
function parseCidr(v: string): { address: string; family: 'ipv4' | 'ipv6'; prefix: number } | undefined {
  const slash = v.indexOf('/');
  const address = slash < 0 ? v : v.slice(0, slash);
  const version = isIP(address);
  if (version === 0) return undefined;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const max = version === 4 ? 32 : 128;
  if (slash < 0) return { address, family, prefix: max };
  const p = v.slice(slash + 1);
  if (!/^\d{1,3}$/.test(p) || Number(p) > max) return undefined;
  return { address, family, prefix: Number(p) };
}

/**
 * Compiles one (operator, key, values) entry of a Condition block. `values` are the JSON
 * scalars as strings. `variables`: the policy language version gives `${...}` a meaning
 * (2012-10-17), which Strata does not implement, so such values are refused. Pure. Throws
 * ConditionError naming what is unsupported or invalid.
 */
export function compileCondition(operator: string, keyName: string, values: readonly string[], variables: boolean): Condition {
  let name = operator;
  let set: 'any' | 'all' | undefined;
  if (name.startsWith('ForAnyValue:')) [set, name] = ['any', name.slice('ForAnyValue:'.length)];
  else if (name.startsWith('ForAllValues:')) [set, name] = ['all', name.slice('ForAllValues:'.length)];
  const ifExists = name.endsWith('IfExists') && name !== 'IfExists';
  if (ifExists) name = name.slice(0, -'IfExists'.length);
  const op = OPERATORS.get(name);
  if (!op) throw new ConditionError(`condition operator ${operator} is not supported`);
  if (op.kind === 'null' && (ifExists || set)) throw new ConditionError(`condition operator ${operator} is not valid`);
  const k = canonicalKey(keyName);
  if (!k) throw new ConditionError(`condition key ${keyName} is not supported`);
  if (!compatible(op.kind, k.type)) throw new ConditionError(`condition operator ${operator} cannot be used with key ${keyName}`);
  if (values.length === 0) throw new ConditionError(`condition ${operator} on ${keyName} has no value`);
  const c: Condition = { operator, ...op, ifExists, key: k.key, strings: [], globs: [], numbers: [], cidrs: [] };
  if (set) c.set = set;
  for (const v of values) {
    if (variables && v.includes('${')) throw new ConditionError(`policy variables are not supported (condition ${operator} on ${keyName})`);
    switch (op.kind) {
      case 'string':
        c.strings.push(op.cmp === 'eqi' ? v.toLowerCase() : v);
        if (op.cmp === 'like') c.globs.push(compileGlob(v));
        break;
      case 'numeric':
      case 'date': {
        const n = op.kind === 'numeric' ? numberOf(v) : dateMs(v.trim());
        if (n === undefined) throw new ConditionError(`condition ${operator} on ${keyName}: ${JSON.stringify(v)} is not a valid ${op.kind}`);
        c.numbers.push(n);
        break;
      }
      case 'bool':
      case 'null': {
        const b = v.toLowerCase();
        if (b !== 'true' && b !== 'false') throw new ConditionError(`condition ${operator} on ${keyName}: ${JSON.stringify(v)} is not true or false`);
        c.strings.push(b);
        break;
      }
      case 'ip': {
        const cidr = parseCidr(v);
        if (!cidr) throw new ConditionError(`condition ${operator} on ${keyName}: ${JSON.stringify(v)} is not an IP address or CIDR`);
        c.networks ??= new BlockList();
        c.networks.addSubnet(cidr.address, cidr.prefix, cidr.family);
        c.cidrs.push({ family: cidr.family, prefix: cidr.prefix });
        break;
      }
    }
  }
  return c;
}

/** Normalises a socket address: an IPv4-mapped IPv6 address becomes plain IPv4. */
function ipOf(v: string): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(v);
  const address = mapped ? mapped[1]! : v;
  const version = isIP(address);
  return version === 0 ? undefined : { address, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** Whether request value `v` satisfies the positive form of `c` for some policy value. */
function matchesOne(c: Condition, v: string): boolean {
  switch (c.kind) {
    case 'string':
      if (c.cmp === 'like') return c.globs.some((g) => globMatch(g, v));
      if (c.cmp === 'eqi') return c.strings.includes(v.toLowerCase());
      return c.strings.includes(v);
    case 'bool':
      return c.strings.includes(v.toLowerCase());
    case 'numeric':
    case 'date': {
      // Dates: ISO 8601 (aws:CurrentTime) or epoch seconds (aws:EpochTime), both in ms.
      const x = c.kind === 'numeric' ? numberOf(v) : dateMs(v);
      if (x === undefined) return false;
      return c.numbers.some((n) => (c.cmp === 'eq' ? x === n : c.cmp === 'lt' ? x < n : c.cmp === 'le' ? x <= n : c.cmp === 'gt' ? x > n : x >= n));
    }
    case 'ip': {
      const ip = ipOf(v);
      return !!ip && !!c.networks?.check(ip.address, ip.family);
    }
    case 'null':
      return false;
  }
}

/**
 * Evaluates `c` against the request. Pure. Returns `'unknown'` when the request value
 * cannot be known now (see {@link UNKNOWN}).
 */
export function evaluateCondition(c: Condition, ctx: ConditionContext): boolean | 'unknown' {
  const v = ctx.get(c.key);
  if (v === UNKNOWN) return 'unknown';
  const absent = v === undefined || v.length === 0;
  if (c.kind === 'null') return (c.strings[0] === 'true') === absent;
  if (absent) {
    if (c.ifExists || c.set === 'all') return true;
    if (c.set === 'any') return false;
    return c.negated;
  }
  const one = (x: string) => (c.negated ? !matchesOne(c, x) : matchesOne(c, x));
  if (c.set === 'all') return v.every(one);
  if (c.set === 'any') return v.some(one);
  return c.negated ? !v.some((x) => matchesOne(c, x)) : v.some((x) => matchesOne(c, x));
}

/**
 * Whether `c` confines a statement to a fixed set of networks (S3's "The meaning of public":
 * a policy limited to CIDRs with aws:SourceIp is not public). Strata counts a network as
 * fixed when it is no wider than /8 (IPv4) or /32 (IPv6): 0.0.0.0/1 still means everyone.
 */
export function confinesSourceIp(c: Condition): boolean {
  return (
    c.kind === 'ip' &&
    !c.negated &&
    !c.ifExists &&
    c.set === undefined &&
    c.key === 'aws:sourceip' &&
    c.cidrs.every((n) => n.prefix >= (n.family === 'ipv4' ? 8 : 32))
  );
}
