/**
 * @module The scale run: a million 512 B objects written in batches by one child process,
 * then a fresh child per reader sample that reopens the repository and lists it (see
 * engine-scale-writer.ts and engine-scale-reader.ts). Each child's peak RSS is its own.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RESULT_MARK, filesystemOf, removeDir, tempDir } from './engine-fixture.js';
import type { ScaleReaderResult } from './engine-scale-reader.js';
import type { ScaleWriterResult } from './engine-scale-writer.js';
import { TARGETS, ceiling, verdict } from './engine-targets.js';
import type { RequestCounts } from './lib/counting-provider.js';
import { table } from './lib/markdown.js';
import { fmt, median, medianRange, percentile } from './lib/stats.js';

const OBJECT_BYTES = 512;
/** Concurrent puts per batch: about one group commit's worth (BATCH_MAX_OPS is 1024). */
const BATCH = 1000;
const MiB = 2 ** 20;
/** Writer + reader samples of the full run (a 1M writer takes about a minute here). */
const SAMPLES = 3;

/** Runs a child benchmark script (a sibling of this file) and returns its RESULT. */
function runChild<T>(script: string, args: string[]): Promise<T> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  return new Promise<T>((resolve, reject) => {
    const child = spawn(process.execPath, [path, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith(RESULT_MARK));
      if (code !== 0 || !line) return reject(new Error(`${script} exited with ${code} and no result`));
      resolve(JSON.parse(line.slice(RESULT_MARK.length)) as T);
    });
  });
}

/** "median (min–max)" of a figure over the samples. */
const mid = <T>(xs: T[], f: (x: T) => number, digits = 0) => medianRange(xs.map(f), digits);

/** "gets (MiB)" of a phase, per sample. */
const reads = (cs: RequestCounts[]) => `${mid(cs, (c) => c.gets)} gets, ${mid(cs, (c) => c.bytesGot / MiB, 1)} MiB`;

function writerTable(ws: ScaleWriterResult[]): string {
  const w0 = ws[0]!;
  const plain = w0.objects * w0.objectBytes;
  const rss = median(ws.map((w) => w.peakRssMiB));
  const classes = Object.keys(w0.counts.byClass)
    .map((name) => {
      const cs = ws.map((w) => w.counts.byClass[name]!);
      const put = median(cs.map((c) => c.bytesPut));
      const got = median(cs.map((c) => c.bytesGot));
      return (
        `${name}: ${fmt(put / MiB, 1)} MiB put (${fmt(put / w0.objects, 1)} B/object, ${fmt(median(cs.map((c) => c.puts)))} puts)` +
        (got > 0 ? `, ${fmt(got / MiB, 1)} MiB got (${fmt(median(cs.map((c) => c.gets)))} gets)` : '')
      );
    })
    .join('; ');
  const rows = [
    ['Objects × size, batch', `${fmt(w0.objects)} × ${w0.objectBytes} B, ${fmt(w0.batch)} concurrent`, '', '', ''],
    ['Elapsed', `${mid(ws, (w) => w.elapsedMs / 1000, 1)} s`, '', '29.4-33.2 s', ''],
    ['Objects/s', mid(ws, (w) => (w.objects * 1000) / w.elapsedMs), '', '', ''],
    ['Written', `${mid(ws, (w) => w.counts.total.bytesPut / MiB, 1)} MiB of ${fmt(plain / MiB, 1)} MiB plaintext`, '', '598-619 MiB', ''],
    ['Write amplification', `${mid(ws, (w) => w.counts.total.bytesPut / plain, 3)}x`, '', '1.23-1.27x', ''],
    ['Read during the writes', reads(ws.map((w) => w.counts.total)), '', '', ''],
    [TARGETS.scalePeakRss.name, `${mid(ws, (w) => w.peakRssMiB)} MiB`, ceiling(TARGETS.scalePeakRss, 0), TARGETS.scalePeakRss.rs3, verdict(TARGETS.scalePeakRss, rss)],
    [
      'Peaks sampled every 100 ms: heap used / heap total / external (Buffers)',
      `${mid(ws, (w) => w.memory.heapUsedMiB)} / ${mid(ws, (w) => w.memory.heapTotalMiB)} / ${mid(ws, (w) => w.memory.externalMiB)} MiB`,
      '',
      '',
      '',
    ],
    ['Heap used at the end', `${mid(ws, (w) => w.heapUsedMiB)} MiB`, '', '', ''],
    ['Commits / largest batch', `${mid(ws, (w) => w.stats.commits)} / ${mid(ws, (w) => w.stats.largestBatch)}`, '', '', ''],
    ['Checkpoints / compactions', `${mid(ws, (w) => w.stats.checkpoints)} / ${mid(ws, (w) => w.stats.compactions)}`, '', '', ''],
    ['Runs at the end / commits after the last checkpoint', `${mid(ws, (w) => w.runs)} / ${mid(ws, (w) => w.tailCommits)}`, '', '245 active runs', ''],
  ];
  return [
    table([`Writer (${ws.length} samples: median (min–max))`, 'Measured', 'Target', 'rs3 (quoted)', 'Result'], rows, ['l', 'l', 'r', 'r', 'l']),
    '',
    `By blob class (medians): ${classes}.`,
  ].join('\n');
}

/** "runs: 1 get (65,536 B), commits: 1 get (536 B)" for the first sample's cold GET. */
const coldGet = (r: ScaleReaderResult) =>
  Object.entries(r.coldGet)
    .filter(([, c]) => c.gets > 0)
    .map(([name, c]) => `${name}: ${c.gets} get${c.gets > 1 ? 's' : ''} (${fmt(c.bytesGot)} B)`)
    .join(', ');

function readerTable(rs: ScaleReaderResult[], objects: number): string {
  const open = median(rs.map((r) => r.openMs));
  const p50 = median(rs.map((r) => percentile(r.randomPageMs, 50)));
  const bad = rs.reduce((n, r) => n + r.pass.duplicates + r.pass.missing + r.pass.unexpected, 0);
  const r0 = rs[0]!;
  const rows = [
    [TARGETS.reopen.name, `${mid(rs, (r) => r.openMs)} ms`, ceiling(TARGETS.reopen, 0), TARGETS.reopen.rs3, verdict(TARGETS.reopen, open)],
    ['Process start to ready', `${mid(rs, (r) => r.processToReadyMs)} ms`, '', '', ''],
    ['Reads during open', reads(rs.map((r) => r.openCounts)), '', '', ''],
    ['RSS at ready / reader peak', `${mid(rs, (r) => r.rssAtReadyMiB)} / ${mid(rs, (r) => r.peakRssMiB)} MiB`, '', '969-1,136 MiB', ''],
    ['Cold GET of one 512 B object after open', coldGet(r0), '', '', ''],
    ['Full LIST pass (pages of 1000)', `${fmt(r0.pass.pages)} pages, ${fmt(r0.pass.keys)} keys, ${mid(rs, (r) => r.pass.ms / 1000, 2)} s`, '', '', ''],
    ['Reads during the pass', reads(rs.map((r) => r.pass.counts)), '', '', ''],
    [
      'Duplicates / missing / unexpected',
      rs.map((r) => `${r.pass.duplicates} / ${r.pass.missing} / ${r.pass.unexpected}`).join('; '),
      `0 / 0 / 0 of ${fmt(objects)}`,
      '',
      bad === 0 ? 'PASS' : 'MISS',
    ],
    ['Page latency along the pass, p50 / p95', `${mid(rs, (r) => percentile(r.pass.pageMs, 50), 2)} / ${mid(rs, (r) => percentile(r.pass.pageMs, 95), 2)} ms`, '', '', ''],
    [
      `${TARGETS.listPageP50.name} (random start, ${r0.randomPageMs.length} samples)`,
      `${mid(rs, (r) => percentile(r.randomPageMs, 50), 2)} ms`,
      ceiling(TARGETS.listPageP50, 0),
      TARGETS.listPageP50.rs3,
      verdict(TARGETS.listPageP50, p50),
    ],
    ['LIST page of 1000, p95 (random start)', `${mid(rs, (r) => percentile(r.randomPageMs, 95), 2)} ms`, '', '', ''],
    ['Reads for the random pages (all samples)', reads(rs.map((r) => r.randomCounts)), '', '', ''],
    [
      `Delimiter listing (${fmt(r0.delimiter.prefixes)} common prefixes), first / median of ${r0.delimiter.ms.length}`,
      `${mid(rs, (r) => r.delimiter.ms[0]!, 1)} / ${mid(rs, (r) => median(r.delimiter.ms), 1)} ms`,
      '',
      '',
      '',
    ],
    [`Reads for the ${r0.delimiter.ms.length} delimiter listings`, reads(rs.map((r) => r.delimiter.counts)), '', '', ''],
  ];
  return table([`Reader (fresh process after each writer: median (min–max))`, 'Measured', 'Target', 'rs3 (quoted)', 'Result'], rows, ['l', 'l', 'r', 'r', 'l']);
}

/** Runs the scale lanes and returns the markdown of this section. */
export async function benchScale(opts: { quick: boolean; log: (m: string) => void }): Promise<string> {
  const objects = opts.quick ? 20_000 : 1_000_000;
  const samples = opts.quick ? 1 : SAMPLES;
  let fsText = '';
  const ws: ScaleWriterResult[] = [];
  const rs: ScaleReaderResult[] = [];
  for (let n = 0; n < samples; n++) {
    const dir = await tempDir('scale');
    try {
      opts.log(`scale ${n + 1}/${samples}: writing ${fmt(objects)} objects of ${OBJECT_BYTES} B in a child process`);
      ws.push(await runChild<ScaleWriterResult>('./engine-scale-writer.js', [`--dir=${dir}`, `--objects=${objects}`, `--size=${OBJECT_BYTES}`, `--batch=${BATCH}`]));
      opts.log(`scale ${n + 1}/${samples}: reopen and list in a fresh process`);
      rs.push(await runChild<ScaleReaderResult>('./engine-scale-reader.js', [`--dir=${dir}`, `--objects=${objects}`, `--samples=${opts.quick ? 50 : 200}`]));
      if (n === 0) fsText = filesystemOf(dir);
    } finally {
      await removeDir(dir);
    }
  }
  return [
    `### ${fmt(objects)} objects of ${OBJECT_BYTES} B`,
    '',
    `fs provider on ${fsText}; each sample writes a fresh repository in one child process, then reopens and lists it ` +
      'in another (a fresh process does not mean a cold kernel page cache). Written bytes count every blob put during ' +
      'the workload, checkpoints and compactions included; the writer closes without a final checkpoint, so the reader ' +
      'replays the commits after the last one.',
    '',
    writerTable(ws),
    '',
    readerTable(rs, objects),
  ].join('\n');
}
