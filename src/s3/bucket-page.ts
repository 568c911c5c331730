/**
 * @module ListBuckets pagination: `prefix`, `max-buckets` and an opaque `continuation-token`.
 *
 * The token is the store's authenticated listing token (src/store/tokens.ts) naming the
 * last bucket returned, bound to the service listing (no bucket) and to the prefix, so a
 * token altered in any byte, or replayed with another prefix, is refused with
 * InvalidArgument ("The continuation token provided is incorrect"). Without `max-buckets`
 * every bucket is returned in one page, as S3 does.
 */
import { decodeToken, encodeToken, type ListBinding } from '../store/tokens.js';
import type { ListBucketsParams } from './router/endpoint.js';
import { S3Error } from './errors.js';

export interface BucketPage<T> {
  buckets: T[];
  /** Set when more buckets follow. */
  continuationToken?: string;
}

const binding = (prefix: string): ListBinding => ({ bucket: '', prefix, delimiter: '' });

/**
 * One page of `buckets` (sorted by name, as the store lists them) for `params`. Pure apart
 * from the HMAC. Throws S3Error InvalidArgument for a token that does not verify.
 */
export function pageBuckets<T extends { name: string }>(buckets: readonly T[], params: ListBucketsParams, secret: Uint8Array): BucketPage<T> {
  const prefix = params.prefix ?? '';
  let after: string | undefined;
  if (params.continuationToken !== undefined) {
    try {
      after = decodeToken(secret, binding(prefix), params.continuationToken).key;
    } catch {
      throw new S3Error('InvalidArgument', 'The continuation token provided is incorrect', {
        ArgumentName: 'continuation-token',
        ArgumentValue: params.continuationToken,
      });
    }
  }
  const matching = buckets.filter((b) => b.name.startsWith(prefix) && (after === undefined || b.name > after));
  const max = params.maxBuckets ?? matching.length;
  if (matching.length <= max) return { buckets: matching };
  const page = matching.slice(0, max);
  return { buckets: page, continuationToken: encodeToken(secret, binding(prefix), { key: page[page.length - 1]!.name, skipPrefix: false }) };
}
