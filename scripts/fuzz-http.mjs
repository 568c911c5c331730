#!/usr/bin/env node
/**
 * HTTP fuzzer: malformed requests against a real `strata serve` child process.
 *
 *   npm run fuzz:http [-- --requests N] [--seed S] [--quick] [--concurrency C]
 *                     [--rss-bound-mib M] [--pending-mib P] [--case I]
 *
 * Starts the server (bundled from src/ with esbuild, so it is the current source), stores
 * known objects, sends N seeded malformed requests (raw sockets and undici), then checks:
 * the server is up, no 5xx other than 501 NotImplemented / 503 SlowDown, no internal error
 * logged, tampered requests refused, RSS growth after warm-up within the bound, the known
 * objects byte-exact and the listing exact. Prints progress and a summary table; exits 1
 * on any failure. `--case I` replays case I of the seed alone.
 *
 * The fuzzer itself lives in test/fuzz/http/ (TypeScript, bundled the same way).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string' },
    seed: { type: 'string', default: process.env.FUZZ_SEED ?? '1' },
    quick: { type: 'boolean', default: false },
    concurrency: { type: 'string', default: '6' },
    'rss-bound-mib': { type: 'string' }, // default: fuzz.ts DEFAULT_RSS_BOUND_MIB
    'pending-mib': { type: 'string', default: '1' },
    case: { type: 'string' },
  },
});
const requests = Number(args.requests ?? (args.quick ? 1500 : 10000));
const seed = Number(args.seed);
const concurrency = Number(args.concurrency);
const rssBoundMiB = args['rss-bound-mib'] === undefined ? undefined : Number(args['rss-bound-mib']);
const pendingMiB = Number(args['pending-mib']);
for (const [name, v] of Object.entries({ requests, seed, concurrency, pendingMiB, ...(rssBoundMiB === undefined ? {} : { rssBoundMiB }) })) {
  if (!Number.isInteger(v) || v < (name === 'seed' ? 0 : 1)) {
    process.stderr.write(`fuzz-http: --${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} must be a positive integer\n`);
    process.exit(2);
  }
}

const root = fileURLToPath(new URL('..', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'strata-fuzz-build-'));
// CommonJS dependencies bundled into ESM (undici) need a real `require` for built-ins.
const banner = { js: "import { createRequire as __fuzzRequire } from 'node:module'; const require = __fuzzRequire(import.meta.url);" };
const common = { bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'error', banner };
try {
  await build({ ...common, entryPoints: [join(root, 'src/cli/main.ts')], outfile: join(out, 'server.mjs') });
  await build({ ...common, entryPoints: [join(root, 'test/fuzz/http/fuzz.ts')], outfile: join(out, 'fuzz.mjs') });
  const { runHttpFuzz } = await import(pathToFileURL(join(out, 'fuzz.mjs')).href);
  const report = await runHttpFuzz({
    seed,
    requests,
    quick: args.quick,
    concurrency,
    ...(rssBoundMiB === undefined ? {} : { rssBoundMiB }),
    pendingMiB,
    serverEntry: join(out, 'server.mjs'),
    ...(args.case !== undefined ? { caseOnly: Number(args.case) } : {}),
  });
  process.exitCode = report.ok ? 0 : 1;
} finally {
  rmSync(out, { recursive: true, force: true });
}
