/**
 * @module `strata history BUCKET [KEY]`: what changed when in a bucket — every PUT, delete
 * marker and delete, with its time, key, version id and size (store/history.ts), key by key
 * newest first — and `strata history-window BUCKET [DURATION]`: how far back it reaches.
 *
 *   strata history BUCKET [KEY] [--prefix P] [--since T] [--until T] [--limit N] [--cursor C] [--json]
 *   strata history-window BUCKET [DURATION | default] [--retention D]
 *
 * Times are RFC 3339 or a duration before now (`2h`). `--limit` entries are printed (pages
 * are fetched until then); when there are more, the last line says how to go on (--cursor).
 * Where they act: admin-target.ts. Exit codes: 0 done, 1 refused (no such bucket, bad time or
 * window), 2 bad command line, or the repository or server cannot be used.
 */
import { adminRequest } from '../admin/client.js';
import { adminHistory, adminWindow, type AdminHistoryRequest, type AdminHistoryResult, type AdminWindowResult } from '../admin/history.js';
import { UsageError, type ParsedArgs } from './args.js';
import type { Verb } from './verb.js';
import { defineOption, resolveOptions, type OptionDef } from '../server/options.js';
import { integerType, stringType } from '../server/option-types.js';
import { openTarget, parseCliTime, reportFailure, TARGET_NOTES, TARGET_OPTIONS, type Target, type TargetOptions } from './admin-target.js';
import { formatTime } from '../store/time-text.js';
import { RETENTION_OPTION, retentionStoreOptions, type RetentionOption } from './retention-option.js';

/** history-window's options: where, and the server default window for a stopped repository. */
const WINDOW_OPTIONS: OptionDef<TargetOptions & RetentionOption>[] = [
  ...(TARGET_OPTIONS as OptionDef<TargetOptions & RetentionOption>[]),
  RETENTION_OPTION as OptionDef<TargetOptions & RetentionOption>,
];

interface HistoryCliOptions extends TargetOptions {
  prefix?: string;
  since?: string;
  until?: string;
  limit: number;
  cursor?: string;
}

const once = { env: false, file: false } as const;
const opt = <K extends keyof HistoryCliOptions & string>(def: Parameters<typeof defineOption<HistoryCliOptions, K>>[0]) => defineOption<HistoryCliOptions, K>(def);

/** Entries printed by default: a screenful and a half. */
const DEFAULT_LIMIT = 100;
/** Entries one invocation prints at most (the store pages them 1000 at a time). */
const MAX_LIMIT = 1_000_000;

const OPTIONS: OptionDef<HistoryCliOptions>[] = [
  ...(TARGET_OPTIONS as OptionDef<HistoryCliOptions>[]),
  opt({ name: 'prefix', key: 'prefix', type: stringType({ maxLength: 1024, placeholder: '<prefix>' }), help: 'only keys starting with this', from: once }),
  opt({ name: 'since', key: 'since', type: stringType({ maxLength: 64, placeholder: '<time>' }), help: 'only writes at or after this time', from: once }),
  opt({ name: 'until', key: 'until', type: stringType({ maxLength: 64, placeholder: '<time>' }), help: 'only writes at or before this time', from: once }),
  opt({ name: 'limit', key: 'limit', type: integerType({ min: 1, max: MAX_LIMIT }), default: DEFAULT_LIMIT, help: 'entries to print', from: once }),
  opt({ name: 'cursor', key: 'cursor', type: stringType({ maxLength: 8192, placeholder: '<cursor>' }), help: 'go on where an earlier listing stopped', from: once }),
];

/** One page through the target. */
async function page(t: Target, req: AdminHistoryRequest): Promise<AdminHistoryResult> {
  if (t.store) return adminHistory(t.store, req);
  const { bucket, ...body } = req;
  return (await adminRequest(t.remote, 'POST', ['buckets', bucket, 'history'], body)) as AdminHistoryResult;
}

function line(e: AdminHistoryResult['entries'][number]): string {
  const size = e.size !== undefined ? String(e.size) : '-';
  const removed = e.removedAt ? `  (removed ${e.removedAt})` : '';
  return `${e.time}  ${e.op.padEnd(13)}  ${e.versionId.padEnd(18)}  ${size.padStart(12)}  ${e.key}${removed}`;
}

export const historyVerb: Verb = {
  name: 'history',
  summary: 'what changed when in a bucket',
  synopsis: 'BUCKET [KEY] [options]',
  description: `Lists the writes of BUCKET (or of KEY, or of the keys under --prefix): each PUT, delete marker
and delete with its time, version id and size, key by key, newest first, inside the bucket's history
window. TIME is an RFC 3339 time (2026-03-01T12:00:00Z) or a duration before now (90m, 2d).`,
  options: OPTIONS as readonly OptionDef<never>[],
  positionals: { name: 'BUCKET [KEY]', min: 1, max: 2 },
  notes: `${TARGET_NOTES}

exit codes: 0 listed, 1 refused (no such bucket, bad time or cursor), 2 bad command line, or the
repository or server cannot be used.`,
  run: (args, env) => runHistory(args, env),
};

async function runHistory(args: ParsedArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const o = resolveOptions(OPTIONS, { flags: args.flags, env }) as HistoryCliOptions;
  const [bucket, key] = args.positionals as [string, string | undefined];
  if (key !== undefined && o.prefix !== undefined) throw new UsageError('give KEY or --prefix, not both');
  const now = Date.now();
  const since = o.since !== undefined ? formatTime(parseCliTime('since', o.since, now)) : undefined;
  const until = o.until !== undefined ? formatTime(parseCliTime('until', o.until, now)) : undefined;
  const progress = (l: string) => process.stderr.write(`history: ${l}\n`);
  let t: Target | undefined;
  try {
    t = await openTarget(o, env, progress);
    const entries: AdminHistoryResult['entries'] = [];
    let cursor = o.cursor;
    let first: AdminHistoryResult | undefined;
    let next: string | undefined;
    for (;;) {
      const p = await page(t, {
        bucket,
        ...(key !== undefined ? { key } : {}),
        ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
        ...(since !== undefined ? { since } : {}),
        ...(until !== undefined ? { until } : {}),
        ...(cursor !== undefined ? { cursor } : {}),
        limit: Math.min(1000, o.limit - entries.length),
      });
      first ??= p;
      entries.push(...p.entries);
      next = p.next;
      if (!next || entries.length >= o.limit) break;
      cursor = next;
    }
    if (o.json) {
      process.stdout.write(`${JSON.stringify({ bucket, from: first!.from, window: first!.window, entries, ...(next ? { next } : {}) }, null, 2)}\n`);
      return 0;
    }
    const head = `history of ${bucket}${key !== undefined ? ` key ${key}` : ''}${o.prefix !== undefined ? ` under ${o.prefix}` : ''} since ${since ?? first!.from} (window ${first!.window})`;
    const out = [head, ...entries.map(line)];
    if (entries.length === 0) out.push('(no writes)');
    if (next) out.push(`(more: add --cursor ${next})`);
    process.stdout.write(`${out.join('\n')}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    return reportFailure('history', err, t?.where);
  } finally {
    await t?.close();
  }
}

/** `strata history-window BUCKET [DURATION]`. */
export const historyWindowVerb: Verb = {
  name: 'history-window',
  summary: "show or set a bucket's history window",
  synopsis: 'BUCKET [DURATION] [options]',
  description: `Shows how far back BUCKET can be read as of a time, restored or forked at a time, or sets it
to DURATION (7d, 12h, 0 = only the current state), or with \`default\` makes it follow the server's
--retention again (30d unless set). History older than the window expires (strata expire, or the
server's expiry worker): a window made longer later does not bring expired history back.`,
  options: WINDOW_OPTIONS as readonly OptionDef<never>[],
  positionals: { name: 'BUCKET [DURATION]', min: 1, max: 2 },
  notes: `${TARGET_NOTES}

exit codes: 0 done, 1 refused (no such bucket, bad duration), 2 bad command line, or the repository
or server cannot be used.`,
  run: async (args, env) => {
    const o = resolveOptions(WINDOW_OPTIONS, { flags: args.flags, env }) as TargetOptions & RetentionOption;
    const [bucket, window] = args.positionals as [string, string | undefined];
    const clear = window === 'default';
    let t: Target | undefined;
    try {
      t = await openTarget(o, env, (l) => process.stderr.write(`history-window: ${l}\n`), retentionStoreOptions(o));
      let r: AdminWindowResult;
      if (t.store) {
        if (clear) await t.store.clearHistoryWindow(bucket);
        r = await adminWindow(t.store, bucket, clear ? undefined : window);
      } else {
        const method = clear ? 'DELETE' : window === undefined ? 'GET' : 'PUT';
        r = (await adminRequest(t.remote, method, ['buckets', bucket, 'history-window'], method === 'PUT' ? { window } : undefined)) as AdminWindowResult;
      }
      process.stdout.write(o.json ? `${JSON.stringify(r, null, 2)}\n` : `${r.bucket}: history window ${r.window}${r.own ? '' : ' (server default)'}\n`);
      return 0;
    } catch (err) {
      if (err instanceof UsageError) throw err;
      return reportFailure('history-window', err, t?.where);
    } finally {
      await t?.close();
    }
  },
};
