/**
 * @module Types of server-side request authentication (SigV4 header, SigV4 presigned,
 * SigV2 presigned) and of the payload contract it hands to the body pipeline.
 */

/** A request as the verifier needs it: nothing is read from a socket here. */
export interface AuthRequest {
  method: string;
  /** The exact request-target as received, e.g. `/b/dir/../x?x-id=PutObject`. */
  rawTarget: string;
  /** Lower-case names; repeated headers joined with `,`. */
  headers: Readonly<Record<string, string | undefined>>;
  /** The server's current time. */
  now: Date;
}

/** The secret for an access key id, or undefined when the key is unknown. */
export type SecretLookup = (accessKeyId: string) => string | undefined;

export interface VerifyOptions {
  /** Largest accepted clock difference, in ms; default 15 min (S3's). */
  maxSkewMs?: number;
  /**
   * Strict mode: only this region is accepted in credential scopes
   * (`AuthorizationHeaderMalformed` otherwise). Default: any region, each request being
   * verified with the region of its own scope. Also the region reported for SigV2.
   */
  region?: string;
  /**
   * Base domain for virtual-hosted-style requests (as for route()): SigV2 signs the bucket
   * named by the host as part of its resource.
   */
  baseDomain?: string;
}

/**
 * How the body must be handled after authentication:
 * - `sha256`: a plain body whose SHA-256 must equal `hex` (else `XAmzContentSHA256Mismatch`);
 * - `unsigned`: a plain body, not covered by the signature;
 * - `streaming-signed`: an aws-chunked body whose chunk signatures chain from
 *   `seedSignature` (see src/s3/chunked); `trailer` when trailers are signed too;
 * - `streaming-unsigned-trailer`: an aws-chunked body without chunk signatures, with
 *   (unsigned) trailers.
 */
export type PayloadMode =
  | { mode: 'sha256'; hex: string }
  | { mode: 'unsigned' }
  | {
      mode: 'streaming-signed';
      trailer: boolean;
      seedSignature: string;
      /** 32-byte SigV4 signing key of the request's scope; shared, do not modify. */
      signingKey: Uint8Array;
      /** `yyyymmdd/region/s3/aws4_request`. */
      scope: string;
      /** The request's `yyyymmddThhmmssZ`. */
      amzDate: string;
    }
  | { mode: 'streaming-unsigned-trailer' };

/** A request signed by an access key. */
export interface SignedAuth {
  accessKeyId: string;
  /** The region of the credential scope (SigV4), or the configured/default one (SigV2). */
  region: string;
  signatureVersion: 2 | 4;
  /** Which form carried the signature (`post-form`: the fields of a POST Object form). */
  form: 'header' | 'presigned' | 'post-form';
  payload: PayloadMode;
  /** SigV4 (header and presigned): the lower-case names of the headers the signature covers. */
  signedHeaders?: readonly string[];
}

/**
 * A request carrying no authentication at all. It is not refused here: authorization
 * decides (a public-read object, a policy allowing everyone), and refuses it otherwise.
 */
export interface AnonymousAuth {
  accessKeyId: null;
  /** The configured region, or us-east-1. */
  region: string;
  signatureVersion: null;
  form: 'anonymous';
  payload: PayloadMode;
}

export type AuthResult = SignedAuth | AnonymousAuth;
