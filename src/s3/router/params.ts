/**
 * @module Query parameters of S3 operations: lookup and validation.
 *
 * Values are form-decoded (`+` is a space). When a parameter repeats, the first value wins.
 * Integer limits follow S3: `max-keys`, `max-parts` and `max-uploads` accept any
 * non-negative integer and are clamped to 1000; non-integers are `InvalidArgument`.
 */
import { isVersionId } from '../../store/version-id.js';
import { S3Error } from '../errors.js';
import { MAX_LIST_ENTRIES, MAX_PART_NUMBER } from '../limits.js';
import type { EncodingType } from '../xml/listing.js';
import type { ResponseOverrides } from './endpoint.js';

/** Largest integer S3 accepts in a query parameter (a signed 32-bit int). */
const MAX_QUERY_INT = 2 ** 31 - 1;

/** The decoded query of one request. */
export class QueryParams {
  readonly #values = new Map<string, string>();

  constructor(pairs: Iterable<readonly [string, string]>) {
    for (const [k, v] of pairs) if (!this.#values.has(k)) this.#values.set(k, v);
  }

  has(name: string): boolean {
    return this.#values.has(name);
  }

  /** The (first) value of `name`, or undefined when absent. */
  get(name: string): string | undefined {
    return this.#values.get(name);
  }

  names(): IterableIterator<string> {
    return this.#values.keys();
  }
}

function invalidArgument(message: string, name: string, value: string): S3Error {
  return new S3Error('InvalidArgument', message, { ArgumentName: name, ArgumentValue: value });
}

/**
 * A non-negative integer parameter, clamped to `clamp`; `fallback` when absent. Throws
 * `InvalidArgument` for anything but decimal digits or a value above 2^31-1.
 */
export function countParam(q: QueryParams, name: string, fallback: number, clamp: number): number {
  const raw = q.get(name);
  if (raw === undefined) return fallback;
  if (!/^[0-9]{1,10}$/.test(raw) || Number(raw) > MAX_QUERY_INT)
    throw invalidArgument(`Provided ${name} not an integer or within integer range`, name, raw);
  return Math.min(Number(raw), clamp);
}

/** `max-keys` / `max-parts` / `max-uploads`: default and clamp 1000. */
export function pageSizeParam(q: QueryParams, name: string): number {
  return countParam(q, name, MAX_LIST_ENTRIES, MAX_LIST_ENTRIES);
}

/** `partNumber` when present: 1..10000, else `InvalidArgument`. */
export function partNumberParam(q: QueryParams): number | undefined {
  const raw = q.get('partNumber');
  if (raw === undefined) return undefined;
  const n = /^[0-9]{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= MAX_PART_NUMBER))
    throw invalidArgument(
      `Part number must be an integer between 1 and ${MAX_PART_NUMBER}, inclusive`,
      'partNumber',
      raw
    );
  return n;
}

/** `encoding-type`: undefined when absent, `url`, else `InvalidArgument`. */
export function encodingTypeParam(q: QueryParams): EncodingType | undefined {
  const raw = q.get('encoding-type');
  if (raw === undefined) return undefined;
  if (raw === 'url') return 'url';
  throw invalidArgument('Invalid Encoding Method specified in Request', 'encoding-type', raw);
}

/** `delimiter`: an empty value means no delimiter (restic sends `delimiter=`). */
export function delimiterParam(q: QueryParams): string | undefined {
  const raw = q.get('delimiter');
  return raw === '' ? undefined : raw;
}

/** A boolean parameter (`true`, any case); false when absent or anything else. */
export function booleanParam(q: QueryParams, name: string): boolean {
  return q.get(name)?.toLowerCase() === 'true';
}

/**
 * `versionId` on object operations: undefined when absent; `null` or a well-formed id
 * (store/version-id.ts). An empty or malformed id is 400 InvalidArgument, as S3 answers.
 */
export function versionIdParam(q: QueryParams): string | undefined {
  const v = q.get('versionId');
  if (v === undefined) return undefined;
  if (v === '') throw new S3Error('InvalidArgument', 'Version id cannot be the empty string', { ArgumentName: 'versionId', ArgumentValue: '' });
  if (!isVersionId(v)) throw new S3Error('InvalidArgument', 'Invalid version id specified', { ArgumentName: 'versionId', ArgumentValue: v });
  return v;
}

/** `uploadId`, which must not be empty (an empty id names no upload: `NoSuchUpload`). */
export function uploadIdParam(q: QueryParams): string {
  const v = q.get('uploadId');
  if (!v) throw new S3Error('NoSuchUpload', undefined, { UploadId: v ?? '' });
  return v;
}

const OVERRIDE_PARAMS: Readonly<Record<string, keyof ResponseOverrides>> = {
  'response-content-type': 'content-type',
  'response-content-language': 'content-language',
  'response-expires': 'expires',
  'response-cache-control': 'cache-control',
  'response-content-disposition': 'content-disposition',
  'response-content-encoding': 'content-encoding',
};

/** What an HTTP header value may hold (Node refuses to send anything else: CR, LF, NUL, > U+00FF). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * The `response-*` overrides of GET/HEAD Object, by response header name. Throws
 * `InvalidArgument` for a value that cannot be sent as a header (the values are decoded
 * from the query, so they may hold control or non-Latin-1 characters).
 */
export function responseOverrides(q: QueryParams): ResponseOverrides {
  const out: ResponseOverrides = {};
  for (const [param, header] of Object.entries(OVERRIDE_PARAMS)) {
    const v = q.get(param);
    if (v === undefined) continue;
    if (!HEADER_VALUE.test(v)) throw invalidArgument(`${param} holds characters a header cannot carry`, param, v);
    out[header] = v;
  }
  return out;
}
