#!/usr/bin/env node
/**
 * Kill soak: runs the kill harness (test/soak/) for many iterations on one directory.
 *
 *   npm run soak:kill [-- --iterations N] [--seed S] [--dir D] [--keep]
 *
 * Each iteration starts a worker process on the repository, SIGKILLs it at a seeded
 * random moment, reopens the directory and checks every key, the listing, the open
 * multipart uploads and `verifyRepository` against what the worker acknowledged. Prints a
 * progress line per iteration and a final tally; exits 1 on any failure.
 *
 * The TypeScript harness and worker are bundled with esbuild into a temp directory first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const { values: args } = parseArgs({
  options: {
    iterations: { type: 'string', default: process.env.SOAK_ITERATIONS ?? '50' },
    seed: { type: 'string', default: process.env.SOAK_SEED ?? '20240601' },
    dir: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const iterations = Number(args.iterations);
const seed = Number(args.seed);
if (!Number.isInteger(iterations) || iterations < 1 || !Number.isInteger(seed)) {
  process.stderr.write('soak-kill: --iterations and --seed must be integers\n');
  process.exit(2);
}

const root = fileURLToPath(new URL('..', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'strata-soak-build-'));
const common = { bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'error' };
await build({ ...common, entryPoints: [join(root, 'test/soak/worker.ts')], outfile: join(out, 'worker.mjs') });
await build({ ...common, entryPoints: [join(root, 'test/soak/harness.ts')], outfile: join(out, 'harness.mjs') });
const { runKillSoak } = await import(pathToFileURL(join(out, 'harness.mjs')).href);

const workDir = args.dir ?? mkdtempSync(join(tmpdir(), 'strata-soak-'));
process.stdout.write(`soak:kill  ${iterations} iterations, seed ${seed}, directory ${workDir}\n`);
const started = Date.now();
const tally = await runKillSoak({
  workDir,
  workerPath: join(out, 'worker.mjs'),
  seed,
  iterations,
  onIteration(r) {
    const how = !r.killed
      ? 'NOT KILLED'
      : `kill ${r.killAtMs} ms after ${r.early ? 'spawn' : 'ready'}${r.beforeReady ? ' (opening)' : ''}`;
    const line =
      `[${String(r.iteration + 1).padStart(3)}/${iterations}] ${how.padEnd(34)} ` +
      `ops ${String(r.started).padStart(4)} acked ${String(r.ackedWrites).padStart(4)}+${String(r.ackedReads).padEnd(4)} ` +
      `in-flight whole/absent/same ${r.inflightWhole}/${r.inflightAbsent}/${r.inflightSame}  ` +
      `ckpt ${r.checkpoints} compact ${r.compactions}  verify ${r.verifyClean ? 'clean' : 'DAMAGED'}  ` +
      `${(r.ms / 1000).toFixed(1)} s${r.failures.length ? `  FAILURES ${r.failures.length}` : ''}\n`;
    process.stdout.write(line);
    for (const f of r.failures.slice(0, 10)) process.stdout.write(`      ${f}\n`);
  },
});

const rows = [
  ['iterations', tally.iterations],
  ['kills (SIGKILL)', `${tally.kills} (${tally.killsBeforeReady} before the worker was ready)`],
  ['acknowledged writes verified', tally.ackedWrites],
  ['acknowledged reads checked', tally.ackedReads],
  ['in-flight ops seen whole', tally.inflightWhole],
  ['in-flight ops seen absent', tally.inflightAbsent],
  ['in-flight ops indistinguishable', tally.inflightSame],
  ['checkpoints / compactions', `${tally.checkpoints} / ${tally.compactions}`],
  ['verify clean', `${tally.verifyClean} of ${tally.iterations}`],
  ['failures', tally.failures.length],
  ['elapsed', `${((Date.now() - started) / 1000).toFixed(0)} s`],
];
const width = Math.max(...rows.map(([k]) => k.length));
process.stdout.write(`\n${'-'.repeat(width + 24)}\n`);
for (const [k, v] of rows) process.stdout.write(`${k.padEnd(width)}  ${v}\n`);
process.stdout.write(`${'-'.repeat(width + 24)}\n`);
for (const f of tally.failures.slice(0, 50)) process.stdout.write(`FAIL ${f}\n`);

rmSync(out, { recursive: true, force: true });
if (!args.keep && !args.dir && tally.failures.length === 0) rmSync(workDir, { recursive: true, force: true });
else process.stdout.write(`directory kept: ${workDir}\n`);
process.exitCode = tally.failures.length === 0 && tally.kills === tally.iterations ? 0 : 1;
