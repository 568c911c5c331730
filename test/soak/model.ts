/**
 * @module What a killed worker's log says each key may hold.
 *
 * Fed the JSON lines of one worker run (a partial last line is dropped: it was never
 * complete, so its operation was not known to have started), it tracks per key the last
 * acknowledged content and, if an operation on the key had started but not settled, the
 * content that operation would leave. After the kill the key must hold exactly one of
 * those two. It also remembers which in-flight operations must be all-or-nothing (a batch
 * DELETE) and which multipart uploads must, may or must not still be open.
 */
import { contentId } from './bodies.js';
import type { Content, Line, StartLine } from './protocol.js';

export interface InFlight {
  id: number;
  op: StartLine['op'];
  next: Content;
}

export interface UploadFacts {
  key: string;
  /** open: created (acked); completing: Complete started, not acked; done: completed. */
  state: 'open' | 'completing' | 'done';
}

export interface LogStats {
  started: number;
  /** Acknowledged write operations (GETs excluded). */
  ackedWrites: number;
  ackedReads: number;
  checkpoints: number;
  compactions: number;
}

export class WorkerLog {
  readonly acked: Map<string, Content>;
  readonly inflight = new Map<string, InFlight>();
  /** In-flight batch deletes: their keys must all change or none. */
  readonly atomic = new Map<number, string[]>();
  readonly uploads = new Map<string, UploadFacts>();
  /** Keys with a CreateMultipartUpload in flight (its upload id is unknown). */
  readonly creating = new Set<string>();
  readonly problems: string[] = [];
  readonly stats: LogStats = { started: 0, ackedWrites: 0, ackedReads: 0, checkpoints: 0, compactions: 0 };
  ready = false;
  #starts = new Map<number, StartLine>();
  #partial = '';

  constructor(initial: ReadonlyMap<string, Content>) {
    this.acked = new Map(initial);
  }

  /** Feeds raw stdout bytes; complete lines are applied at once. */
  feed(text: string): Line[] {
    const lines = (this.#partial + text).split('\n');
    this.#partial = lines.pop()!;
    const out: Line[] = [];
    for (const raw of lines) {
      if (!raw) continue;
      let line: Line;
      try {
        line = JSON.parse(raw) as Line;
      } catch {
        this.problems.push(`worker printed a line that is not JSON: ${raw.slice(0, 200)}`);
        continue;
      }
      this.#apply(line);
      out.push(line);
    }
    return out;
  }

  /** Keys the worker may have changed, with what they may hold now (acked first). */
  legal(key: string): Content[] {
    const acked = this.acked.get(key) ?? null;
    const f = this.inflight.get(key);
    return f && contentId(f.next) !== contentId(acked) ? [acked, f.next] : [acked];
  }

  #busy(key: string, id: number, op: StartLine['op'], next: Content): void {
    const other = this.inflight.get(key);
    if (other) this.problems.push(`operations ${other.id} and ${id} were in flight on ${key} at once`);
    this.inflight.set(key, { id, op, next });
  }

  #apply(line: Line): void {
    switch (line.t) {
      case 'ready':
        this.ready = true;
        return;
      case 'event':
        if (line.event === 'checkpoint') this.stats.checkpoints++;
        else if (line.event === 'compaction') this.stats.compactions++;
        else if (line.event === 'commitlog.rolled') return; // a new commit log segment (every open starts one)
        else this.problems.push(`unexpected repository event ${line.event}`);
        return;
      case 'fatal':
        this.problems.push(`worker died: ${line.message}`);
        return;
      case 'fail':
        this.problems.push(`operation ${line.id}: ${line.message}`);
        this.#starts.delete(line.id);
        return;
      case 'start':
        this.#start(line);
        return;
      case 'ack':
        this.#settle(line.id, true, line.uploadId);
        return;
      case 'error':
        this.problems.push(`operation ${line.id} (${this.#starts.get(line.id)?.op}) failed: ${line.code} ${line.message}`);
        this.#settle(line.id, false);
        return;
    }
  }

  #start(s: StartLine): void {
    this.stats.started++;
    this.#starts.set(s.id, s);
    switch (s.op) {
      case 'put':
        return this.#busy(s.key, s.id, s.op, s.content);
      case 'delete':
        return this.#busy(s.key, s.id, s.op, null);
      case 'deleteMany':
        for (const k of s.keys) this.#busy(k, s.id, s.op, null);
        this.atomic.set(s.id, s.keys);
        return;
      case 'copy': {
        if (this.inflight.has(s.src)) this.problems.push(`copy ${s.id} read ${s.src} while it was being written`);
        const src = this.acked.get(s.src) ?? null;
        // Copying an absent source fails and leaves the destination alone.
        return this.#busy(s.key, s.id, s.op, src ?? this.acked.get(s.key) ?? null);
      }
      case 'mpu-create':
        this.creating.add(s.key);
        return;
      case 'mpu-complete': {
        const u = this.uploads.get(s.uploadId);
        if (u) u.state = 'completing';
        return this.#busy(s.key, s.id, s.op, s.content);
      }
      case 'mpu-part':
      case 'get':
        return;
    }
  }

  #settle(id: number, ok: boolean, uploadId?: string): void {
    const s = this.#starts.get(id);
    this.#starts.delete(id);
    if (!s) {
      this.problems.push(`settled operation ${id} never started`);
      return;
    }
    if (s.op === 'get') {
      if (ok) this.stats.ackedReads++;
      return;
    }
    if (ok) this.stats.ackedWrites++;
    if (s.op === 'mpu-create') {
      this.creating.delete(s.key);
      if (ok && uploadId) this.uploads.set(uploadId, { key: s.key, state: 'open' });
      return;
    }
    if (s.op === 'mpu-part') return;
    if (s.op === 'mpu-complete') {
      const u = this.uploads.get(s.uploadId);
      if (u) u.state = ok ? 'done' : 'open';
    }
    const keys = s.op === 'deleteMany' ? s.keys : [s.key];
    this.atomic.delete(id);
    for (const k of keys) {
      const f = this.inflight.get(k);
      if (f?.id !== id) continue;
      if (ok) this.acked.set(k, f.next);
      this.inflight.delete(k);
    }
  }
}
