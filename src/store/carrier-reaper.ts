/**
 * @module Deleting the carrier chunks of multipart parts that nothing can reference any more,
 * once the commit that made them unreachable is durable: parts of an aborted or expired
 * upload, a part replaced by a new upload of its number, parts a Complete left out, parts of
 * the uploads of a deleted bucket. Such parts were never listed by a Complete, so no object
 * (and no copy of one) names their chunks; nothing else reads part chunks.
 *
 * There is no garbage collector yet, so these deletions are the only way such chunks go away.
 * They are best effort: a crash between the commit and the deletion, or a failed delete,
 * leaks the chunk (logged; a future GC reclaims it). Deletes run at most REAP_PARALLEL at a
 * time for the whole repository, so a bucket deletion with many uploads cannot flood the
 * provider.
 */
import type { Provider } from '../provider/provider.js';

/** Concurrent blob deletes, repository-wide: enough to hide fs/S3 latency, few enough to share. */
const REAP_PARALLEL = 8;

export interface ReaperStats {
  /** Chunk blobs deleted. */
  deleted: number;
  /** Deletes that failed (the chunk leaked). */
  failed: number;
}

export class CarrierReaper {
  readonly stats: ReaperStats = { deleted: 0, failed: 0 };
  readonly #provider: Provider;
  readonly #log: (event: string, fields: Record<string, unknown>) => void;
  #active = 0;
  readonly #slots: (() => void)[] = [];
  readonly #background = new Set<Promise<unknown>>();

  constructor(provider: Provider, log: (event: string, fields: Record<string, unknown>) => void) {
    this.#provider = provider;
    this.#log = log;
  }

  /**
   * Deletes every blob `blobs` yields (deleting a missing blob succeeds) and resolves with how
   * many were deleted. Never rejects: a failure to delete, or to produce the list, is logged
   * as `uploads.reap_failed` with `what` and counted.
   */
  async reap(what: string, blobs: Iterable<string> | AsyncIterable<string>): Promise<number> {
    const pending = new Set<Promise<void>>();
    let deleted = 0;
    let failed = 0;
    let error: unknown;
    try {
      for await (const blob of blobs) {
        await this.#acquire();
        const p = this.#provider
          .delete(blob)
          .then(
            () => void deleted++,
            (err: unknown) => {
              failed++;
              error ??= err;
            }
          )
          .finally(() => {
            pending.delete(p);
            this.#release();
          });
        pending.add(p);
      }
    } catch (err) {
      error ??= err;
      failed++;
    }
    await Promise.all(pending);
    this.stats.deleted += deleted;
    this.stats.failed += failed;
    if (failed > 0) this.#log('uploads.reap_failed', { what, deleted, failed, error: String(error) });
    return deleted;
  }

  /** Runs reap() without waiting for it; idle() waits for every such run. */
  background(what: string, blobs: Iterable<string> | AsyncIterable<string>): void {
    const p = this.reap(what, blobs).finally(() => this.#background.delete(p));
    this.#background.add(p);
  }

  /** Resolves once every background reap started so far (and any they lead to) has finished. */
  async idle(): Promise<void> {
    while (this.#background.size > 0) await Promise.all(this.#background);
  }

  async #acquire(): Promise<void> {
    if (this.#active < REAP_PARALLEL) {
      this.#active++;
      return;
    }
    await new Promise<void>((resolve) => this.#slots.push(resolve));
  }

  #release(): void {
    const next = this.#slots.shift();
    if (next) next();
    else this.#active--;
  }
}
