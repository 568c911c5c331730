/**
 * @module `strata scrub`: reads and verifies every fragment of an erasure repository, reports
 * damage by domain and the blobs that are lost, and with --repair rebuilds missing or corrupt
 * fragments onto healthy domains (provider/erasure/scrub.ts).
 *
 *   strata scrub --data LOCATION [--erasure k+m] [--repair [--missing-only]] [--rate 50MiB] [--restart] [--objects]
 *                [--json]
 *
 * A progress bar on stderr when it is a terminal, a progress line every few seconds otherwise;
 * the summary (or --json, the report) on stdout. Resumable: a killed scrub continues from its
 * saved cursor when run again (--restart starts over); SIGINT/SIGTERM stop it cleanly with the
 * cursor saved. On a repository a server holds, the server runs the pass (admin API: POST starts
 * it, GET follows it; a signal stops following, not the server's pass).
 * Exit codes: 0 every blob at full redundancy (nothing damaged, or all repaired); 1 blobs lost
 * (more than m fragments damaged: unreadable); 2 bad command line, or the repository or server
 * cannot be used (a pass that gave up midway, more than m domains not answering its listing,
 * prints what it checked and saves its cursor first: run again to resume); 3 damage left (readable but short of full redundancy: run with --repair, or
 * check failures); 4 stopped by a signal before the end (run again to resume).
 */
import { adminRequest, AdminClientError, type AdminClientOptions } from '../admin/client.js';
import { adminScrub, type AdminScrubRequest, type AdminScrubStatus } from '../admin/scrub.js';
import { availableParallelism } from 'node:os';
import { usePassWorkers, warmPassWorkers } from '../provider/erasure/pass-pool.js';
import { ScrubGaveUp, type ScrubProgress, type ScrubReport } from '../provider/erasure/scrub.js';
import type { Provider } from '../provider/provider.js';
import type { ParsedArgs } from './args.js';
import type { Verb } from './verb.js';
import { defineOption, resolveOptions, type OptionDef } from '../server/options.js';
import { booleanType, enumType, formatSize, sizeType } from '../server/option-types.js';
import { reportFailure, TARGET_NOTES, TARGET_OPTIONS, type TargetOptions } from './admin-target.js';
import { openProviderTarget, type ProviderTarget } from './provider-target.js';
import { UsageError } from './args.js';

interface ScrubCliOptions extends TargetOptions {
  repair?: boolean;
  missingOnly?: boolean;
  rate?: number;
  restart?: boolean;
  objects?: boolean;
  directIo?: 'on' | 'off';
}

/** What --objects adds to the report: per lost blob, the objects whose bodies it holds. */
type LostObjects = Record<string, { objects: string[]; more: number }>;

/** Progress bar redraw period on a terminal, ms. */
const BAR_MS = 200;
/** Progress line period when stderr is not a terminal (a log file), ms. */
const LINE_MS = 5000;
/** Between two polls of a server's pass: often enough for the progress bar, cheap for the server. */
const POLL_MS = 1000;
const BAR_WIDTH = 24;
/** Blobs checked at once on a stopped repository: no requests to leave room for, and repair of
 * a wiped domain measured 1.4x faster at 8 than at the server's 4 (2 cores, 4+2, 16 MiB
 * objects: 200 vs 147 MiB/s of blobs). */
const LOCAL_CONCURRENCY = 8;

export const EXIT_LOST = 1;
export const EXIT_DEGRADED = 3;
export const EXIT_STOPPED = 4;

const once = { env: false, file: false } as const;
const opt = <K extends keyof ScrubCliOptions & string>(def: Parameters<typeof defineOption<ScrubCliOptions, K>>[0]) => defineOption<ScrubCliOptions, K>(def);

const OPTIONS: OptionDef<ScrubCliOptions>[] = [
  ...(TARGET_OPTIONS as OptionDef<ScrubCliOptions>[]),
  opt({ name: 'repair', key: 'repair', type: booleanType(), help: 'rewrite missing or corrupt fragments onto healthy domains', from: once }),
  opt({
    name: 'missing-only',
    key: 'missingOnly',
    type: booleanType(),
    help: 'with --repair: rebuild only fragments missing by name (a replaced, empty disk), reading k verified fragments of each blob missing one and nothing of complete blobs; what it does not read is counted unchecked, not verified',
    from: once,
  }),
  opt({ name: 'rate', key: 'rate', type: sizeType({ min: 1024 }), help: 'read at most this many bytes of blobs per second (default: unlimited)', from: once }),
  opt({
    name: 'direct-io',
    key: 'directIo',
    // A stopped repository's only large writes are rebuilt fragments, which nothing reads soon:
    // the page cache gains nothing from them, and copying them into it was a fifth of a (4,2)
    // repair's CPU here (perf: copy_folio_from_iter_atomic 20% of the samples). With O_DIRECT
    // the same repair (1 GiB per domain, 3 runs each, interleaved) took 6.0-7.4 s against
    // 6.7-9.4 s, and 2.5-3.0 s of system CPU against 3.9-6.6 s. The pass reads fragments the
    // same way (fs/blob-file.ts readBlobRangeDirectSync): a cold (10,4) repair of a wiped
    // domain, buffered, filled new page-cache pages for every byte it read.
    type: enumType<'on' | 'off'>(['on', 'off']),
    default: 'on',
    help: 'read fragments and log-segment copies, and write rebuilt fragments (256 KiB and more), on directory domains with O_DIRECT, around the page cache, where the directory takes it (probed at open): a pass checks what the disks hold and evicts nothing; off: through the page cache',
    from: once,
  }),
  opt({ name: 'restart', key: 'restart', type: booleanType(), help: 'ignore a saved cursor and start the pass over', from: once }),
  opt({ name: 'objects', key: 'objects', type: booleanType(), help: 'name the objects lost blobs hold (walks the index again; local repositories)', from: once }),
];

const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** One line describing `p` (the bar's text, or a log line). */
export function progressText(p: ScrubProgress): string {
  if (p.phase === 'count') return `counting: ${p.totalBlobs} blobs, ${mib(p.totalBytes)}`;
  const eta = p.etaMs !== undefined ? `, ETA ${duration(p.etaMs)}` : '';
  const damage = p.damagedBlobs || p.lostCount ? `; damaged ${p.damagedBlobs}, lost ${p.lostCount}` : '';
  const repaired = p.repairedFragments ? `, ${p.repairedFragments} fragments repaired` : '';
  // An estimated size is the last full pass's (no count listing): marked with ~.
  const about = p.estimated ? '~' : '';
  return `${p.blobs}/${about}${p.totalBlobs} blobs, ${mib(p.bytes)}/${about}${mib(p.totalBytes)} at ${mib(p.bytesPerSec)}/s${eta}${damage}${repaired}`;
}

function bar(p: ScrubProgress): string {
  const frac = p.phase === 'scrub' && p.totalBytes > 0 ? Math.min(p.bytes / p.totalBytes, 1) : p.phase === 'scrub' && p.totalBlobs > 0 ? Math.min(p.blobs / p.totalBlobs, 1) : 0;
  const full = Math.round(frac * BAR_WIDTH);
  return `[${'#'.repeat(full)}${'.'.repeat(BAR_WIDTH - full)}] ${(frac * 100).toFixed(1).padStart(5)}% ${progressText(p)}`;
}

/** The human summary of `r`. */
export function scrubSummary(r: ScrubReport, where: string): string {
  const secs = Math.max(r.ms, 1) / 1000;
  const domains = Object.entries(r.damagedByDomain).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const lines = [
    `scrub of ${where}${r.missingOnly ? ' with repair of missing fragments only' : r.repair ? ' with repair' : ' (check only)'}${r.complete ? '' : ` — STOPPED before the end: run again to resume ${r.resumeAfter !== undefined ? `after ${r.resumeAfter}` : 'from the start'}`}`,
    ...(r.resumedFrom !== undefined ? [`resumed      after ${r.resumedFrom} (${r.resumedBlobs} blobs checked earlier)`] : []),
    `checked      ${r.blobs} blobs, ${mib(r.bytes)}; ${r.fragments.verified} fragments in ${secs.toFixed(1)} s (${mib((r.bytes - r.resumedBytes) / secs)}/s this run)`,
    ...(r.fragments.unchecked ? [`unchecked    ${r.fragments.unchecked} fragments not read by this missing-only repair (run a full scrub to verify them)`] : []),
    `damaged      ${r.damagedBlobs} blobs: ${r.fragments.missing} fragments missing, ${r.fragments.corrupt} corrupt, ${r.fragments.unreachable} unreachable`,
    ...domains.map(([d, n]) => `  domain ${d.padEnd(12)} ${n} damaged fragments`),
    `repaired     ${r.repairedFragments} fragments, ${mib(r.repairBytes)} written`,
    ...(r.unrepairedBlobs ? [`degraded     ${r.unrepairedBlobs} blobs left short of full redundancy${r.repair ? '' : ' (run with --repair)'}`] : []),
    ...(r.vanished ? [`vanished     ${r.vanished} blobs deleted while the scrub ran`] : []),
    ...(r.garbageCount ? [`garbage      ${r.garbageCount} blobs: interrupted writes nothing references (not damage; GC deletes them)`, ...r.garbage.slice(0, 20).map((k) => `  ${k}`), ...(r.garbageCount > Math.min(r.garbage.length, 20) ? [`  ... and ${r.garbageCount - Math.min(r.garbage.length, 20)} more`] : [])] : []),
    ...(r.errorCount ? [`errors       ${r.errorCount} blobs could not be checked`, ...r.errors.slice(0, 20).map((e) => `  ${e.key}: ${e.error}`)] : []),
    `lost         ${r.lostCount} blobs${r.lostCount ? ' (more than m fragments damaged: unreadable)' : ''}`,
    ...r.lost.map((k) => `  ${k}`),
    ...(r.lostCount > r.lost.length ? [`  ... and ${r.lostCount - r.lost.length} more`] : []),
    ...(r.lostCount ? ['(--objects, or strata verify, names the objects whose bodies these blobs hold)'] : []),
  ];
  return lines.join('\n');
}

/**
 * The objects whose bodies the blobs `lost` hold, from the index walk of strata verify (which
 * reads the repository again: opt-in). Blobs no object names (index runs, roots) are absent.
 * Throws what verifyRepository throws.
 */
async function nameLostObjects(provider: Provider, lost: readonly string[]): Promise<LostObjects> {
  const { verifyRepository } = await import('../store/verify.js');
  const want = new Set(lost);
  const out: LostObjects = {};
  for (const p of (await verifyRepository(provider)).problems) {
    if (want.has(p.blob) && p.affects?.length) out[p.blob] = { objects: p.affects, more: p.affectsMore ?? 0 };
  }
  return out;
}

function lostObjectsText(l: LostObjects): string {
  const lines = ['objects in lost blobs:'];
  for (const [blob, { objects, more }] of Object.entries(l)) lines.push(`  ${blob}: ${objects.join(', ')}${more ? ` and ${more} more` : ''}`);
  return lines.length > 1 ? lines.join('\n') : 'objects in lost blobs: none named (the lost blobs hold no object bodies)';
}

/**
 * Starts a pass in the server at `remote` and follows it (progress to `onProgress`) to its end;
 * `signal` stops following (the server's pass goes on). Throws AdminClientError for a refusal or
 * a failed pass.
 */
async function remoteScrub(remote: AdminClientOptions, req: AdminScrubRequest, onProgress: (p: ScrubProgress) => void, signal: AbortSignal): Promise<ScrubReport> {
  const { id } = (await adminRequest(remote, 'POST', ['scrub'], req)) as AdminScrubStatus;
  for (;;) {
    const s = (await adminRequest(remote, 'GET', ['scrub'])) as AdminScrubStatus;
    if (s.running && s.id === id && s.progress) onProgress(s.progress);
    if (s.last?.id === id) {
      if (s.last.error) throw new AdminClientError(500, s.last.error.code, s.last.error.message);
      return s.last.report!;
    }
    if (signal.aborted) throw new AdminClientError(500, 'Stopped', `stopped following scrub pass ${id}; it goes on in the server (GET /_strata/admin/v1/scrub)`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** The exit code a finished report means (see the module note). */
export function scrubExitCode(r: ScrubReport): number {
  if (r.lostCount > 0) return EXIT_LOST;
  if (!r.complete) return EXIT_STOPPED;
  if (r.unrepairedBlobs > 0 || r.errorCount > 0) return EXIT_DEGRADED;
  return 0;
}

export const scrubVerb: Verb = {
  name: 'scrub',
  summary: 'verify every fragment of an erasure repository; --repair rebuilds damage',
  synopsis: '[options]',
  description: `Reads every fragment (and every replica of the small blobs) of an erasure-coded repository,
checks its CRCs, reports damage by domain and lists the blobs that are lost (more than m fragments
damaged). --repair rebuilds missing or corrupt fragments onto healthy domains, so a domain replaced
by a new empty directory is brought back to full redundancy. --rate bounds the bytes read per
second. A killed scrub resumes from its saved cursor when run again (--restart starts over).
--objects names the objects whose bodies lost blobs hold (a second walk of the index).

After replacing a lost disk by an empty one, --repair --missing-only restores full redundancy
fastest: for each blob missing a fragment it reads and verifies only k fragments (data first; the
next one when one is bad) and rebuilds the missing one; complete blobs are not read. Fragments it
did not read are reported as unchecked, never as verified, and the pass does not count as a
completed scrub: run a full scrub (with --repair) afterwards to verify everything.`,
  options: OPTIONS as readonly OptionDef<never>[],
  notes: `${TARGET_NOTES}

exit codes: 0 every blob at full redundancy, 1 blobs lost, 2 bad command line or the repository or
server cannot be used (a pass that gave up midway keeps its cursor: run again to resume), 3 damage left (run with --repair) or blobs that could not be checked,
4 stopped by a signal (run again to resume).`,
  run: (args, env) => runScrubVerb(args, env),
};

async function runScrubVerb(args: ParsedArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const o = resolveOptions(OPTIONS, { flags: args.flags, env }) as ScrubCliOptions;
  if (o.missingOnly && !o.repair) throw new UsageError('scrub: --missing-only needs --repair');
  const req: AdminScrubRequest = { repair: o.repair === true, ...(o.missingOnly ? { missingOnly: true } : {}), restart: o.restart === true, ...(o.rate !== undefined ? { rate: formatSize(o.rate) } : {}) };
  const tty = process.stderr.isTTY === true;
  let barShown = false;
  const line = (l: string) => {
    if (barShown) process.stderr.write('\r\x1b[K');
    barShown = false;
    process.stderr.write(`scrub: ${l}\n`);
  };
  const ac = new AbortController();
  const onSignal = () => ac.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let t: ProviderTarget | undefined;
  // A stopped repository has no request path to leave a core to: one pass worker per core,
  // two when they read around the page cache and wait on the device (pass-pool.ts). Started
  // before the repository is opened and listed, which their start-up then overlaps (a target
  // that turns out to be a server leaves them idle).
  if (o.endpoint === undefined) {
    usePassWorkers((o.directIo !== 'off' ? 2 : 1) * availableParallelism());
    warmPassWorkers();
  }
  try {
    t = await openProviderTarget(o, env, line, { directWrites: o.directIo !== 'off' });
    let last = 0;
    const onProgress = (p: ScrubProgress) => {
      const now = Date.now();
      if (now - last < (tty ? BAR_MS : LINE_MS)) return;
      last = now;
      if (tty) {
        process.stderr.write(`\r\x1b[K${bar(p)}`);
        barShown = true;
      } else line(progressText(p));
    };
    const r = t.provider ? await adminScrub(t.provider, req, onProgress, ac.signal, LOCAL_CONCURRENCY) : await remoteScrub(t.remote, req, onProgress, ac.signal);
    if (barShown) process.stderr.write('\r\x1b[K');
    barShown = false;
    let lostObjects: LostObjects | undefined;
    if (o.objects && r.lost.length) {
      if (t.provider) {
        line('naming the objects lost blobs hold (walking the index)');
        lostObjects = await nameLostObjects(t.provider, r.lost);
      } else line('--objects: run strata verify on the stopped repository to name the objects lost blobs hold');
    }
    if (o.json) process.stdout.write(`${JSON.stringify(lostObjects ? { ...r, lostObjects } : r, null, 2)}\n`);
    else process.stdout.write(`${scrubSummary(r, t.where)}\n${lostObjects ? `${lostObjectsText(lostObjects)}\n` : ''}`);
    return scrubExitCode(r);
  } catch (err) {
    if (barShown) process.stderr.write('\n');
    if (err instanceof UsageError) throw err;
    // A pass that gave up midway: what it checked, then why and where the next run resumes.
    if (err instanceof ScrubGaveUp) {
      if (o.json) process.stdout.write(`${JSON.stringify({ ...err.report, error: { code: err.code, message: err.message } }, null, 2)}\n`);
      else process.stdout.write(`${scrubSummary(err.report, t?.where ?? 'the repository')}\n`);
    }
    const code = reportFailure('scrub', err, t?.where);
    return (err as { code?: string }).code === 'NotErasure' ? 2 : code;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await t?.close();
  }
}
