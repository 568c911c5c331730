/**
 * @module Bucket lifecycle configuration documents (Put/GetBucketLifecycleConfiguration).
 *
 *   <LifecycleConfiguration>
 *     <Rule>                                    1..1000
 *       <ID>…</ID>                              optional (one is made up), <= 255 chars, unique
 *       <Filter>…</Filter> | <Prefix>…</Prefix> exactly one (Prefix: the legacy form)
 *         Filter: empty, or ONE of Prefix, Tag{Key,Value}, ObjectSizeGreaterThan,
 *                 ObjectSizeLessThan, And{Prefix?, Tag*, ObjectSizeGreaterThan?, ObjectSizeLessThan?}
 *       <Status>Enabled|Disabled</Status>        exactly these spellings (else MalformedXML)
 *       <Expiration>Days | Date | ExpiredObjectDeleteMarker</Expiration>
 *       <NoncurrentVersionExpiration>NoncurrentDays, NewerNoncurrentVersions?</…>
 *       <AbortIncompleteMultipartUpload>DaysAfterInitiation</…>
 *       <Transition>, <NoncurrentVersionTransition>   validated, then refused: 501
 *     </Rule>
 *   </LifecycleConfiguration>
 *
 * Errors as S3 gives them: the document's shape (unknown or repeated elements, a bad
 * Status, several Expiration choices, no Filter/Prefix or both) is MalformedXML; values
 * out of range (Days <= 0, a Date not at midnight UTC, an ID too long or repeated, sizes)
 * are InvalidArgument; rules that cannot be carried out as written (no action,
 * AbortIncompleteMultipartUpload or ExpiredObjectDeleteMarker with a tag or size filter,
 * too many rules) are InvalidRequest. Storage-class transitions are NotImplemented: Strata
 * has one storage class, and answering "done" to a transition would be a lie. Every check
 * runs before the refusal, so a malformed transition is still a 400.
 */
import { randomBytes } from 'node:crypto';
import { S3Error } from '../errors.js';
import { el, leaf, s3Root, xmlDocument, type Xml } from './build.js';
import { malformedXml, type XmlElement } from './parse.js';
import { childrenNamed, integerLeaf, leafText, parseRoot } from './read.js';
import {
  MAX_LIFECYCLE_RULES,
  MAX_RULE_ID_LENGTH,
  type LifecycleConfig,
  type LifecycleFilter,
  type LifecycleRule,
} from '../../store/lifecycle-config.js';

/** Elements a document of 1,000 rules with full And filters may hold (parser bound). */
const MAX_LIFECYCLE_ELEMENTS = MAX_LIFECYCLE_RULES * 30;
/** S3's bounds on NewerNoncurrentVersions. */
const MAX_NEWER_NONCURRENT = 100;
/** An object key is at most 1,024 bytes; a prefix longer than that selects nothing. */
const MAX_PREFIX_BYTES = 1024;
/** The children a <Rule> may have. */
const RULE_CHILDREN = new Set([
  'ID',
  'Filter',
  'Prefix',
  'Status',
  'Expiration',
  'NoncurrentVersionExpiration',
  'AbortIncompleteMultipartUpload',
  'Transition',
  'NoncurrentVersionTransition',
]);

const invalidArgument = (message: string, name?: string, value?: string) =>
  new S3Error('InvalidArgument', message, name === undefined ? {} : { ArgumentName: name, ArgumentValue: (value ?? '').slice(0, 256) });

function only(el: XmlElement, allowed: readonly string[]): void {
  for (const c of el.children) if (!allowed.includes(c.name)) throw malformedXml(`unexpected <${c.name}> in <${el.name}>`);
}

function single(el: XmlElement, name: string): XmlElement | undefined {
  const all = childrenNamed(el, name);
  if (all.length > 1) throw malformedXml(`more than one <${name}> in <${el.name}>`);
  return all[0];
}

/** A positive day count (Days, NoncurrentDays, DaysAfterInitiation). */
function positiveDays(el: XmlElement, name: string, what: string): number | undefined {
  const v = integerLeaf(el, name);
  if (v === undefined) return undefined;
  if (v < 1) throw invalidArgument(`'${name}' for ${what} action must be a positive integer`, name, String(v));
  return v;
}

/** An ISO 8601 date that must fall at midnight UTC; ms since the epoch. */
function midnightDate(el: XmlElement, name = 'Date'): number | undefined {
  const text = leafText(el, name)?.trim();
  if (text === undefined) return undefined;
  const iso = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})?)?$/;
  const ms = iso.test(text) ? Date.parse(/T/.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/.test(text) ? `${text}Z` : text) : NaN;
  if (!Number.isFinite(ms)) throw invalidArgument(`'${name}' must be an ISO 8601 date`, name, text);
  if (ms % 86_400_000 !== 0) throw invalidArgument(`'${name}' must be at midnight GMT`, name, text);
  return ms;
}

function parseTag(t: XmlElement): { key: string; value: string } {
  only(t, ['Key', 'Value']);
  const key = leafText(t, 'Key');
  const value = leafText(t, 'Value');
  if (key === undefined || value === undefined) throw malformedXml('a <Tag> needs a <Key> and a <Value>');
  if (key.length === 0 || key.length > 128) throw invalidArgument('The TagKey you have provided is invalid', 'Key', key);
  if (value.length > 256) throw invalidArgument('The TagValue you have provided is invalid', 'Value', value);
  return { key, value };
}

function sizeLeaf(el: XmlElement, name: string): number | undefined {
  return integerLeaf(el, name);
}

function checkPrefix(prefix: string): string {
  if (Buffer.byteLength(prefix) > MAX_PREFIX_BYTES) throw invalidArgument('The prefix is longer than the longest key (1024 bytes)', 'Prefix', prefix);
  return prefix;
}

function parseFilter(rule: XmlElement): { form: LifecycleRule['form']; filter: LifecycleFilter } {
  const filterEl = single(rule, 'Filter');
  const legacy = single(rule, 'Prefix');
  if (filterEl && legacy) throw malformedXml('a <Rule> has either <Filter> or <Prefix>, not both');
  if (legacy) {
    if (legacy.children.length > 0) throw malformedXml('<Prefix> must contain text only');
    return { form: 'prefix', filter: { prefix: checkPrefix(legacy.text), tags: [] } };
  }
  if (!filterEl) throw malformedXml('a <Rule> needs a <Filter> (or the legacy <Prefix>)');
  only(filterEl, ['Prefix', 'Tag', 'ObjectSizeGreaterThan', 'ObjectSizeLessThan', 'And']);
  if (filterEl.children.length === 0) return { form: 'empty', filter: { prefix: '', tags: [] } };
  if (filterEl.children.length > 1) throw malformedXml('a <Filter> holds one condition; use <And> to combine several');
  const and = single(filterEl, 'And');
  const src = and ?? filterEl;
  if (and) only(and, ['Prefix', 'Tag', 'ObjectSizeGreaterThan', 'ObjectSizeLessThan']);
  const filter: LifecycleFilter = { prefix: checkPrefix(leafText(src, 'Prefix') ?? ''), tags: childrenNamed(src, 'Tag').map(parseTag) };
  const keys = new Set<string>();
  for (const t of filter.tags) {
    if (keys.has(t.key)) throw invalidArgument('Duplicate Tag Keys are not allowed.', 'Key', t.key);
    keys.add(t.key);
  }
  const gt = sizeLeaf(src, 'ObjectSizeGreaterThan');
  const lt = sizeLeaf(src, 'ObjectSizeLessThan');
  if (gt !== undefined) filter.sizeGreaterThan = gt;
  if (lt !== undefined) {
    if (lt < 1) throw invalidArgument('ObjectSizeLessThan must be a positive integer', 'ObjectSizeLessThan', String(lt));
    filter.sizeLessThan = lt;
  }
  if (gt !== undefined && lt !== undefined && gt >= lt) {
    throw invalidArgument('ObjectSizeGreaterThan must be less than ObjectSizeLessThan', 'ObjectSizeGreaterThan', String(gt));
  }
  if (and && and.children.length === 0) throw malformedXml('<And> needs at least one condition');
  return { form: and ? 'and' : 'filter', filter };
}

function parseExpiration(x: XmlElement): NonNullable<LifecycleRule['expiration']> {
  only(x, ['Days', 'Date', 'ExpiredObjectDeleteMarker']);
  if (x.children.length !== 1) throw malformedXml('<Expiration> holds exactly one of <Days>, <Date>, <ExpiredObjectDeleteMarker>');
  const days = positiveDays(x, 'Days', 'Expiration');
  if (days !== undefined) return { days };
  const date = midnightDate(x);
  if (date !== undefined) return { date };
  const marker = leafText(x, 'ExpiredObjectDeleteMarker')?.trim().toLowerCase();
  if (marker !== 'true' && marker !== 'false') throw malformedXml('<ExpiredObjectDeleteMarker> must be true or false');
  return { expiredObjectDeleteMarker: marker === 'true' };
}

/** Checks a Transition / NoncurrentVersionTransition completely; the caller then refuses it. */
function checkTransition(t: XmlElement, noncurrent: boolean): void {
  only(t, noncurrent ? ['NoncurrentDays', 'StorageClass', 'NewerNoncurrentVersions'] : ['Days', 'Date', 'StorageClass']);
  if (leafText(t, 'StorageClass') === undefined) throw malformedXml(`<${t.name}> lacks <StorageClass>`);
  if (noncurrent) {
    if (integerLeaf(t, 'NoncurrentDays') === undefined) throw malformedXml('<NoncurrentVersionTransition> lacks <NoncurrentDays>');
    integerLeaf(t, 'NewerNoncurrentVersions');
    return;
  }
  const days = integerLeaf(t, 'Days');
  const date = midnightDate(t);
  if ((days === undefined) === (date === undefined)) throw malformedXml('<Transition> holds exactly one of <Days>, <Date>');
}

function parseRule(r: XmlElement, index: number): { rule: LifecycleRule; transitions: boolean } {
  for (const c of r.children) if (!RULE_CHILDREN.has(c.name)) throw malformedXml(`unexpected <${c.name}> in <Rule>`);
  const idText = leafText(r, 'ID');
  if (idText !== undefined && idText.length > MAX_RULE_ID_LENGTH) {
    throw invalidArgument(`ID length should not exceed allowed limit of ${MAX_RULE_ID_LENGTH}`, 'ID', idText);
  }
  const status = leafText(r, 'Status');
  if (status !== 'Enabled' && status !== 'Disabled') throw malformedXml(`rule ${index + 1}: <Status> must be Enabled or Disabled`);
  const { form, filter } = parseFilter(r);
  const rule: LifecycleRule = { id: idText || randomBytes(24).toString('base64url'), enabled: status === 'Enabled', form, filter };
  const x = single(r, 'Expiration');
  if (x) rule.expiration = parseExpiration(x);
  const nx = single(r, 'NoncurrentVersionExpiration');
  if (nx) {
    only(nx, ['NoncurrentDays', 'NewerNoncurrentVersions']);
    const days = positiveDays(nx, 'NoncurrentDays', 'NoncurrentVersionExpiration');
    if (days === undefined) throw malformedXml('<NoncurrentVersionExpiration> lacks <NoncurrentDays>');
    rule.noncurrentExpiration = { days };
    const newer = integerLeaf(nx, 'NewerNoncurrentVersions');
    if (newer !== undefined) {
      if (newer < 1 || newer > MAX_NEWER_NONCURRENT) {
        throw invalidArgument(`NewerNoncurrentVersions must be between 1 and ${MAX_NEWER_NONCURRENT}`, 'NewerNoncurrentVersions', String(newer));
      }
      rule.noncurrentExpiration.newerNoncurrentVersions = newer;
    }
  }
  const ab = single(r, 'AbortIncompleteMultipartUpload');
  if (ab) {
    only(ab, ['DaysAfterInitiation']);
    const days = positiveDays(ab, 'DaysAfterInitiation', 'AbortIncompleteMultipartUpload');
    if (days === undefined) throw malformedXml('<AbortIncompleteMultipartUpload> lacks <DaysAfterInitiation>');
    rule.abortIncompleteUploadDays = days;
  }
  const transitions = [...childrenNamed(r, 'Transition'), ...childrenNamed(r, 'NoncurrentVersionTransition')];
  for (const t of transitions) checkTransition(t, t.name === 'NoncurrentVersionTransition');
  const narrowed = filter.tags.length > 0 || filter.sizeGreaterThan !== undefined || filter.sizeLessThan !== undefined;
  if (narrowed && rule.abortIncompleteUploadDays !== undefined) {
    throw new S3Error('InvalidRequest', 'AbortIncompleteMultipartUpload cannot be specified with a Tag or object size filter.');
  }
  if (narrowed && rule.expiration?.expiredObjectDeleteMarker) {
    throw new S3Error('InvalidRequest', 'ExpiredObjectDeleteMarker cannot be specified with a Tag or object size filter.');
  }
  const acts = rule.expiration !== undefined || rule.noncurrentExpiration !== undefined || rule.abortIncompleteUploadDays !== undefined;
  if (!acts && transitions.length === 0) throw new S3Error('InvalidRequest', 'At least one action needs to be specified in a rule');
  return { rule, transitions: transitions.length > 0 };
}

/**
 * Parses and validates a PutBucketLifecycleConfiguration body (see the module note). Pure.
 * Throws S3Error MalformedXML / InvalidArgument / InvalidRequest as described there,
 * NotImplemented for a valid document that asks for a storage-class transition, and
 * MaxMessageLengthExceeded (parser bound).
 */
export function parseLifecycleConfiguration(body: string | Uint8Array): LifecycleConfig {
  const root = parseRoot(body, 'LifecycleConfiguration', { maxElements: MAX_LIFECYCLE_ELEMENTS });
  only(root, ['Rule']);
  const ruleEls = root.children;
  if (ruleEls.length === 0) throw malformedXml('no <Rule> elements');
  if (ruleEls.length > MAX_LIFECYCLE_RULES) {
    throw new S3Error('InvalidRequest', `A lifecycle configuration holds at most ${MAX_LIFECYCLE_RULES} rules, not ${ruleEls.length}`);
  }
  const rules: LifecycleRule[] = [];
  const ids = new Set<string>();
  let transitions = false;
  ruleEls.forEach((r, i) => {
    const parsed = parseRule(r, i);
    if (ids.has(parsed.rule.id)) throw invalidArgument('Rule ID must be unique. Found same ID for more than one rule', 'ID', parsed.rule.id);
    ids.add(parsed.rule.id);
    transitions ||= parsed.transitions;
    rules.push(parsed.rule);
  });
  if (transitions) {
    throw new S3Error(
      'NotImplemented',
      'Lifecycle transitions (Transition, NoncurrentVersionTransition) are not implemented: Strata has a single storage class. Remove them and keep the expiration actions.'
    );
  }
  return { rules };
}

function renderFilter(r: LifecycleRule): Xml | undefined {
  const f = r.filter;
  if (r.form === 'prefix') return leaf('Prefix', f.prefix);
  if (r.form === 'empty') return el('Filter');
  const conditions: Xml[] = [];
  if (f.prefix !== '' || (r.form === 'filter' && f.tags.length === 0 && f.sizeGreaterThan === undefined && f.sizeLessThan === undefined)) {
    conditions.push(leaf('Prefix', f.prefix)!);
  }
  for (const t of f.tags) conditions.push(el('Tag', leaf('Key', t.key), leaf('Value', t.value)));
  if (f.sizeGreaterThan !== undefined) conditions.push(leaf('ObjectSizeGreaterThan', f.sizeGreaterThan)!);
  if (f.sizeLessThan !== undefined) conditions.push(leaf('ObjectSizeLessThan', f.sizeLessThan)!);
  return r.form === 'and' ? el('Filter', el('And', conditions)) : el('Filter', conditions);
}

function renderExpiration(x: NonNullable<LifecycleRule['expiration']>): Xml {
  if (x.days !== undefined) return el('Expiration', leaf('Days', x.days));
  if (x.date !== undefined) return el('Expiration', leaf('Date', new Date(x.date).toISOString().replace('.000Z', 'Z')));
  return el('Expiration', leaf('ExpiredObjectDeleteMarker', x.expiredObjectDeleteMarker === true));
}

/** The GetBucketLifecycleConfiguration document. Pure. */
export function renderLifecycleConfiguration(c: LifecycleConfig): string {
  const rules = c.rules.map((r) =>
    el(
      'Rule',
      leaf('ID', r.id),
      renderFilter(r),
      leaf('Status', r.enabled ? 'Enabled' : 'Disabled'),
      r.expiration && renderExpiration(r.expiration),
      r.noncurrentExpiration &&
        el(
          'NoncurrentVersionExpiration',
          leaf('NoncurrentDays', r.noncurrentExpiration.days),
          leaf('NewerNoncurrentVersions', r.noncurrentExpiration.newerNoncurrentVersions)
        ),
      r.abortIncompleteUploadDays !== undefined && el('AbortIncompleteMultipartUpload', leaf('DaysAfterInitiation', r.abortIncompleteUploadDays))
    )
  );
  return xmlDocument(s3Root('LifecycleConfiguration', rules));
}
