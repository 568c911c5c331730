/**
 * @module The shape of a `strata` verb: its options (entries of an option table), its
 * positional arguments, its help, and what it runs. main.ts parses the command line with
 * the verb's spec (args.ts), answers --help and --version, and calls `run`.
 */
import type { OptionDef } from '../server/options.js';
import type { ParsedArgs, PositionalSpec } from './args.js';

export interface Verb {
  /** The word after `strata`. */
  readonly name: string;
  /** One line for `strata --help`. */
  readonly summary: string;
  /** Arguments after the verb in the usage line: `[options] [DIR|URL]`. */
  readonly synopsis: string;
  /** What the verb does, a few lines for `strata <verb> --help`. */
  readonly description: string;
  readonly options: readonly OptionDef<never>[];
  readonly positionals?: PositionalSpec;
  /** Further help sections (environment-only settings, exit codes), already formatted. */
  readonly notes?: string;
  /**
   * Runs the verb with its parsed arguments; resolves with the exit code. Throws
   * OptionError (exit 2) for values that cannot be accepted; other errors exit 1.
   */
  run(args: ParsedArgs, env: NodeJS.ProcessEnv): Promise<number>;
}
