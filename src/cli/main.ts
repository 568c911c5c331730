#!/usr/bin/env -S GLIBC_TUNABLES=glibc.malloc.trim_threshold=67108864:glibc.malloc.mmap_threshold=4194304:glibc.malloc.hugetlb=1 node --initial-old-space-size=64
/**
 * @module The `strata` command: one verb per file (verb.ts), parsed by one parser (args.ts).
 *
 *   strata serve   [options]              the S3 server (npm start)
 *   strata verify  [options] [DIR|URL]    check a repository end to end (read-only)
 *   strata keys    <command> ...          manage access keys
 *   strata fork    SRC DST [options]      fork a bucket in constant time
 *   strata history BUCKET [KEY]           what changed when (history-window: how far back)
 *   strata restore BUCKET --to TIME       restore a bucket or a prefix to a past time
 *
 * Every verb answers --help and --version without doing anything else. Exit codes: 0 success,
 * 1 failure, 2 bad command line or configuration (nothing was touched).
 */
// First: before any module below compiles WebAssembly (relaxed-simd.ts).
import '../wasm/relaxed-simd.js';
import { parseArgs, type ArgSpec } from './args.js';
import { mainHelp, verbHelp } from './help.js';
import { VERBS } from './verbs.js';
import { versionLine } from './version.js';
import { OptionError } from '../server/option-types.js';

/** Exit code for a command line or configuration that cannot be accepted. */
const USAGE_EXIT = 2;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    process.stderr.write(mainHelp(VERBS));
    return USAGE_EXIT;
  }
  if (command === 'help' || command === '--help' || command === '-h') {
    const verb = VERBS.find((v) => v.name === rest[0]);
    process.stdout.write(verb ? verbHelp(verb) : mainHelp(VERBS));
    return 0;
  }
  if (command === '--version' || command === '-V') {
    process.stdout.write(versionLine());
    return 0;
  }
  const verb = VERBS.find((v) => v.name === command);
  if (!verb) {
    process.stderr.write(`strata: unknown command '${command.slice(0, 60)}'\n\n${mainHelp(VERBS)}`);
    return USAGE_EXIT;
  }
  try {
    const spec: ArgSpec = {
      options: verb.options,
      ...(verb.positionals ? { positionals: verb.positionals } : {}),
    };
    const args = parseArgs(rest, spec);
    if (args.help) {
      process.stdout.write(verbHelp(verb));
      return 0;
    }
    if (args.version) {
      process.stdout.write(versionLine());
      return 0;
    }
    return await verb.run(args, process.env);
  } catch (err) {
    if (err instanceof OptionError) {
      process.stderr.write(
        `strata ${verb.name}: ${err.message.replace(/\n/g, `\nstrata ${verb.name}: `)}\n(see 'strata ${verb.name} --help')\n`
      );
      return USAGE_EXIT;
    }
    const code = (err as { exitCode?: unknown }).exitCode;
    process.stderr.write(
      `strata ${verb.name}: ${err instanceof Error ? err.message : String(err)}\n`
    );
    return typeof code === 'number' ? code : 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`strata: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
);
