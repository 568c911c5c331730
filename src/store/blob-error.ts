/**
 * @module Naming a failure after the blob it happened on: provider, pack and index-run
 * errors become store errors (Corrupt, MissingBlob) that say which blob, for every reader.
 */
import { ProviderError } from '../provider/provider.js';
import { PackError } from '../pack/errors.js';
import { IndexError } from './index/errors.js';
import { StoreError } from './errors.js';

/** Maps provider, pack and index-run failures on `blob` to store errors that name it. */
export function blobError(err: unknown, blob: string): unknown {
  if (err instanceof PackError) return new StoreError('Corrupt', `${blob}: ${err.message}`, { cause: err });
  if (err instanceof IndexError) {
    const where = err.blobKey ?? blob;
    return new StoreError('Corrupt', err.message.includes(where) ? err.message : `${where}: ${err.message}`, { cause: err });
  }
  if (err instanceof ProviderError && err.code === 'NotFound') {
    return new StoreError('MissingBlob', `${blob} is missing`, { cause: err });
  }
  if (err instanceof ProviderError && (err.code === 'LengthMismatch' || err.code === 'Corrupt')) {
    return new StoreError('Corrupt', `${blob}: ${err.message}`, { cause: err });
  }
  return err;
}
