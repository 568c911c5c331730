/** @module A provider that delegates everything to another but `put` (for tests that delay,
 * fail or record puts). */
import type { BlobBody, BlobInfo, Provider, PutOptions } from '../../src/provider/provider.js';

/** `inner` with its put replaced by `put`; every other call, optional ones included, goes to `inner`. */
export function withPut(inner: Provider, put: (key: string, body: BlobBody, options?: PutOptions) => Promise<BlobInfo>): Provider {
  return {
    kind: inner.kind,
    capabilities: inner.capabilities,
    put,
    get: (key, options) => inner.get(key, options),
    head: (key) => inner.head(key),
    list: (options) => inner.list(options),
    delete: (key) => inner.delete(key),
    close: () => inner.close(),
    ...(inner.read ? { read: inner.read.bind(inner) } : {}),
    ...(inner.readv ? { readv: inner.readv.bind(inner) } : {}),
    ...(inner.openLog ? { openLog: inner.openLog.bind(inner) } : {}),
  };
}
