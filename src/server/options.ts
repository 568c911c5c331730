/**
 * @module Declarative options: one table entry per option (flag name, environment variable,
 * type, default, help) from which flag parsing (cli/args.ts), the environment, the config
 * file (config-file.ts), validation, `--help` and the README table all derive.
 *
 * Precedence, per option: flag > environment > config file > default. An empty environment
 * variable counts as unset (`STRATA_REGION= strata serve` is the same as not setting it).
 * Every source is validated, not only the winning one: a bad value is an error wherever it is.
 */
import { OptionError, type OptionType, type RawValue } from './option-types.js';

/** Where an option may be given. */
export interface OptionSourcesAllowed {
  flag?: boolean;
  env?: boolean;
  file?: boolean;
}

/** One option. `C` is the object the option resolves into; `key` names its field. */
export interface OptionDef<C = Record<string, unknown>> {
  /** Flag spelling without the dashes, also the config-file key: `pending-bytes`. */
  readonly name: string;
  /** Field of the resolved object: `pendingBytes`. */
  readonly key: keyof C & string;
  /** Environment variable, if any: `STRATA_PENDING_BYTES`. */
  readonly env?: string;
  readonly type: OptionType<unknown>;
  /** Value when no source gives one (absent: the field stays undefined). */
  readonly default?: unknown;
  /** One line for `--help` and the README. */
  readonly help: string;
  /** Further config-file spellings (the camelCase of `name` is always accepted). */
  readonly aliases?: readonly string[];
  /** Sources the option may come from (default: all three). */
  readonly from?: OptionSourcesAllowed;
}

/**
 * Builds a table entry whose type and default are checked against the field they fill:
 * `defineOption<ServerConfig, 'port'>({ key: 'port', type: integerType(...), ... })`.
 */
export function defineOption<C, K extends keyof C & string>(
  def: Omit<OptionDef<C>, 'key' | 'type' | 'default'> & {
    key: K;
    type: OptionType<NonNullable<C[K]>>;
    default?: NonNullable<C[K]>;
  }
): OptionDef<C> {
  return def as OptionDef<C>;
}

/** `pending-bytes` → `pendingBytes`. */
export function camelCase(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Every config-file spelling of `def`: its name, its camelCase, its aliases. */
export function fileKeys(def: OptionDef<never>): string[] {
  return [...new Set([def.name, camelCase(def.name), ...(def.aliases ?? [])])];
}

export const allowed = (def: OptionDef<never>, source: keyof OptionSourcesAllowed): boolean =>
  def.from?.[source] ?? true;

/** Values already gathered from each source, keyed by option name. */
export interface OptionSources {
  /** From the command line (cli/args.ts): a string, or true for a bare switch. */
  flags?: ReadonlyMap<string, string | true>;
  env?: NodeJS.ProcessEnv;
  /** From the config file (config-file.ts), with the file's path for messages. */
  file?: { path: string; values: ReadonlyMap<string, RawValue> };
}

/**
 * Resolves every option of `table` from `sources` (precedence in the module doc) and applies
 * defaults. Pure: reads only its arguments. Throws one OptionError listing every bad value.
 */
export function resolveOptions<C>(
  table: readonly OptionDef<C>[],
  sources: OptionSources
): Partial<C> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const def of table) {
    const candidates: [RawValue, string][] = [];
    const flag = sources.flags?.get(def.name);
    if (flag !== undefined) candidates.push([flag, `--${def.name}`]);
    const env =
      def.env && allowed(def as OptionDef<never>, 'env') ? sources.env?.[def.env] : undefined;
    if (env !== undefined && env !== '') candidates.push([env, def.env!]);
    const file = sources.file?.values.get(def.name);
    if (file !== undefined) candidates.push([file, `${sources.file!.path}: ${def.name}`]);
    let chosen: unknown;
    let have = false;
    for (const [raw, origin] of candidates) {
      try {
        const value = def.type.parse(raw, origin);
        if (!have) {
          chosen = value;
          have = true;
        }
      } catch (err) {
        if (!(err instanceof OptionError)) throw err;
        problems.push(err.message);
      }
    }
    if (have) out[def.key] = chosen;
    else if (def.default !== undefined) out[def.key] = def.default;
  }
  if (problems.length) throw new OptionError(problems.join('\n'));
  return out as Partial<C>;
}

/** The option of `table` whose flag is `name`, if any. */
export function findOption<C>(
  table: readonly OptionDef<C>[],
  name: string
): OptionDef<C> | undefined {
  return table.find((d) => d.name === name);
}

/** Levenshtein distance, for "did you mean" hints (inputs are short option names). */
function distance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Infinity;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(
        prev[j]! + 1,
        cur[j - 1]! + 1,
        prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)
      );
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** The closest of `names` to `word` (at most 2 edits, or a prefix), for a hint; undefined if none is close. */
export function closest(word: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = 3;
  for (const n of names) {
    const d =
      n.startsWith(word) && word.length >= 3 ? 1 : distance(word.toLowerCase(), n.toLowerCase());
    if (d < bestD) {
      best = n;
      bestD = d;
    }
  }
  return best;
}
