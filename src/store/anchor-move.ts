/**
 * @module Moving the anchor: compare-and-swap, its ambiguity rules, and the turn order.
 *
 * Anchor moves never overlap: commits and checkpoints take turns (serial), each reading the
 * sequence, head and root its predecessor left. A move is a conditional put (`ifMatch` the
 * etag written or read last); an ambiguous failure is resolved by reading the anchor back.
 */
import type { Provider } from '../provider/provider.js';
import { mayStillLand, ProviderError } from '../provider/provider.js';
import { ANCHOR_KEY } from './layout.js';
import { encodeAnchor, FORMAT, namesKeyedLog, sameAnchor, sameRef, type Anchor, type AnchorLog } from './anchor.js';
import type { RecordRef } from './commit.js';
import { readAnchor } from './recovery.js';
import { StoreError } from './errors.js';
import type { Fence } from './fencing.js';
import type { InflightTicket } from './inflight-blobs.js';

/** What an anchor names: the newest commit (sequence, head), the newest root, and with a
 * commit log the position after the head's frame. */
export interface AnchorTarget {
  seq: number;
  head: RecordRef | undefined;
  root: RecordRef & { seq: number };
  log?: AnchorLog | undefined;
}

export class AnchorMover {
  readonly #provider: Provider;
  readonly #fence: Fence;
  readonly #writer: string;
  /** The repository's frame keys' id (commit-log/frame.ts), named by anchors of keyed segments. */
  readonly #frameKeyId: string;
  #etag: string;
  /** What the anchor named when we last wrote or read it. */
  #known: AnchorTarget;
  /** The anchor moves, in order: commits and checkpoints take turns (serial). */
  #turn: Promise<unknown> = Promise.resolve();
  /** Tickets of writes that may yet be committed (closeTicket), closed at the next move. */
  #held: InflightTicket[] = [];

  constructor(provider: Provider, fence: Fence, writer: string, loaded: Anchor, etag: string, frameKeyId: string) {
    this.#provider = provider;
    this.#frameKeyId = frameKeyId;
    this.#fence = fence;
    this.#writer = writer;
    this.#etag = etag;
    this.#known = { seq: loaded.seq, head: loaded.head, root: loaded.root, log: loaded.log };
  }

  /**
   * Runs `fn` (an anchor move and what must happen with it) once every anchor move queued
   * before has settled; anchor moves never overlap, and each reads the sequence, head and root
   * its predecessor left. Resolves or rejects as `fn` does.
   */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const turn = this.#turn.then(fn);
    this.#turn = turn.catch(() => undefined);
    return turn;
  }

  /**
   * Compare-and-swaps the anchor to `target` with time `time`. An ambiguous failure is
   * resolved by reading the anchor back: exactly the anchor we wrote means it landed; the
   * anchor we last knew (same etag, sequence, head and root) means it did not (StoreError
   * 'Io', nothing changed); anything else fences (StoreError 'Unsafe'), and so does a failure
   * whose write may still land later (ProviderError.mayLand), which no read-back settles. A checkpoint keeps
   * sequence and head, so only the whole anchor — root included — tells its write apart from
   * the old one. Call it inside serial().
   */
  async move(target: AnchorTarget, time: number): Promise<void> {
    const { seq, head, root, log } = target;
    const anchor: Anchor = { format: FORMAT, seq, root, time, writer: this.#writer };
    if (head) anchor.head = head;
    if (log) anchor.log = { key: log.key, offset: log.offset };
    if (namesKeyedLog(anchor)) anchor.frameKeyId = this.#frameKeyId;
    const conditional = this.#provider.capabilities.conditionalWrites;
    try {
      const info = await this.#provider.put(ANCHOR_KEY, encodeAnchor(anchor), conditional ? { ifMatch: this.#etag } : { replaces: true });
      this.#landed(info.etag, target);
      return;
    } catch (err) {
      if (err instanceof ProviderError && err.code === 'PreconditionFailed') {
        throw this.#fence.fence(`the anchor was moved by another writer (expected etag ${this.#etag})`, err);
      }
      if (mayStillLand(err)) {
        // A copy of this anchor may still land after any read-back: "did not move" now could
        // turn into "moved" after commits were acknowledged on the old one.
        throw this.#fence.fence('the anchor update failed while a copy of it may still land: its outcome cannot be read back', err);
      }
      let current;
      try {
        current = await readAnchor(this.#provider, false);
      } catch (readErr) {
        throw this.#fence.fence(`anchor update failed and its state cannot be read back: ${String(readErr)}`, err);
      }
      if (current && sameAnchor(current.anchor, anchor)) {
        this.#landed(current.etag, target);
        return;
      }
      const known = current?.anchor;
      const was = this.#known;
      if (
        known && current?.etag === this.#etag && known.seq === was.seq &&
        sameRef(known.head, was.head) && sameRef(known.root, was.root) && known.root.seq === was.root.seq &&
        known.log?.key === was.log?.key && known.log?.offset === was.log?.offset
      ) {
        // Not moved yet: a backend still holding the request may apply it later (a guarded
        // write lands only while the anchor stays where it was, and the next move then finds
        // out), so what this commit names must not be deleted as garbage.
        throw new StoreError('Io', `anchor update to ${seq} failed; the anchor did not move`, { cause: err, mayCommit: true });
      }
      throw this.#fence.fence('the anchor is in an unexpected state after a failed update', err);
    }
  }

  /**
   * Ends the GC protection of a write's blobs (inflight-blobs.ts): now, or, when `err` says the
   * write may yet be committed (StoreError.mayCommit: its anchor move read back as not moved
   * and may still land), once the anchor moves again. A late guarded move can land only until
   * then: after it, the old etag no longer matches; and if it landed first, that move fails and
   * fences, and the tickets stay held.
   */
  closeTicket(ticket: InflightTicket, err: unknown): void {
    if (err instanceof StoreError && err.mayCommit) this.#held.push(ticket);
    else ticket.close();
  }

  #landed(etag: string, target: AnchorTarget): void {
    this.#etag = etag;
    this.#known = { ...target };
    for (const t of this.#held.splice(0)) t.close();
  }
}
