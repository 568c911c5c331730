/**
 * @module `npm run bench:codec`: Reed-Solomon and checksum throughput, single-threaded,
 * with peers (ISA-L through bench/isal/, node:crypto, node:zlib, hash-wasm) measured in the
 * same run. Prints markdown and rewrites the `bench:codec` section of bench/RESULTS.md.
 *
 * Flags: --quick (short runs, for smoke tests), --no-write (print only), --rs-targets (only
 * the RS configuration the targets are set at, RS(10,4) with 1 MiB shards; implies --no-write).
 */
// First, as in the `strata` command: relaxed SIMD on where this Node's V8 needs the flag, so
// the flavor judged below is the one the server runs (src/wasm/relaxed-simd.ts).
import { relaxedSimdState } from '../src/wasm/relaxed-simd.js';
import { measureRs, renderRs } from './codec-rs.js';
import { renderRsTargets } from './codec-rs-targets.js';
import { runChecksumBench } from './codec-checksum.js';
import { machineLine } from './lib/machine.js';
import { writeSection } from './lib/results.js';
import { availableFlavors, defaultFlavor } from '../src/wasm/loader.js';

const quick = process.argv.includes('--quick');
const rsTargets = process.argv.includes('--rs-targets');
const write = !process.argv.includes('--no-write') && !rsTargets;

const started = Date.now();
const log = (msg: string) => process.stderr.write(`[bench:codec +${((Date.now() - started) / 1000).toFixed(0)}s] ${msg}\n`);

log('Reed-Solomon: encode and worst-case reconstruct, every flavor this runtime accepts, ISA-L interleaved');
const measured = measureRs({
  quick,
  flavors: availableFlavors('gf256'),
  ...(rsTargets ? { configs: [[10, 4]], sizes: [1024 * 1024] } : {}),
});
if (measured.isalSkipped) log(`ISA-L ${measured.isalSkipped}`);
const strata = defaultFlavor('gf256');
const rs = [renderRsTargets(measured, strata), renderRs(measured, strata)].join('\n\n');
if (!rsTargets) log('checksums: Strata wasm vs hash-wasm vs node:crypto / node:zlib');
const sums = rsTargets ? '' : await runChecksumBench({ quick });

const body = [
  '## Codec (`npm run bench:codec`)',
  '',
  machineLine(['assemblyscript', 'hash-wasm']),
  '',
  `Kernel flavors available in this runtime: ${availableFlavors('gf256').join(', ')}; the default, which the targets judge and the server runs: ${strata}. ` +
    (relaxedSimdState === 'flag'
      ? "Relaxed SIMD is behind --experimental-wasm-relaxed-simd in this Node's V8, which this benchmark, like the `strata` command, turns on at start (src/wasm/relaxed-simd.ts); the plain SIMD build is what runs where relaxed SIMD is refused (a library user's Node 20 without the flag), and its rows are below."
      : relaxedSimdState === 'off'
        ? 'STRATA_RELAXED_SIMD=0: relaxed SIMD was left off.'
        : "Relaxed SIMD is on by default in this runtime's V8."),
  quick ? '\n**Quick run: short samples, not for publication.**' : '',
  '',
  rs,
  '',
  sums,
].join('\n');

console.log(body);
if (write) {
  writeSection('bench:codec', body);
  log('wrote bench/RESULTS.md');
}
