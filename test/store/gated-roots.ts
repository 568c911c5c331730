/**
 * A provider wrapper for checkpoint tests: holds every root write (a checkpoint's last put
 * before its anchor move) while the gate is closed, so a checkpoint is provably in flight while
 * a test goes on writing; optionally fails the puts `failPut` accepts.
 */
import { ProviderError, type Provider } from '../../src/provider/provider.js';
import { ObservedProvider } from './observed-provider.js';

export class GatedRootsProvider extends ObservedProvider {
  #gate: { promise: Promise<void>; open: () => void } | undefined;
  /** Root writes waiting at the gate. */
  waiting = 0;
  failPut: ((key: string) => boolean) | undefined;

  /** Closes the gate: root writes wait until `release`. */
  hold(): void {
    let open!: () => void;
    const promise = new Promise<void>((r) => (open = r));
    this.#gate = { promise, open };
  }
  release(): void {
    this.#gate?.open();
    this.#gate = undefined;
  }
  override async put(...[key, body, o]: Parameters<Provider['put']>) {
    if (key.startsWith('roots/') && this.#gate) {
      this.waiting++;
      await this.#gate.promise;
      this.waiting--;
    }
    if (this.failPut?.(key)) throw new ProviderError('Unavailable', `put ${key}: failed by the test`);
    return super.put(key, body, o);
  }
}
