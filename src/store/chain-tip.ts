/**
 * @module The chain tip: the newest durable commit a repository knows, and its newest root.
 *
 * One mutable object shared by the commit loop (which advances seq, head and time) and the
 * checkpoint runner (which advances root); both change it only inside an anchor turn
 * (AnchorMover.serial), so each turn reads what its predecessor left.
 */
import type { RecordRef } from './commit.js';
import type { AnchorLog } from './anchor.js';

export interface ChainTip {
  /** Sequence of the newest durable commit (0: none yet). */
  seq: number;
  /** The newest durable commit; undefined before the first. */
  head: RecordRef | undefined;
  /** Time of the newest commit, ms; the next commit's time is later (see repository.ts). */
  time: number;
  /** The newest root (checkpoint) the anchor names, and the sequence it covers. */
  root: RecordRef & { seq: number };
  /** With a commit log: the current segment and the offset right after `head`'s frame, where
   * the next commit goes (commit-log/); undefined on the commit-blob path. */
  log: AnchorLog | undefined;
}
