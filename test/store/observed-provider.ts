/**
 * @module A provider wrapper for store tests that records every call and fails the reads a
 * test names: what a repository reads (and when), and how it behaves when one read fails.
 */
import { ProviderError, type Provider } from '../../src/provider/provider.js';

export class ObservedProvider implements Provider {
  readonly kind = 'observed';
  readonly inner: Provider;
  /** Every call made, as `<op> <key>` (`list <prefix>`), in call order. */
  readonly calls: string[] = [];
  /** Gets of these keys fail ('Unavailable') for as long as they are in the set. */
  readonly failing = new Set<string>();
  /** Gets of these keys fail once each, then are removed. */
  readonly failOnce = new Set<string>();
  /** Gets failed so far. */
  failed = 0;

  constructor(inner: Provider) {
    this.inner = inner;
  }
  get capabilities() {
    return this.inner.capabilities;
  }
  /** The keys of the gets made since call index `from`, that `match` accepts. */
  gets(match: (key: string) => boolean, from = 0): string[] {
    return this.calls.slice(from).flatMap((c) => (c.startsWith('get ') && match(c.slice(4)) ? [c.slice(4)] : []));
  }
  async get(...[key, o]: Parameters<Provider['get']>) {
    this.calls.push(`get ${key}`);
    if (this.failing.has(key) || this.failOnce.delete(key)) {
      this.failed++;
      throw new ProviderError('Unavailable', `get ${key}: failed by the test`);
    }
    return this.inner.get(key, o);
  }
  async put(...[key, body, o]: Parameters<Provider['put']>) {
    this.calls.push(`put ${key}`);
    return this.inner.put(key, body, o);
  }
  async head(key: string) {
    this.calls.push(`head ${key}`);
    return this.inner.head(key);
  }
  async list(o?: Parameters<Provider['list']>[0]) {
    this.calls.push(`list ${o?.prefix ?? ''}`);
    return this.inner.list(o);
  }
  async delete(key: string) {
    this.calls.push(`delete ${key}`);
    return this.inner.delete(key);
  }
  /** Leaves the inner provider open (tests reopen on it). */
  close = async () => undefined;
}

/** Whether `key` names a run of a bucket's version log (layout.ts versionRunKey). */
export const isVersionRun = (key: string) => /^runs\/[^/]+\/v-/.test(key);
