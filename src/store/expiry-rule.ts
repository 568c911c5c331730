/**
 * @module The expiry rule: which version log entries of ONE key no read inside the bucket's
 * history window can reach any more, decided along the key's entries newest first (the order
 * of the log) with memory bounded by what must be held back (see below).
 *
 * Reads of a key as of a time t go through versions-read.ts PastFilter: the newest entry
 * written by t that S3 still showed at t decides. That makes every entry e "live" on one
 * interval of time L(e) = [written, end), where end is its removal time (removed entries),
 * and for a null write also the time of the next newer null write of the key (S3 replaces
 * the null version); an entry decides at t exactly when t is in L(e) and in no L(f) of a
 * newer entry f. The window is W = [start, now] with start = max(now - window, created,
 * what was already expired).
 *
 * An entry is DROPPED only when all of these hold:
 *   1. S3 cannot see it now: it is removed (DELETE ?versionId), a null write replaced by a
 *      newer null write, or an absence (an unversioned DELETE). Noncurrent versions and delete
 *      markers S3 lists stay until S3 removes them (DELETE ?versionId, lifecycle).
 *   2. It was written before the window's start (history inside the window is kept whole).
 *   3. It decides no read at any time of W: L(e) ∩ W is empty or covered by newer entries'
 *      L. The entry current at the window's start is therefore kept, and so is the current
 *      entry (it decides at now).
 *   4. No active retention or legal hold protects it (object-lock.ts isLocked at now).
 *   5. Null writes are dropped only together with every older null write of the key (oldest
 *      first): a null write ends the life of older ones, so dropping it while an older one
 *      stays would make that one readable (or visible) again.
 * An absence that decides reads in W (the key was deleted before the window and not written
 * since, or only later) is dropped too when every older entry of the key is: with nothing
 * older left, no entry answers those reads, which is what the absence answered.
 *
 * Why this preserves every read in W: a dropped entry decides nothing in W (3, or the absence
 * case), so every decision in W is made by a kept entry, and removing entries that decide
 * nothing can only unblock older entries — through the null rule (5 keeps that closed) or
 * by covering (covered by newer entries anyway). Dropped entries also never decide after now:
 * their lives ended before now (1), so a later removal of a kept entry cannot uncover them.
 *
 * Memory: a non-null entry to drop is released at once; null writes and absences to drop are
 * held until the key's end (an older kept null would cancel them), then released oldest
 * first, so a batch boundary inside a key always leaves a state obeying 5. The interval union
 * of newer entries is a list of disjoint intervals inside W; past MAX_INTERVALS of them the
 * key is kept whole from there on (conservative), and so it is when the caller cannot hold
 * more drops (giveUp).
 */
import type { LogEntry } from './version-log.js';
import { isLocked } from './object-lock.js';

/** Disjoint intervals of the union kept per key: beyond it the rest of the key is kept (each ~40 B). */
export const MAX_INTERVALS = 10_000;

/** One entry to drop. */
export interface Drop {
  logKey: string;
  /** Bytes of the entry value (what the history budget counted). */
  size: number;
}

/** The window one key is judged against (ms, inclusive bounds). */
export interface ExpiryWindow {
  /** Reads from here on must keep their answers: max(now - window, created, expired before). */
  start: number;
  /** Now (the newest commit time or later). */
  now: number;
}

interface Held extends Drop {
  /** Walk order (0 = the key's newest entry). */
  seq: number;
}

/**
 * Decides one key's entries, fed newest first. `next` returns the entries that can be dropped
 * now (non-null ones); `finish` the held ones, oldest first. The caller decodes records only
 * when `needsRecord` says so (the lock check of a candidate).
 */
export class KeyExpiry {
  readonly #w: ExpiryWindow;
  /** Union of newer entries' lives clipped to W: [start, end) pairs, highest first. */
  readonly #union: number[][] = [];
  #seq = 0;
  /** Time of the nearest newer null write seen (ends the life of older null writes). */
  #nextNull = Number.POSITIVE_INFINITY;
  /** Whether a null write was seen (S3 shows only the newest null write). */
  #nullSeen = false;
  #nulls: Held[] = [];
  #absences: Held[] = [];
  /** Too fragmented to follow: keep the rest of the key. */
  #gaveUp = false;

  constructor(w: ExpiryWindow) {
    this.#w = w;
  }

  /** Whether the rule could still drop `e` (the lock check then needs its record). Pure. */
  candidate(e: Omit<LogEntry, 'record'>): boolean {
    return !this.#gaveUp && e.time < this.#w.start && (e.kind === 'absence' || e.removedAt !== undefined || (e.isNull && this.#nullSeen));
  }

  /**
   * The next (older) entry of the key: its log key, header (`record` needed only when
   * `candidate` said so, for the lock), and value size. Returns what can be dropped now.
   */
  next(logKey: string, e: Omit<LogEntry, 'record'> & { record?: LogEntry['record'] }, size: number): Drop[] {
    const seq = this.#seq++;
    const cand = this.candidate(e);
    const visible = e.kind === 'version' && e.removedAt === undefined && !(e.isNull && this.#nullSeen);
    if (e.isNull) this.#nullSeen = true;
    let end = e.removedAt ?? Number.POSITIVE_INFINITY;
    if (e.isNull) {
      end = Math.min(end, this.#nextNull);
      this.#nextNull = e.time;
    }
    const s = Math.max(e.time, this.#w.start);
    const t = Math.min(end, this.#w.now + 1);
    const decides = s < t && !this.#covered(s, t);
    if (s < t && !this.#gaveUp) this.#add(s, t);
    const locked = e.record !== undefined && isLocked(e.record.lock, this.#w.now);
    const drop = cand && !visible && !locked && !this.#gaveUp;
    const out: Drop[] = [];
    if (drop && !decides) {
      if (e.isNull) this.#nulls.push({ logKey, size, seq });
      else out.push({ logKey, size });
      return out;
    }
    if (drop && e.kind === 'absence') {
      // Decides "absent" in W: dropped only if every older entry is (see the module note).
      this.#absences.push({ logKey, size, seq });
      return out;
    }
    // Kept: an older kept entry cancels the held absences (they would uncover it) and, as a
    // null, also every newer held null (rule 5), which includes those newer than an absence.
    if (this.#absences.length > 0) {
      const oldest = this.#absences[this.#absences.length - 1]!.seq;
      this.#absences = [];
      this.#nulls = this.#nulls.filter((h) => h.seq > oldest);
    }
    if (e.isNull) this.#nulls = [];
    return out;
  }

  /** The held drops of the key, oldest first; the key is done. */
  finish(): Drop[] {
    const held = [...this.#nulls, ...this.#absences].sort((a, b) => b.seq - a.seq);
    this.#nulls = [];
    this.#absences = [];
    return held.map(({ logKey, size }) => ({ logKey, size }));
  }

  /**
   * Keeps the rest of the key, the held drops included (the caller cannot hold more of them:
   * see expiry.ts). Returns how many held drops were let go.
   */
  giveUp(): number {
    const n = this.held;
    this.#gaveUp = true;
    this.#nulls = [];
    this.#absences = [];
    this.#union.length = 0;
    return n;
  }

  /** Held drops (memory the caller accounts for). */
  get held(): number {
    return this.#nulls.length + this.#absences.length;
  }

  /** Whether [s, t) lies inside one interval of the union (s is at or below every start). */
  #covered(s: number, t: number): boolean {
    const low = this.#union[this.#union.length - 1];
    return low !== undefined && low[0]! <= s && low[1]! >= t;
  }

  /** Adds [s, t) to the union; s is at or below every start in it (entries come newest first). */
  #add(s: number, t: number): void {
    let end = t;
    for (;;) {
      const low = this.#union[this.#union.length - 1];
      if (low === undefined || low[0]! > end) break;
      end = Math.max(end, low[1]!);
      this.#union.pop();
    }
    this.#union.push([s, end]);
    if (this.#union.length > MAX_INTERVALS) {
      this.#gaveUp = true;
      this.#nulls = [];
      this.#absences = [];
    }
  }
}
