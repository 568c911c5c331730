/**
 * @module Fencing: how a repository stops writing when it is unsure of its durable state.
 *
 * If the anchor may have moved without us knowing (an ambiguous failure we could not resolve
 * by re-reading it), or memory could not take in a commit the anchor already names, the
 * repository fences itself: reads go on, writes fail with 'Unsafe' until it is reopened — it
 * never commits on top of a state it is unsure of, and never gives a sequence number the
 * anchor has named to another commit.
 */
import { StoreError } from './errors.js';

export class Fence {
  #fenced: StoreError | null = null;
  readonly #log: (event: string, fields: Record<string, unknown>) => void;

  constructor(log: (event: string, fields: Record<string, unknown>) => void) {
    this.#log = log;
  }

  /** The error every write now fails with, or null while the repository may write. */
  get error(): StoreError | null {
    return this.#fenced;
  }

  /**
   * Fences the repository (for good, until it is reopened) and returns the StoreError 'Unsafe'
   * that writes fail with from now on; logs 'repository.fenced'. The caller throws it.
   */
  fence(why: string, cause: unknown): StoreError {
    this.#fenced = new StoreError('Unsafe', `writes stopped until the repository is reopened: ${why}`, { cause });
    this.#log('repository.fenced', { reason: why });
    return this.#fenced;
  }
}
