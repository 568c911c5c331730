/**
 * @module Index runs micro-benchmark: builds a run set of (by default) 1,000,000 keys on the
 * fs provider, then measures opening it, LIST pages of 1,000 keys (seek + merge over the
 * overlay and every run), a full paginated pass, a delimiter listing, and compaction into
 * one run. {@link benchIndexRuns} returns markdown; run this file directly to print it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createFsProvider } from '../src/provider/fs/index.js';
import { BlockCache } from '../src/store/index/block-cache.js';
import { compactRuns } from '../src/store/index/compact.js';
import { keyAfterPrefix } from '../src/store/index/compare.js';
import { mergeSources, type SeekKey, type SortedSource } from '../src/store/index/merge.js';
import type { RunMeta } from '../src/store/index/run-format.js';
import { openRun, type RunReader } from '../src/store/index/run-reader.js';
import { writeRun } from '../src/store/index/run-writer.js';
import { SortedMap } from '../src/store/index/sorted-map.js';
import { table } from './lib/markdown.js';
import { fmt, percentile } from './lib/stats.js';

export interface IndexBenchOptions {
  /** Keys in the bucket (default 1,000,000). */
  keys?: number;
  /** Runs the keys are dealt over, as before compaction (default 8). */
  runs?: number;
  /** Share of keys also rewritten in the in-memory overlay (default 0.02). */
  overlayShare?: number;
  /** Random pages sampled for latency (default 300). */
  pages?: number;
  /** Directory for the fs provider (default: a new temporary directory, removed after). */
  dir?: string;
  log?: (message: string) => void;
}

const PAGE = 1_000;
/** Encoded version list of one 512-byte object: ids, size, ETag, checksums, time, location. */
const VALUE_BYTES = 96;
const HOSTS = 200;

/** Key i of the synthetic bucket (zero-padded, so numeric order is byte order per host). */
function keyOf(i: number): string {
  return `backups/host-${String(i % HOSTS).padStart(3, '0')}/data/${String(i).padStart(9, '0')}.pack`;
}

function valueOf(i: number, tag: number): Uint8Array {
  const v = new Uint8Array(VALUE_BYTES);
  let x = (i * 2654435761 + tag) >>> 0;
  for (let j = 0; j < VALUE_BYTES; j++) v[j] = x = (x * 1103515245 + 12345) >>> 0;
  return v;
}

async function page(sources: SortedSource[], from: SeekKey | undefined): Promise<string[]> {
  const it = mergeSources(sources, from);
  const keys: string[] = [];
  for (let r = await it.next(); !r.done && keys.push(r.value.key) < PAGE; r = await it.next());
  await it.return();
  return keys;
}

const ms = (t0: number) => performance.now() - t0;
const mib = (b: number) => `${fmt(b / 2 ** 20, 1)} MiB`;

export async function benchIndexRuns(options: IndexBenchOptions = {}): Promise<string> {
  const n = options.keys ?? 1_000_000;
  const runCount = options.runs ?? 8;
  const log = options.log ?? (() => {});
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'strata-index-bench-')));
  const provider = await createFsProvider({ dir });
  try {
    const keys = Array.from({ length: n }, (_, i) => keyOf(i)).sort();
    log(`writing ${fmt(n)} keys over ${runCount} runs`);
    let t0 = performance.now();
    const metas: RunMeta[] = [];
    for (let r = 0; r < runCount; r++) {
      const entries = function* () {
        for (let i = r; i < n; i += runCount) yield [keys[i]!, valueOf(i, r)] as const;
      };
      metas.push(await writeRun(provider, `bench/runs/${r}`, entries()));
    }
    const writeMs = ms(t0);
    const bytes = metas.reduce((s, m) => s + m.size, 0);
    const overlay = new SortedMap();
    const share = options.overlayShare ?? 0.02;
    for (let i = 0; i < n; i += Math.round(1 / share)) overlay.set(keys[i]!, valueOf(i, 99));

    log('opening');
    const cache = new BlockCache();
    t0 = performance.now();
    const runs: RunReader[] = await Promise.all(metas.map((m) => openRun(provider, m, cache)));
    const openMs = ms(t0);
    const footerBytes = runs.reduce((s, r) => s + r.memoryBytes, 0);
    const sources: SortedSource[] = [overlay, ...runs];

    const samples = options.pages ?? 300;
    const sample = async (srcs: SortedSource[]) => {
      const times: number[] = [];
      let x = 12345;
      for (let s = -20; s < samples; s++) {
        x = (x * 1103515245 + 12345) >>> 0;
        const t = performance.now();
        const got = await page(srcs, { key: keys[x % n]!, inclusive: true });
        if (s >= 0) times.push(ms(t));
        if (got.length === 0) throw new Error('empty page');
      }
      return times;
    };
    log('random pages');
    const pageTimes = await sample(sources);

    log('full pass');
    t0 = performance.now();
    let seen = 0;
    for (let after: string | undefined, got: string[]; ; after = got[got.length - 1]) {
      got = await page(sources, after === undefined ? undefined : { key: after, inclusive: false });
      for (const k of got)
        if (k !== keys[seen++]) throw new Error(`full pass: ${k} at ${seen - 1}`);
      if (got.length < PAGE) break;
    }
    if (seen !== n) throw new Error(`full pass saw ${seen} of ${n} keys`);
    const passMs = ms(t0);

    log('delimiter listing');
    t0 = performance.now();
    const it = mergeSources(sources, { key: 'backups/', inclusive: true });
    let prefixes = 0;
    for (let r = await it.next(); !r.done; r = await it.next()) {
      const slash = r.value.key.indexOf('/', 'backups/'.length);
      prefixes++;
      it.seek(keyAfterPrefix(r.value.key.slice(0, slash + 1))!);
    }
    const delimiterMs = ms(t0);

    log('compaction');
    t0 = performance.now();
    const compacted = await compactRuns(provider, 'bench/runs/compacted', sources);
    const compactMs = ms(t0);
    const one = [overlay, await openRun(provider, compacted, cache)];
    const onePageTimes = await sample(one);
    const mem = process.memoryUsage();
    const stats = cache.stats();

    const rows = [
      ['run set', `${fmt(n)} keys, ${runCount} runs + overlay of ${fmt(overlay.size)}`],
      [
        'write',
        `${fmt(writeMs)} ms (${fmt(n / (writeMs / 1000))} keys/s), ${mib(bytes)}, ${fmt(bytes / n, 1)} B/entry (${VALUE_BYTES} B values)`,
      ],
      [
        'open all runs (one footer read each)',
        `${fmt(openMs, 1)} ms; footers in memory ${mib(footerBytes)}`,
      ],
      [
        `page of ${PAGE}, ${runCount} runs + overlay`,
        `p50 ${fmt(percentile(pageTimes, 50), 2)} ms, p95 ${fmt(percentile(pageTimes, 95), 2)} ms`,
      ],
      [
        `full paginated pass`,
        `${fmt(passMs)} ms (${fmt(n / (passMs / 1000))} keys/s), 0 missing, 0 duplicate`,
      ],
      [`delimiter listing (${prefixes} prefixes)`, `${fmt(delimiterMs, 1)} ms`],
      [
        'compaction into one run',
        `${fmt(compactMs)} ms (${fmt(n / (compactMs / 1000))} keys/s), ${mib(compacted.size)}`,
      ],
      [
        `page of ${PAGE}, 1 run + overlay`,
        `p50 ${fmt(percentile(onePageTimes, 50), 2)} ms, p95 ${fmt(percentile(onePageTimes, 95), 2)} ms`,
      ],
      [
        'block cache',
        `${fmt(stats.hits)} hits, ${fmt(stats.misses)} misses, ${mib(stats.bytes)} of ${mib(stats.maxBytes)}`,
      ],
      [
        'process memory',
        `RSS ${mib(mem.rss)}, heap ${mib(mem.heapUsed)} (includes the ${fmt(n)} test keys)`,
      ],
    ];
    return [
      '### Index runs (fs provider)',
      '',
      table(['measure', 'result'], rows, ['l', 'l']),
    ].join('\n');
  } finally {
    await provider.close();
    if (options.dir === undefined) await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const keys = Number(process.argv.find((a) => a.startsWith('--keys='))?.slice(7) ?? 1_000_000);
  const log = (m: string) => process.stderr.write(`[bench:index] ${m}\n`);
  console.log(await benchIndexRuns({ keys, log }));
}
