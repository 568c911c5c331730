/**
 * @module The erasure set-up from what an operator writes: `--data '/mnt/disk{1...6}'` (MinIO's
 * ellipsis convention, or a comma list of directories and URLs), `--erasure 4+2`, and the
 * config file's `erasure` section (labels, policy, sizes). Pure apart from resolving relative
 * directories against the working directory; nothing is opened or created here.
 *
 *   "erasure": { "k": 4, "m": 2, "cellSize": "256KiB", "stripeThreshold": "1MiB",
 *     "degradedWrites": false, "domainTimeout": "10s", "writeMemory": "256MiB",
 *     "domains": [ { "id": "d1", "url": "/mnt/disk1", "labels": { "zone": "z1" } }, … ],
 *     "policy": { "spread": [ { "label": "zone", "max": 1 } ], "allow": [...], "deny": [...] } }
 *
 * Every problem is an ErasureConfigError (a RangeError) whose message names the value and what
 * was expected; the placement check (placement.ts validatePolicy) runs last, so a policy the
 * domains cannot satisfy is refused here, at start-up, with its reason.
 */
import { isAbsolute, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OptionError, parseDuration, parseSize, type RawValue } from '../../server/option-types.js';
import { MAX_FRAGMENTS, PlacementError, validatePolicy } from './placement.js';
import type { DomainSpec, ErasureConfig, PlacementPolicy, SpreadRule } from './types.js';

/** A configuration that cannot be used; the message says which value and why. */
export class ErasureConfigError extends RangeError {
  override readonly name = 'ErasureConfigError';
}

/** Sizes and switches an erasure set-up has unless configured. */
export const ERASURE_DEFAULTS = {
  /** 256 KiB: a fragment's share of a stripe. Large enough that the codec runs at full speed
   * and a 1 MiB stripe at (4,2) is one write per domain; small enough that a ranged read of a
   * packed body touches little more than it needs. ec-core may retune after measuring. */
  cellSize: 256 * 1024,
  /** 1 MiB: below it a blob is replicated to m+1 domains (a few KiB striped k ways would cost
   * k+m writes of almost nothing each); at and above it, striped. */
  stripeThreshold: 1024 * 1024,
  /** Off: a write with too few healthy domains is refused rather than stored under-protected. */
  degradedWrites: false,
  /** 10 s: far above a healthy disk's or endpoint's worst answer, short enough that a hung
   * domain does not hold a request for long. */
  domainTimeoutMs: 10_000,
  /** 256 MiB: what the erasure writes in flight may hold in stripe buffers together (write-gate.ts):
   * 24 striped writes at (10,4) with 256 KiB cells, 56 at (4,2). */
  writeMemory: 256 * 1024 * 1024,
} as const;

/** Most domains one set may have: far above real sets (tens), and what bounds the expansion of
 * a brace pattern, so `{1...100000}` is refused before anything is built. */
export const MAX_DOMAINS = 1024;
/** Longest `--data` value or domain URL, characters (the option parser's limit too). */
const MAX_TEXT = 4096;
/** Labels per domain and the length of a label name or value. */
const MAX_LABELS = 32;
const MAX_LABEL_CHARS = 128;
const MAX_ID_CHARS = 64;
/** Cell size bounds: 4 KiB (smaller cells make the per-cell CRC and header overhead dominate)
 * to 64 MiB (a stripe of k cells is buffered whole); a multiple of 64 bytes (SIMD lanes). */
const MIN_CELL = 4096;
const MAX_CELL = 64 * 1024 * 1024;
const CELL_ALIGN = 64;
/** Domain timeout bounds, ms: 100 ms (below, a busy disk counts as failed) to 10 minutes. */
const MIN_TIMEOUT_MS = 100;
const MAX_TIMEOUT_MS = 600_000;
/** Write memory bounds: 1 MiB (one write at a time, clamped: write-gate.ts) to 1 TiB. */
const MIN_WRITE_MEMORY = 1024 * 1024;
const MAX_WRITE_MEMORY = 2 ** 40;

const fail = (message: string): never => {
  throw new ErasureConfigError(message);
};
const show = (s: string) => JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s);

// ---- --data: brace patterns and lists ------------------------------------------------------

/** One `{a...b}` group: its position, and the numbers it stands for as text. */
interface BraceGroup {
  start: number;
  end: number;
  from: number;
  to: number;
  width: number;
}

function braceGroups(pattern: string): BraceGroup[] {
  const groups: BraceGroup[] = [];
  let i = 0;
  while (i < pattern.length) {
    const open = pattern.indexOf('{', i);
    const stray = pattern.indexOf('}', i);
    if (stray >= 0 && (open < 0 || stray < open)) fail(`${show(pattern)}: '}' without '{'`);
    if (open < 0) break;
    const close = pattern.indexOf('}', open);
    if (close < 0) fail(`${show(pattern)}: '{' without '}'`);
    const body = pattern.slice(open + 1, close);
    if (body.includes('{')) fail(`${show(pattern)}: nested braces are not supported`);
    const m = /^(\d{1,9})\.\.\.(\d{1,9})$/.exec(body);
    if (!m) {
      const hint = /^\d+\.\.\d+$/.test(body) ? ' (three dots: {1...6})' : body.includes(',') ? ' (a comma list goes without braces: a,b,c)' : '';
      fail(`${show(pattern)}: {${body.slice(0, 30)}} is not a range like {1...6}${hint}`);
    }
    const from = Number(m![1]);
    const to = Number(m![2]);
    if (from > to) fail(`${show(pattern)}: {${body}} counts down; write {${to}...${from}}`);
    if (to - from + 1 > MAX_DOMAINS) fail(`${show(pattern)}: {${body}} names ${to - from + 1} domains; at most ${MAX_DOMAINS}`);
    // Zero padding as written: {01...16} gives 01, 02, …, 16.
    const width = m![1]!.length > 1 && m![1]!.startsWith('0') ? Math.max(m![1]!.length, m![2]!.length) : 0;
    groups.push({ start: open, end: close + 1, from, to, width });
    i = close + 1;
  }
  return groups;
}

/**
 * Expands MinIO's ellipsis notation: `/mnt/disk{1...6}` → `/mnt/disk1` … `/mnt/disk6`;
 * several groups multiply, the first varying slowest (`/h{1...2}/d{1...2}` → h1/d1, h1/d2,
 * h2/d1, h2/d2); a zero-padded start pads (`{01...12}`). A pattern without braces is itself.
 * Throws ErasureConfigError for unbalanced, nested or malformed braces, a range that counts
 * down, and more than MAX_DOMAINS results (checked before anything is built).
 */
export function expandBraces(pattern: string): string[] {
  if (pattern.length > MAX_TEXT) fail(`a --data value of ${pattern.length} characters is too long`);
  const groups = braceGroups(pattern);
  let total = 1;
  for (const g of groups) {
    total *= g.to - g.from + 1;
    if (total > MAX_DOMAINS) fail(`${show(pattern)} names more than ${MAX_DOMAINS} domains`);
  }
  let out = [''];
  let at = 0;
  for (const g of groups) {
    const lit = pattern.slice(at, g.start);
    const next: string[] = [];
    for (const prefix of out)
      for (let n = g.from; n <= g.to; n++) next.push(prefix + lit + String(n).padStart(g.width, '0'));
    out = next;
    at = g.end;
  }
  const tail = pattern.slice(at);
  return out.map((p) => p + tail);
}

/** Splits at commas outside braces (a brace body never holds one: braceGroups refuses it). */
function splitList(data: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < data.length; i++) {
    const c = data[i];
    if (c === '{') depth++;
    else if (c === '}') depth = Math.max(0, depth - 1);
    else if (c === ',' && depth === 0) {
      parts.push(data.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(data.slice(from));
  return parts.map((p) => p.trim());
}

const URL_SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;

/** A directory's absolute path, or undefined for a URL (s3:, http(s):, memory:). */
function localPath(entry: string): string | undefined {
  if (entry.startsWith('file:')) return fileURLToPath(entry);
  if (URL_SCHEME.test(entry) && !(entry.length > 1 && entry[1] === ':' && isAbsolute(entry))) return undefined;
  return resolve(entry);
}

/**
 * The domains a `--data` value names: a comma list whose entries may each be brace patterns,
 * every entry a directory (made absolute) or a provider URL, in order. Throws
 * ErasureConfigError for an empty entry, bad braces, more than MAX_DOMAINS, the same directory
 * or URL twice, and a directory inside another one (its files would show in the outer listing).
 */
export function parseDomainList(data: string): string[] {
  if (data.length > MAX_TEXT) fail(`a --data value of ${data.length} characters is too long`);
  const out: string[] = [];
  for (const part of splitList(data)) {
    if (part === '') fail(`${show(data)}: an empty entry in the domain list`);
    for (const e of expandBraces(part)) {
      out.push(localPath(e) ?? e);
      if (out.length > MAX_DOMAINS) fail(`${show(data)} names more than ${MAX_DOMAINS} domains`);
    }
  }
  checkDistinct(out);
  return out;
}

/** Refuses the same location twice and a directory nested in another. */
function checkDistinct(urls: readonly string[]): void {
  const seen = new Set<string>();
  for (const u of urls) {
    if (seen.has(u)) fail(`domain ${show(u)} is given twice`);
    seen.add(u);
  }
  const dirs = urls.filter((u) => isAbsolute(u));
  for (const inner of dirs)
    for (const outer of dirs)
      if (outer !== inner && inner.startsWith(outer.endsWith(sep) ? outer : outer + sep))
        fail(`domain ${show(inner)} is inside domain ${show(outer)}`);
}

/**
 * Does `data` look like several domains (a brace range or a list of directories/URLs)? Used to
 * refuse such a value without --erasure instead of opening one oddly named directory.
 */
export function looksLikeDomainList(data: string): boolean {
  if (/\{[^}]*\.\.\.?[^}]*\}/.test(data)) return true;
  const parts = data.split(',').map((p) => p.trim());
  return parts.length > 1 && parts.every((p) => p.startsWith('/') || p.startsWith('./') || p.startsWith('../') || URL_SCHEME.test(p));
}

// ---- --erasure k+m -------------------------------------------------------------------------

/**
 * Parses `k+m` (`4+2`, `10+4`): k data and m parity fragments, 1 <= k, 0 <= m, k+m <= 256.
 * Throws ErasureConfigError (a RangeError) with the expected form otherwise.
 */
export function parseErasureSpec(spec: string): { k: number; m: number } {
  const m = /^ *(\d{1,3}) *\+ *(\d{1,3}) *$/.exec(typeof spec === 'string' ? spec : '');
  if (!m) fail(`${show(String(spec))} is not an erasure spec: give k+m, e.g. 4+2 (4 data, 2 parity fragments)`);
  const k = Number(m![1]);
  const p = Number(m![2]);
  if (k < 1) fail(`erasure ${k}+${p}: k (data fragments) must be at least 1`);
  if (k + p > MAX_FRAGMENTS) fail(`erasure ${k}+${p}: k+m = ${k + p} is more than ${MAX_FRAGMENTS} fragments`);
  return { k, m: p };
}

// ---- the config file's section -------------------------------------------------------------

const SECTION_KEYS = ['k', 'm', 'cellSize', 'stripeThreshold', 'degradedWrites', 'domainTimeout', 'writeMemory', 'domains', 'policy'];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function onlyKeys(where: string, o: Record<string, unknown>, keys: readonly string[]): void {
  for (const k of Object.keys(o)) if (!keys.includes(k)) fail(`${where}: unknown key ${show(k)} (known: ${keys.join(', ')})`);
}

function text(where: string, v: unknown, max: number): string {
  if (typeof v !== 'string' || v === '') fail(`${where}: expected a non-empty string`);
  const s = v as string;
  if (s.length > max) fail(`${where}: longer than ${max} characters`);
  if (/[\x00-\x1f\x7f]/.test(s)) fail(`${where}: contains control characters`);
  return s;
}

function int(where: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) fail(`${where}: expected a whole number from ${min} to ${max}`);
  return v as number;
}

function converted<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof OptionError) fail(err.message);
    throw err;
  }
}

function parseDomains(where: string, v: unknown): DomainSpec[] {
  if (!Array.isArray(v) || v.length === 0) fail(`${where}: expected a list of { "url": …, "id": …, "labels": {…} }`);
  const list = v as unknown[];
  if (list.length > MAX_DOMAINS) fail(`${where}: ${list.length} domains; at most ${MAX_DOMAINS}`);
  return list.map((d, i) => {
    const at = `${where}[${i}]`;
    if (!isObject(d)) fail(`${at}: expected an object`);
    const o = d as Record<string, unknown>;
    onlyKeys(at, o, ['id', 'url', 'labels']);
    const rawUrl = text(`${at}.url`, o.url, MAX_TEXT);
    if (/[{}]/.test(rawUrl)) fail(`${at}.url: one domain per entry (no brace ranges here)`);
    const id = o.id === undefined ? `d${i + 1}` : text(`${at}.id`, o.id, MAX_ID_CHARS);
    if (!/^[A-Za-z0-9._-]+$/.test(id)) fail(`${at}.id: ${show(id)} may hold only A-Z a-z 0-9 . _ -`);
    const labels: Record<string, string> = {};
    if (o.labels !== undefined) {
      if (!isObject(o.labels)) fail(`${at}.labels: expected an object of strings`);
      const entries = Object.entries(o.labels as Record<string, unknown>);
      if (entries.length > MAX_LABELS) fail(`${at}.labels: at most ${MAX_LABELS} labels`);
      for (const [name, value] of entries) {
        text(`${at}.labels name`, name, MAX_LABEL_CHARS);
        labels[name] = text(`${at}.labels.${name.slice(0, 40)}`, value, MAX_LABEL_CHARS);
      }
    }
    return { id, url: localPath(rawUrl) ?? rawUrl, labels };
  });
}

function idList(where: string, v: unknown): string[] {
  if (!Array.isArray(v)) fail(`${where}: expected a list of domain ids`);
  const list = v as unknown[];
  if (list.length > MAX_DOMAINS) fail(`${where}: more than ${MAX_DOMAINS} ids`);
  return list.map((id, i) => text(`${where}[${i}]`, id, MAX_ID_CHARS));
}

function parsePolicy(where: string, v: unknown): PlacementPolicy {
  if (!isObject(v)) fail(`${where}: expected { "spread": [...], "allow": [...], "deny": [...] }`);
  const o = v as Record<string, unknown>;
  onlyKeys(where, o, ['spread', 'allow', 'deny']);
  const policy: { spread?: SpreadRule[]; allow?: string[]; deny?: string[] } = {};
  if (o.spread !== undefined) {
    if (!Array.isArray(o.spread)) fail(`${where}.spread: expected a list of { "label": …, "max": … }`);
    const rules = o.spread as unknown[];
    if (rules.length > MAX_LABELS) fail(`${where}.spread: at most ${MAX_LABELS} rules`);
    policy.spread = rules.map((r, i) => {
      const at = `${where}.spread[${i}]`;
      if (!isObject(r)) fail(`${at}: expected { "label": …, "max": … }`);
      onlyKeys(at, r as Record<string, unknown>, ['label', 'max']);
      const rr = r as Record<string, unknown>;
      return { label: text(`${at}.label`, rr.label, MAX_LABEL_CHARS), max: int(`${at}.max`, rr.max, 1, MAX_FRAGMENTS) };
    });
  }
  if (o.allow !== undefined) policy.allow = idList(`${where}.allow`, o.allow);
  if (o.deny !== undefined) policy.deny = idList(`${where}.deny`, o.deny);
  return policy;
}

/** What resolveErasureConfig works from. */
export interface ErasureSources {
  /** The `--data` value, when given (a brace pattern or a comma list). */
  data?: string;
  /** The `--erasure` value (`k+m`), when given. */
  erasure?: string;
  /** The config file's `erasure` section as parsed JSON, when present. */
  file?: unknown;
  /** How to name the file in messages (its path). */
  fileName?: string;
}

/**
 * The erasure set-up from `--data`, `--erasure` and the config file's `erasure` section:
 * k and m from `erasure` (else the file), domains from the file's `domains` (with their ids and
 * labels; `--data`, if it also names domains, must name the same ones) else from `data`
 * (ids d1, d2, … in order, no labels), the rest from the file else ERASURE_DEFAULTS. Checks the
 * policy against the domains (validatePolicy). Throws ErasureConfigError saying what is wrong.
 */
export function resolveErasureConfig(src: ErasureSources): ErasureConfig {
  const where = `${src.fileName ?? 'config file'}: erasure`;
  let sec: Record<string, unknown> = {};
  if (src.file !== undefined) {
    if (!isObject(src.file)) fail(`${where}: expected an object ({ "k": 4, "m": 2, "domains": [...] })`);
    sec = src.file as Record<string, unknown>;
    onlyKeys(where, sec, SECTION_KEYS);
  }
  let k: number;
  let m: number;
  if (src.erasure !== undefined) ({ k, m } = parseErasureSpec(src.erasure));
  else if (sec.k !== undefined || sec.m !== undefined) {
    k = int(`${where}.k`, sec.k, 1, MAX_FRAGMENTS);
    m = int(`${where}.m`, sec.m, 0, MAX_FRAGMENTS);
  } else return fail(`no k+m: give --erasure k+m (e.g. 4+2) or "k" and "m" in the config file's erasure section`);
  const fromData = src.data !== undefined ? parseDomainList(src.data) : undefined;
  let domains: DomainSpec[];
  if (sec.domains !== undefined) {
    domains = parseDomains(`${where}.domains`, sec.domains);
    checkDistinct(domains.map((d) => d.url));
    if (fromData && fromData.length > 1 && fromData.join('\n') !== domains.map((d) => d.url).join('\n'))
      fail(`--data names ${fromData.length} domains and ${where}.domains lists ${domains.length} others: give the domains in one place`);
  } else {
    if (!fromData || fromData.length < 2)
      fail(`erasure ${k}+${m} needs several domains: --data '/mnt/disk{1...${k + m}}' or a comma list of directories or URLs (got ${show(src.data ?? '(none)')})`);
    domains = fromData!.map((url, i) => ({ id: `d${i + 1}`, url, labels: {} }));
  }
  const policy = sec.policy === undefined ? {} : parsePolicy(`${where}.policy`, sec.policy);
  const cellSize = sec.cellSize === undefined ? ERASURE_DEFAULTS.cellSize : converted(() => parseSize(sec.cellSize as RawValue, `${where}.cellSize`));
  if (cellSize < MIN_CELL || cellSize > MAX_CELL || cellSize % CELL_ALIGN !== 0)
    fail(`${where}.cellSize: ${cellSize} bytes; give a multiple of ${CELL_ALIGN} from 4KiB to 64MiB`);
  const stripeThreshold = sec.stripeThreshold === undefined ? ERASURE_DEFAULTS.stripeThreshold : converted(() => parseSize(sec.stripeThreshold as RawValue, `${where}.stripeThreshold`));
  if (stripeThreshold < 0 || stripeThreshold > 2 ** 50) fail(`${where}.stripeThreshold: ${stripeThreshold} is out of range (0 to 1PiB)`);
  let degradedWrites: boolean = ERASURE_DEFAULTS.degradedWrites;
  if (sec.degradedWrites !== undefined) {
    if (typeof sec.degradedWrites !== 'boolean') fail(`${where}.degradedWrites: expected true or false`);
    degradedWrites = sec.degradedWrites as boolean;
  }
  const domainTimeoutMs = sec.domainTimeout === undefined ? ERASURE_DEFAULTS.domainTimeoutMs : converted(() => parseDuration(sec.domainTimeout as RawValue, `${where}.domainTimeout`));
  if (domainTimeoutMs < MIN_TIMEOUT_MS || domainTimeoutMs > MAX_TIMEOUT_MS) fail(`${where}.domainTimeout: give a duration from 100ms to 10m`);
  const writeMemory = sec.writeMemory === undefined ? ERASURE_DEFAULTS.writeMemory : converted(() => parseSize(sec.writeMemory as RawValue, `${where}.writeMemory`));
  if (writeMemory < MIN_WRITE_MEMORY || writeMemory > MAX_WRITE_MEMORY) fail(`${where}.writeMemory: ${writeMemory} bytes; give a size from 1MiB to 1TiB`);
  try {
    validatePolicy(domains, policy, k!, m!);
  } catch (err) {
    if (err instanceof PlacementError) fail(err.message);
    throw err;
  }
  return { k: k!, m: m!, domains, policy, cellSize, stripeThreshold, degradedWrites, domainTimeoutMs, writeMemory };
}
