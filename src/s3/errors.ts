/**
 * @module S3 errors: one class, one code → HTTP status table, one XML renderer.
 *
 * Clients branch on `<Code>` (restic: `NoSuchKey`; SDKs: `SlowDown`, `RequestTimeTooSkewed`
 * for retries and clock correction), so codes and statuses follow the AWS list
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html#ErrorCodeList) and
 * the default messages are the ones S3 sends. Nothing else in the server maps codes to
 * statuses.
 */
import { replaceUnsafeXmlChars, escapeXmlText } from './xml/escape.js';

/** Every error code Strata emits, with its HTTP status and S3's default message. */
export const CODE_STATUS = {
  AccessControlListNotSupported: [400, 'The bucket does not allow ACLs'],
  AccessDenied: [403, 'Access Denied'],
  AccessForbidden: [403, 'CORSResponse: This CORS request is not allowed.'],
  AuthorizationHeaderMalformed: [400, 'The authorization header is malformed.'],
  AuthorizationQueryParametersError: [400, 'Query-string authentication parameters are malformed.'],
  BadDigest: [
    400,
    'The Content-MD5 or checksum value that you specified did not match what the server received.',
  ],
  BucketAlreadyExists: [
    409,
    'The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.',
  ],
  BucketAlreadyOwnedByYou: [
    409,
    'Your previous request to create the named bucket succeeded and you already own it.',
  ],
  BucketNotEmpty: [409, 'The bucket you tried to delete is not empty'],
  ConditionalRequestConflict: [
    409,
    'The conditional request cannot succeed due to a conflicting operation against this resource.',
  ],
  EntityTooLarge: [400, 'Your proposed upload exceeds the maximum allowed object size.'],
  EntityTooSmall: [400, 'Your proposed upload is smaller than the minimum allowed object size.'],
  ExpiredToken: [400, 'The provided token has expired.'],
  IllegalLocationConstraintException: [
    400,
    'The unspecified location constraint is incompatible for the region specific endpoint this request was sent to.',
  ],
  IncompleteBody: [
    400,
    'You did not provide the number of bytes specified by the Content-Length HTTP header.',
  ],
  IncorrectNumberOfFilesInPostRequest: [400, 'POST requires exactly one file upload per request.'],
  InternalError: [500, 'We encountered an internal error. Please try again.'],
  InvalidAccessKeyId: [403, 'The AWS Access Key Id you provided does not exist in our records.'],
  InvalidArgument: [400, 'Invalid Argument'],
  InvalidBucketAclWithObjectOwnership: [
    400,
    "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting",
  ],
  InvalidBucketName: [400, 'The specified bucket is not valid.'],
  InvalidBucketState: [409, 'The request is not valid with the current state of the bucket.'],
  InvalidDigest: [400, 'The Content-MD5 you specified is not valid.'],
  InvalidEncryptionAlgorithmError: [
    400,
    'The encryption request you specified is not valid. The valid value is AES256.',
  ],
  InvalidLocationConstraint: [400, 'The specified location constraint is not valid.'],
  InvalidObjectState: [403, 'The operation is not valid for the current state of the object.'],
  InvalidPolicyDocument: [
    400,
    'The content of the form does not meet the conditions specified in the policy document.',
  ],
  InvalidPart: [
    400,
    "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
  ],
  InvalidPartNumber: [416, 'The requested partnumber is not satisfiable'],
  InvalidPartOrder: [
    400,
    'The list of parts was not in ascending order. Parts must be ordered by part number.',
  ],
  InvalidRange: [416, 'The requested range is not satisfiable'],
  InvalidRequest: [400, 'Invalid Request'],
  InvalidRetentionPeriod: [400, 'Default retention period must be a positive integer value.'],
  InvalidStorageClass: [400, 'The storage class you specified is not valid'],
  InvalidTag: [400, 'The tag provided was not a valid tag.'],
  InvalidToken: [400, 'The provided token is malformed or otherwise invalid.'],
  InvalidURI: [400, "Couldn't parse the specified URI."],
  KeyTooLongError: [400, 'Your key is too long'],
  MalformedACLError: [
    400,
    'The XML you provided was not well-formed or did not validate against our published schema.',
  ],
  MalformedPolicy: [400, "Policies must be valid JSON and the first byte must be '{'"],
  MalformedXML: [
    400,
    'The XML you provided was not well-formed or did not validate against our published schema',
  ],
  MalformedPOSTRequest: [
    400,
    'The body of your POST request is not well-formed multipart/form-data.',
  ],
  MaxMessageLengthExceeded: [400, 'Your request was too big.'],
  MaxPostPreDataLengthExceeded: [
    400,
    'Your POST request fields preceding the upload file were too large.',
  ],
  MetadataTooLarge: [400, 'Your metadata headers exceed the maximum allowed metadata size.'],
  MethodNotAllowed: [405, 'The specified method is not allowed against this resource.'],
  MissingContentLength: [411, 'You must provide the Content-Length HTTP header.'],
  MissingRequestBodyError: [400, 'Request Body is empty'],
  MissingSecurityHeader: [400, 'Your request is missing a required header.'],
  NoSuchBucket: [404, 'The specified bucket does not exist'],
  NoSuchBucketPolicy: [404, 'The bucket policy does not exist'],
  NoSuchCORSConfiguration: [404, 'The CORS configuration does not exist'],
  NoSuchKey: [404, 'The specified key does not exist.'],
  NoSuchObjectLockConfiguration: [404, 'The specified object does not have a ObjectLock configuration'],
  NoSuchLifecycleConfiguration: [404, 'The lifecycle configuration does not exist'],
  NoSuchPublicAccessBlockConfiguration: [404, 'The public access block configuration was not found'],
  NoSuchTagSet: [404, 'The TagSet does not exist'],
  NoSuchUpload: [
    404,
    'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
  ],
  NoSuchVersion: [404, 'The specified version does not exist.'],
  NotImplemented: [501, 'A header you provided implies functionality that is not implemented.'],
  NotModified: [304, 'Not Modified'],
  ObjectLockConfigurationNotFoundError: [
    404,
    'Object Lock configuration does not exist for this bucket',
  ],
  OwnershipControlsNotFoundError: [404, 'The bucket ownership controls were not found'],
  OperationAborted: [
    409,
    'A conflicting conditional operation is currently in progress against this resource. Try again.',
  ],
  PreconditionFailed: [412, 'At least one of the pre-conditions you specified did not hold'],
  // A full history budget (history-budget.ts): 403 so clients do not retry; the message says how to free room.
  QuotaExceeded: [403, 'The history budget of this store is full.'],
  RequestHeaderSectionTooLarge: [
    400,
    'Your request header section exceeds the maximum allowed size.',
  ],
  RequestTimeout: [
    400,
    'Your socket connection to the server was not read from or written to within the timeout period.',
  ],
  RequestTimeTooSkewed: [
    403,
    'The difference between the request time and the current time is too large.',
  ],
  ServerSideEncryptionConfigurationNotFoundError: [404, 'The server side encryption configuration was not found'],
  ServiceUnavailable: [503, 'Service is unable to handle request.'],
  SignatureDoesNotMatch: [
    403,
    'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
  ],
  SlowDown: [503, 'Please reduce your request rate.'],
  TooManyBuckets: [400, 'You have attempted to create more buckets than allowed'],
  UnexpectedContent: [400, 'This request does not support content'],
  UnresolvableGrantByEmailAddress: [
    400,
    'The email address you provided does not match any account on record.',
  ],
  XAmzContentSHA256Mismatch: [
    400,
    "The provided 'x-amz-content-sha256' header does not match what was computed.",
  ],
} as const satisfies Record<string, readonly [number, string]>;

export type S3ErrorCode = keyof typeof CODE_STATUS;

/** Extra elements of the `<Error>` document, in order (e.g. Key, BucketName, ServerTime). */
export type S3ErrorDetail = Readonly<Record<string, string | number>>;

/**
 * An error with an S3 code. `status` comes from {@link CODE_STATUS}; `message` defaults to
 * S3's text for the code; `detail` holds extra XML elements (names must be XML names such
 * as `Key`, `StringToSign`, `X-Amz-Expires` is allowed too).
 */
export class S3Error extends Error {
  override readonly name = 'S3Error';
  readonly code: S3ErrorCode;
  readonly status: number;
  readonly detail: S3ErrorDetail;

  constructor(code: S3ErrorCode, message?: string, detail: S3ErrorDetail = {}) {
    super(message ?? CODE_STATUS[code][1]);
    this.code = code;
    this.status = CODE_STATUS[code][0];
    this.detail = detail;
  }
}

/** Whether `e` is an S3Error (optionally with the given code). */
export function isS3Error(e: unknown, code?: S3ErrorCode): e is S3Error {
  return e instanceof S3Error && (code === undefined || e.code === code);
}

/**
 * `e` itself when it is an S3Error, otherwise a generic `InternalError` (the original
 * message is not exposed to clients; log `e` separately). Pure.
 */
export function toS3Error(e: unknown): S3Error {
  return e instanceof S3Error ? e : new S3Error('InternalError');
}

/** XML element names allowed for detail entries (S3 uses names such as `X-Amz-Expires`). */
const DETAIL_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

function textElement(name: string, value: string | number): string {
  // Error documents echo client input (keys, canonical requests): characters that XML 1.0
  // cannot carry are replaced by U+FFFD so the document always parses.
  return `<${name}>${escapeXmlText(replaceUnsafeXmlChars(String(value)))}</${name}>`;
}

/**
 * The S3 error document: `<Error>` (no namespace, as S3 sends it) with Code, Message, the
 * detail elements in insertion order, Resource and RequestId. Detail entries whose names
 * are not XML names, or that would repeat Code/Message/Resource/RequestId, are skipped.
 * Pure. HEAD responses must not carry it (status and headers only).
 */
export function renderError(err: S3Error, requestId: string, resource: string): string {
  let body = textElement('Code', err.code) + textElement('Message', err.message);
  for (const [name, value] of Object.entries(err.detail)) {
    if (!DETAIL_NAME.test(name)) continue;
    if (name === 'Code' || name === 'Message' || name === 'Resource' || name === 'RequestId')
      continue;
    body += textElement(name, value);
  }
  body += textElement('Resource', resource) + textElement('RequestId', requestId);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error>${body}</Error>`;
}
