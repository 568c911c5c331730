/**
 * @module The one argument parser every `strata` verb uses.
 *
 *   --name value | --name=value    an option of the verb's table (values are parsed later,
 *                                  by the option's type, so errors name the flag)
 *   --switch | --switch=false      a boolean option
 *   --help, -h / --version, -V     always accepted; they win over everything else
 *   --                             ends the options: what follows is positional
 *
 * Unknown flags (with a "did you mean"), a flag given twice, a missing value and stray
 * positional arguments are usage errors: nothing is guessed or ignored.
 */
import { OptionError } from '../server/option-types.js';
import { closest, type OptionDef } from '../server/options.js';

/** A command line that cannot be accepted; `strata` prints it and exits 2. */
export class UsageError extends OptionError {}

export interface PositionalSpec {
  /** Name in usage and messages: `DIR|URL`. */
  name: string;
  /** How many the verb takes at most (default 0) and at least (default 0). */
  max?: number;
  min?: number;
  /** Appended to the error for a stray argument (e.g. "use --data DIR"). */
  strayHint?: string;
}

export interface ArgSpec {
  options: readonly OptionDef<never>[];
  positionals?: PositionalSpec;
}

export interface ParsedArgs {
  /** Raw option values by option name (true: a bare switch). */
  flags: Map<string, string | true>;
  positionals: string[];
  help: boolean;
  version: boolean;
}

/** Longest argv element looked at: a longer one is not a flag or a value of ours. */
const MAX_ARG_CHARS = 64 * 1024;

function show(arg: string): string {
  return arg.length > 60 ? `${arg.slice(0, 60)}…` : arg;
}

/**
 * Parses `argv` (the words after the verb) against `spec`. Pure. When `--help` or
 * `--version` appear, returns at once with that flag set and nothing else checked. Throws
 * UsageError for an unknown or repeated flag, a missing value, too many or too few
 * positional arguments.
 */
export function parseArgs(argv: readonly string[], spec: ArgSpec): ParsedArgs {
  const out: ParsedArgs = { flags: new Map(), positionals: [], help: false, version: false };
  const before = argv.indexOf('--');
  const optionPart = before < 0 ? argv : argv.slice(0, before);
  if (optionPart.some((a) => a === '--help' || a === '-h')) return { ...out, help: true };
  if (optionPart.some((a) => a === '--version' || a === '-V')) return { ...out, version: true };
  const names = spec.options.map((d) => d.name);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg.length > MAX_ARG_CHARS)
      throw new UsageError(`argument ${i + 1} is longer than ${MAX_ARG_CHARS} characters`);
    if (arg === '--') {
      out.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      out.positionals.push(arg);
      continue;
    }
    if (!arg.startsWith('--'))
      throw new UsageError(`unknown option ${show(arg)} (options are spelled --name)`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const def = spec.options.find((d) => d.name === name && (d.from?.flag ?? true));
    if (!def) {
      const hint = closest(name, names);
      throw new UsageError(
        `unknown option --${show(name)}${hint ? ` (did you mean --${hint}?)` : ''}`
      );
    }
    if (out.flags.has(name)) throw new UsageError(`--${name} is given twice`);
    if (eq >= 0) {
      out.flags.set(name, arg.slice(eq + 1));
    } else if (def.type.isSwitch) {
      out.flags.set(name, true);
    } else {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith('--'))
        throw new UsageError(`--${name} needs a value ${def.type.placeholder}`);
      out.flags.set(name, value);
      i++;
    }
  }
  const p = spec.positionals;
  const max = p?.max ?? 0;
  if (out.positionals.length > max) {
    const stray = out.positionals[max]!;
    throw new UsageError(
      `unexpected argument '${show(stray)}'${p?.strayHint ? ` (${p.strayHint})` : ''}`
    );
  }
  if (out.positionals.length < (p?.min ?? 0)) throw new UsageError(`missing ${p!.name}`);
  return out;
}
