/**
 * @module What SigV4 header auth and presigned auth share: the credential scope, the time
 * checks, the signed-header rules and the signature comparison.
 *
 * Error codes follow S3: scope problems are `AuthorizationHeaderMalformed` (header) or
 * `AuthorizationQueryParametersError` (presigned); an `x-amz-*` header the client did not
 * sign is `AccessDenied` with `HeadersNotSigned` (else a presigned PUT could gain e.g.
 * `x-amz-copy-source`); a wrong signature is `SignatureDoesNotMatch` with the
 * StringToSign and CanonicalRequest the server computed, as S3 sends them.
 */
import {
  canonicalHeaders,
  canonicalRequest,
  credentialScope,
  formatAmzDate,
  normalizeHeaderValue,
  stringToSign,
  wireBytes,
  wireText,
} from '../../sigv4/canonical.js';
import { hmacSha256Hex, signatureMatches } from '../../sigv4/hash.js';
import { deriveSigningKey } from '../../sigv4/signing-key.js';
import { S3Error } from '../errors.js';
import { canonicalQueryOf, canonicalUriCandidates, type ReadTarget } from './target.js';
import type { AuthRequest } from './types.js';

/** The only service name S3 signs with. */
const S3_SERVICE = 's3';
/** The last component of every SigV4 credential scope. */
const SCOPE_TERMINATOR = 'aws4_request';

export type V4Form = 'header' | 'presigned';

/** A form-appropriate "malformed authentication" error. */
export function malformedAuth(form: V4Form, reason: string, detail = {}): S3Error {
  return form === 'header'
    ? new S3Error(
        'AuthorizationHeaderMalformed',
        `The authorization header is malformed; ${reason}`,
        detail
      )
    : new S3Error(
        'AuthorizationQueryParametersError',
        `Error parsing the X-Amz-Credential parameter; ${reason}`,
        detail
      );
}

export interface Credential {
  accessKeyId: string;
  /** `yyyymmdd`. */
  date: string;
  region: string;
}

interface CredentialParts {
  parts: number;
  accessKeyId: string;
  date: string | undefined;
  region: string | undefined;
  service: string | undefined;
  terminator: string | undefined;
}

/** Credential texts split lately (at most CREDENTIAL_MEMO entries of at most
 * CREDENTIAL_MEMO_CHARS characters; emptied when full): a client sends the same one with every
 * request of a day. The checks run on every request. */
const credentialMemo = new Map<string, CredentialParts>();
const CREDENTIAL_MEMO = 64;
const CREDENTIAL_MEMO_CHARS = 256;

/** `raw` split at `/`: the last four parts and the access key id before them. */
function credentialParts(raw: string): CredentialParts {
  let c = credentialMemo.get(raw);
  if (c === undefined) {
    const parts = raw.split('/');
    const [date, region, service, terminator] = parts.slice(-4);
    c = { parts: parts.length, accessKeyId: parts.slice(0, -4).join('/'), date, region, service, terminator };
    if (raw.length <= CREDENTIAL_MEMO_CHARS) {
      if (credentialMemo.size >= CREDENTIAL_MEMO) credentialMemo.clear();
      credentialMemo.set(raw, c);
    }
  }
  return c;
}

/**
 * Parses `AKID/yyyymmdd/region/s3/aws4_request` and checks it against the request's
 * `amzDate` and the strict region, if any. Pure. Throws the form's malformed error.
 */
export function parseCredential(
  raw: string,
  form: V4Form,
  amzDate: string,
  strictRegion: string | undefined
): Credential {
  const { parts, accessKeyId, date, region, service, terminator } = credentialParts(raw);
  if (parts < 5 || !accessKeyId || !region || !/^[0-9]{8}$/.test(date ?? ''))
    throw malformedAuth(
      form,
      'the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".'
    );
  if (service !== S3_SERVICE)
    throw malformedAuth(form, `incorrect service "${service}". This endpoint belongs to "s3".`);
  if (terminator !== SCOPE_TERMINATOR)
    throw malformedAuth(
      form,
      `incorrect terminal "${terminator}". This endpoint uses "aws4_request".`
    );
  if (date !== amzDate.slice(0, 8))
    throw malformedAuth(form, 'Invalid credential date. Date is not the same as X-Amz-Date.');
  if (strictRegion !== undefined && region !== strictRegion)
    throw malformedAuth(form, `the region '${region}' is wrong; expecting '${strictRegion}'`, {
      Region: strictRegion,
    });
  return { accessKeyId, date: date!, region };
}

/** Throws `RequestTimeTooSkewed` when `requestTime` is more than `maxSkewMs` from `now`. */
export function checkSkew(requestTime: Date, amzDate: string, now: Date, maxSkewMs: number): void {
  if (Math.abs(now.getTime() - requestTime.getTime()) <= maxSkewMs) return;
  throw new S3Error('RequestTimeTooSkewed', undefined, {
    RequestTime: amzDate,
    ServerTime: now.toISOString(),
    MaxAllowedSkewMilliseconds: maxSkewMs,
  });
}

/** The secret of `accessKeyId`; throws `InvalidAccessKeyId` when unknown. */
export function secretOf(lookup: (id: string) => string | undefined, accessKeyId: string): string {
  const secret = lookup(accessKeyId);
  if (secret === undefined)
    throw new S3Error('InvalidAccessKeyId', undefined, { AWSAccessKeyId: accessKeyId });
  return secret;
}

/**
 * The request's headers by lower-case name (repeated names joined with `,`, as
 * lowerCaseHeaders does), with only the `signed` ones' values normalised: the others are
 * only looked at by name. Pure.
 */
function requestHeaders(raw: AuthRequest['headers'], signed: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const name in raw) {
    const value = raw[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    const v = signed.includes(lower) ? normalizeHeaderValue(value) : value;
    const prev = out.get(lower);
    out.set(lower, prev === undefined ? v : `${prev},${v}`);
  }
  return out;
}

export interface SignatureClaim {
  form: V4Form;
  credential: Credential;
  secret: string;
  amzDate: string;
  /** The `;`-separated list as sent. */
  signedHeaders: string;
  signature: string;
  /** The HashedPayload line of the canonical request. */
  payloadHash: string;
  /** Query pairs that enter the canonical query (presigned: all but X-Amz-Signature). */
  query: readonly (readonly [string, string])[];
  /** Header names that may be present without being signed (besides non-`x-amz-` ones). */
  exemptHeaders?: ReadonlySet<string>;
}

/**
 * Recomputes the signature of `req` and compares it in constant time. Pure apart from the
 * signing-key cache. Returns the signing key and scope (for streaming bodies). Throws
 * S3Error: malformed (SignedHeaders empty or without `host`), `AccessDenied` (an unsigned
 * `x-amz-*` header), `SignatureDoesNotMatch`.
 */
export function verifySignature(
  req: AuthRequest,
  target: ReadTarget,
  claim: SignatureClaim
): { signingKey: Buffer; scope: string } {
  const signed = claim.signedHeaders.split(';');
  if (signed.some((n) => n === '' || n !== n.toLowerCase()))
    throw malformedAuth(claim.form, 'SignedHeaders must be a list of lower-case header names.');
  if (!signed.includes('host')) throw malformedAuth(claim.form, 'SignedHeaders must include host.');
  const headers = requestHeaders(req.headers, signed);
  const notSigned: string[] = [];
  for (const n of headers.keys()) {
    if (n.startsWith('x-amz-') && !signed.includes(n) && !claim.exemptHeaders?.has(n)) notSigned.push(n);
  }
  if (notSigned.length > 0)
    throw new S3Error(
      'AccessDenied',
      'There were headers present in the request which were not signed',
      {
        HeadersNotSigned: notSigned.join(', '),
      }
    );

  const { credential: c } = claim;
  const scope = credentialScope(claim.amzDate, c.region, S3_SERVICE);
  const signingKey = deriveSigningKey(claim.secret, c.date, c.region, S3_SERVICE);
  const mismatch = (creq: string, sts: string, why?: string) =>
    new S3Error('SignatureDoesNotMatch', why, {
      AWSAccessKeyId: c.accessKeyId,
      StringToSign: sts,
      SignatureProvided: claim.signature,
      CanonicalRequest: creq,
    });

  let canonical: { canonical: string; signedHeaders: string };
  try {
    canonical = canonicalHeaders(headers, signed);
  } catch {
    const missing = signed.filter((n) => !headers.has(n)).join(', ');
    throw mismatch('', '', `Signed header(s) missing from the request: ${missing}`);
  }
  const query = canonicalQueryOf(claim.query);
  let first: { creq: string; sts: string } | undefined;
  for (const uri of canonicalUriCandidates(target)) {
    const creq = canonicalRequest({
      method: req.method,
      canonicalUri: uri,
      canonicalQuery: query,
      canonicalHeaders: canonical.canonical,
      signedHeaders: canonical.signedHeaders,
      payloadHash: claim.payloadHash,
    });
    const sts = stringToSign(claim.amzDate, scope, wireText(creq));
    if (signatureMatches(hmacSha256Hex(signingKey, sts), claim.signature))
      return { signingKey, scope };
    first ??= { creq, sts };
  }
  // Shown as text: the wire bytes read as UTF-8 (what a client signing UTF-8 compares to).
  throw mismatch(Buffer.from(wireBytes(first!.creq)).toString('utf8'), first!.sts);
}

/** `yyyymmddThhmmssZ` of an HTTP-date (`Date` header), or undefined when unparseable. */
export function amzDateFromHttpDate(value: string): string | undefined {
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : formatAmzDate(new Date(t));
}
