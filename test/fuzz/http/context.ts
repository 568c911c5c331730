/**
 * @module What every fuzz-case generator knows about the server under test.
 */
import type { Credentials } from '../../../src/sigv4/index.js';

export interface FuzzContext {
  /** `127.0.0.1:<port>`, as signed in `host`. */
  host: string;
  /** The server's base domain: `<bucket>.<baseDomain>:<port>` in Host is virtual-hosted style. */
  baseDomain: string;
  credentials: Credentials;
  region: string;
  /** Holds the known objects; only reads and requests that must fail may target it. */
  knownBucket: string;
  /** Where validly signed writes go. */
  playBucket: string;
  knownKeys: string[];
  /**
   * Multipart uploads open in the play bucket, each with part 1 uploaded (its ETag, so a
   * CompleteMultipartUpload can succeed). Reopened every few thousand cases, since the
   * fuzzer completes and aborts them.
   */
  uploads: { key: string; uploadId: string; etag: string }[];
}
