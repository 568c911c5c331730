/**
 * @module Object Lock documents: ObjectLockConfiguration (Put/GetObjectLockConfiguration),
 * Retention (Put/GetObjectRetention), LegalHold (Put/GetObjectLegalHold), and the ISO 8601
 * times they and the x-amz-object-lock-retain-until-date header carry.
 *
 *   <ObjectLockConfiguration>
 *     <ObjectLockEnabled>Enabled</ObjectLockEnabled>   required, the only value
 *     <Rule><DefaultRetention>                          optional
 *       <Mode>GOVERNANCE|COMPLIANCE</Mode>              exact spelling
 *       <Days>n</Days> | <Years>n</Years>               exactly one, 1..36500 days / 1..100 years
 *     </DefaultRetention></Rule>
 *   </ObjectLockConfiguration>
 *   <Retention><Mode/><RetainUntilDate/></Retention>   both, or neither (removes the retention)
 *   <LegalHold><Status>ON|OFF</Status></LegalHold>
 *
 * A document of the wrong shape is MalformedXML (an unknown mode too, as S3 answers); a
 * period that is not a positive number within bounds is InvalidRetentionPeriod.
 */
import { S3Error } from '../errors.js';
import { LOCK_MODES, MAX_RETAIN_UNTIL_MS, type LockMode, type Retention } from '../../store/object-lock.js';
import { MAX_DEFAULT_DAYS, MAX_DEFAULT_YEARS, type BucketLockConfig, type DefaultRetention } from '../../store/object-lock-config.js';
import { el, leaf, s3Root, xmlDocument } from './build.js';
import { malformedXml } from './parse.js';
import { childrenNamed, leafText, parseRoot, requiredLeafText } from './read.js';

/** `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)`: the forms SDKs and the CLI send. */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * The time (ms since the epoch; a fraction below 1 ms is dropped) an ISO 8601 date-time
 * with an explicit offset denotes, or undefined when `text` is not one (out-of-range fields
 * such as February 30 included). Pure.
 */
export function parseIsoTime(text: string): number | undefined {
  const m = ISO_8601.exec(text.trim());
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const day = new Date(Date.UTC(2000, 0, 1));
  day.setUTCFullYear(y, mo - 1, d);
  if (day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) return undefined;
  let offset = 0;
  if (m[8] !== 'Z') {
    const sign = m[8]![0] === '-' ? -1 : 1;
    const digits = m[8]!.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2));
    if (oh > 23 || om > 59) return undefined;
    offset = sign * (oh * 60 + om) * 60_000;
  }
  const t = day.getTime() + ((h * 60 + mi) * 60 + s) * 1000 + ms - offset;
  return Number.isSafeInteger(t) ? t : undefined;
}

/** The mode named by `text` (exact spelling), or undefined. Pure. */
export function lockModeOf(text: string | undefined): LockMode | undefined {
  return LOCK_MODES.find((m) => m === text?.trim());
}

const invalidPeriod = (what: string) => new S3Error('InvalidRetentionPeriod', `Default retention period must be a positive integer value for ${what}.`);

/** A period leaf: undefined when absent; MalformedXML when not an integer; InvalidRetentionPeriod out of 1..max. */
function periodLeaf(el: Parameters<typeof leafText>[0], name: 'Days' | 'Years', max: number): number | undefined {
  const text = leafText(el, name);
  if (text === undefined) return undefined;
  const v = text.trim();
  if (!/^[+-]?[0-9]{1,12}$/.test(v)) throw malformedXml(`<${name}> must be an integer`);
  const n = Number(v);
  if (n < 1 || n > max) throw invalidPeriod(name);
  return n;
}

/**
 * Parses a PutObjectLockConfiguration body. Pure. Throws S3Error MalformedXML (shape, a
 * status other than Enabled, an unknown mode, both or neither of Days and Years) or
 * InvalidRetentionPeriod.
 */
export function parseObjectLockConfiguration(body: Uint8Array | string): BucketLockConfig {
  const root = parseRoot(body, 'ObjectLockConfiguration');
  if (leafText(root, 'ObjectLockEnabled')?.trim() !== 'Enabled') throw malformedXml('<ObjectLockEnabled> must be Enabled');
  const rules = childrenNamed(root, 'Rule');
  if (rules.length === 0) return {};
  if (rules.length > 1) throw malformedXml('more than one <Rule>');
  const defaults = childrenNamed(rules[0]!, 'DefaultRetention');
  if (defaults.length !== 1) throw malformedXml('a <Rule> needs one <DefaultRetention>');
  const d = defaults[0]!;
  const mode = lockModeOf(requiredLeafText(d, 'Mode'));
  if (!mode) throw malformedXml('<Mode> must be GOVERNANCE or COMPLIANCE');
  const hasDays = leafText(d, 'Days') !== undefined;
  const hasYears = leafText(d, 'Years') !== undefined;
  if (hasDays === hasYears) throw malformedXml('<DefaultRetention> needs exactly one of <Days> and <Years>');
  const rule: DefaultRetention = hasDays ? { mode, days: periodLeaf(d, 'Days', MAX_DEFAULT_DAYS)! } : { mode, years: periodLeaf(d, 'Years', MAX_DEFAULT_YEARS)! };
  return { rule };
}

/** The GetObjectLockConfiguration document. Pure. */
export function renderObjectLockConfiguration(c: BucketLockConfig): string {
  const r = c.rule;
  return xmlDocument(
    s3Root(
      'ObjectLockConfiguration',
      leaf('ObjectLockEnabled', 'Enabled'),
      r && el('Rule', el('DefaultRetention', leaf('Mode', r.mode), leaf('Days', r.days), leaf('Years', r.years)))
    )
  );
}

/**
 * Parses a PutObjectRetention body: a retention, or undefined for an empty `<Retention/>`
 * (which removes it). Pure. Throws S3Error MalformedXML (shape, unknown mode, a date that is
 * not ISO 8601 or past 9999, one of Mode and RetainUntilDate without the other).
 */
export function parseRetention(body: Uint8Array | string): Retention | undefined {
  const root = parseRoot(body, 'Retention');
  const modeText = leafText(root, 'Mode');
  const dateText = leafText(root, 'RetainUntilDate');
  if (modeText === undefined && dateText === undefined) return undefined;
  if (modeText === undefined || dateText === undefined) throw malformedXml('<Retention> needs both <Mode> and <RetainUntilDate>');
  const mode = lockModeOf(modeText);
  if (!mode) throw malformedXml('<Mode> must be GOVERNANCE or COMPLIANCE');
  const retainUntil = parseIsoTime(dateText);
  if (retainUntil === undefined || retainUntil > MAX_RETAIN_UNTIL_MS) throw malformedXml('<RetainUntilDate> must be an ISO 8601 date-time');
  return { mode, retainUntil };
}

/** The GetObjectRetention document. Pure. */
export function renderRetention(r: Retention): string {
  return xmlDocument(s3Root('Retention', leaf('Mode', r.mode), leaf('RetainUntilDate', new Date(r.retainUntil))));
}

/** Parses a PutObjectLegalHold body: true for ON, false for OFF. Pure. Throws S3Error MalformedXML. */
export function parseLegalHold(body: Uint8Array | string): boolean {
  const status = requiredLeafText(parseRoot(body, 'LegalHold'), 'Status').trim();
  if (status === 'ON') return true;
  if (status === 'OFF') return false;
  throw malformedXml('<Status> must be ON or OFF');
}

/** The GetObjectLegalHold document. Pure. */
export function renderLegalHold(on: boolean): string {
  return xmlDocument(s3Root('LegalHold', leaf('Status', on ? 'ON' : 'OFF')));
}
