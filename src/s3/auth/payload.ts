/**
 * @module The values of `x-amz-content-sha256` and what each asks of the body pipeline.
 *
 * The accepted set is S3's (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-auth-using-authorization-header.html):
 * a hex SHA-256, UNSIGNED-PAYLOAD and the four streaming forms; the two ECDSA (SigV4a)
 * streaming forms are recognised and answered `NotImplemented`.
 */
import { S3Error } from '../errors.js';
import type { PayloadMode } from './types.js';

export const STREAMING_SIGNED = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD';
export const STREAMING_SIGNED_TRAILER = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER';
export const STREAMING_UNSIGNED_TRAILER = 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';
const STREAMING_ECDSA = 'STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD';
const STREAMING_ECDSA_TRAILER = 'STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER';
const UNSIGNED = 'UNSIGNED-PAYLOAD';

/** A payload hash value, classified; streaming-signed details are filled in by the verifier. */
export type PayloadKind =
  | { kind: 'sha256'; hex: string }
  | { kind: 'unsigned' }
  | { kind: 'streaming-signed'; trailer: boolean }
  | { kind: 'streaming-unsigned-trailer' };

/**
 * The body contract of an anonymous request: a hex `x-amz-content-sha256` is still checked
 * (the client asked for it), an unsigned body is taken as it is, and a body that claims
 * chunk signatures is refused (nothing could verify them). Pure. Throws S3Error
 * `AccessDenied` for streaming-signed bodies, and what {@link classifyPayloadHash} throws.
 */
export function anonymousPayload(value: string | undefined): PayloadMode {
  if (value === undefined) return { mode: 'unsigned' };
  const kind = classifyPayloadHash(value);
  switch (kind.kind) {
    case 'sha256':
      return { mode: 'sha256', hex: kind.hex };
    case 'unsigned':
      return { mode: 'unsigned' };
    case 'streaming-unsigned-trailer':
      return { mode: 'streaming-unsigned-trailer' };
    case 'streaming-signed':
      throw new S3Error('AccessDenied', 'A signed streaming body needs a signed request');
  }
}

/**
 * Classifies an `x-amz-content-sha256` value. Pure. Throws S3Error `NotImplemented` for the
 * SigV4a (ECDSA) streaming forms and `InvalidArgument` for anything else unknown. Hex is
 * accepted in either case and returned lower-cased.
 */
export function classifyPayloadHash(value: string): PayloadKind {
  switch (value) {
    case UNSIGNED:
      return { kind: 'unsigned' };
    case STREAMING_SIGNED:
      return { kind: 'streaming-signed', trailer: false };
    case STREAMING_SIGNED_TRAILER:
      return { kind: 'streaming-signed', trailer: true };
    case STREAMING_UNSIGNED_TRAILER:
      return { kind: 'streaming-unsigned-trailer' };
    case STREAMING_ECDSA:
    case STREAMING_ECDSA_TRAILER:
      throw new S3Error(
        'NotImplemented',
        `x-amz-content-sha256 ${value} (Signature Version 4A) is not implemented`
      );
  }
  if (/^[0-9a-fA-F]{64}$/.test(value)) return { kind: 'sha256', hex: value.toLowerCase() };
  throw new S3Error(
    'InvalidArgument',
    'x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, ' +
      'STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, ' +
      'STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER ' +
      'or a valid sha256 value.',
    { ArgumentName: 'x-amz-content-sha256', ArgumentValue: value }
  );
}
