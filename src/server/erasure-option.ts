/**
 * @module The `--erasure k+m` option (env STRATA_ERASURE) shared by `strata serve` and every
 * verb that takes `--data`, and the one rule that turns `--data`, `--erasure` and a config
 * file's `erasure` section into an erasure set-up, or none:
 *
 *   --data DIR                                   a plain repository
 *   --data '/mnt/disk{1...6}' --erasure 4+2      an erasure set (provider/erasure/config.ts)
 *   config file "erasure": { k, m, domains, … }  an erasure set; --erasure overrides its k+m
 *   --data '/mnt/disk{1...6}' alone              refused: several domains need --erasure
 *   --erasure 4+2 with one directory             refused: an erasure set needs several domains
 */
import { readConfigFile } from './config-file.js';
import { OptionError, pathType, stringType } from './option-types.js';
import { defineOption, type OptionDef } from './options.js';
import {
  ErasureConfigError,
  looksLikeDomainList,
  parseErasureSpec,
  resolveErasureConfig,
} from '../provider/erasure/config.js';
import type { ErasureConfig } from '../provider/erasure/types.js';

/** The option fields a table with erasure support resolves into. */
export interface ErasureOptionFields {
  erasure?: string;
  configFile?: string;
}

/** `--erasure k+m`: checked when parsed (the rest of the set-up is checked with the domains). */
export function erasureOption<C extends { erasure?: string }>(): OptionDef<C> {
  return defineOption<{ erasure?: string }, 'erasure'>({
    name: 'erasure',
    key: 'erasure',
    env: 'STRATA_ERASURE',
    type: stringType({
      maxLength: 16,
      placeholder: '<k+m>',
      check: (v) => {
        try {
          parseErasureSpec(v);
          return undefined;
        } catch (err) {
          return (err as Error).message.replace(/^"[^"]*" /, '');
        }
      },
    }),
    help: "erasure-code across the failure domains --data names ('/mnt/disk{1...6}' or a comma list): k data + m parity fragments, e.g. 4+2",
    from: { file: false },
  }) as unknown as OptionDef<C>;
}

/**
 * `--config <file>` for admin verbs: only the file's `erasure` section is read (the domains'
 * ids, labels and policy, so a verb places fragments as the server does); other keys are
 * checked as `strata serve` checks them and otherwise ignored.
 */
export function erasureConfigFileOption<C extends { configFile?: string }>(): OptionDef<C> {
  return defineOption<{ configFile?: string }, 'configFile'>({
    name: 'config',
    key: 'configFile',
    env: 'STRATA_CONFIG',
    type: pathType('<file>'),
    help: "the server's JSON config file, for its erasure section (domain ids, labels, policy)",
    from: { file: false },
  }) as unknown as OptionDef<C>;
}

/**
 * The erasure set-up `data`, `erasure` and the config file section give, or undefined for a
 * plain repository (rules in the module doc). Throws OptionError (exit 2) with the reason:
 * several domains without --erasure, --erasure with one directory, or anything
 * resolveErasureConfig refuses (bad braces, a policy the domains cannot satisfy, …).
 */
export function erasureSetup(src: {
  data: string;
  erasure?: string;
  file?: unknown;
  fileName?: string;
}): ErasureConfig | undefined {
  if (src.erasure === undefined && src.file === undefined) {
    if (looksLikeDomainList(src.data))
      throw new OptionError(
        `--data ${JSON.stringify(src.data.slice(0, 80))} names several failure domains: add --erasure k+m (e.g. --erasure 4+2) to erasure-code across them`
      );
    return undefined;
  }
  try {
    return resolveErasureConfig({
      data: src.data,
      ...(src.erasure !== undefined ? { erasure: src.erasure } : {}),
      ...(src.file !== undefined ? { file: src.file } : {}),
      ...(src.fileName !== undefined ? { fileName: src.fileName } : {}),
    });
  } catch (err) {
    if (err instanceof ErasureConfigError) throw new OptionError(err.message);
    throw err;
  }
}

/**
 * For a verb: the set-up from its resolved `--data`, `--erasure` and `--config` (reads the
 * config file, if one is named, with the server's option table so its other keys are checked
 * the same way). Throws OptionError as erasureSetup does, or for an unreadable config file.
 */
export async function erasureSetupForVerb(o: { data: string } & ErasureOptionFields): Promise<ErasureConfig | undefined> {
  let file: unknown;
  if (o.configFile !== undefined) {
    const { SERVER_OPTIONS, SERVER_FILE_EXTRA_KEYS } = await import('./config.js');
    file = readConfigFile(o.configFile, SERVER_OPTIONS, SERVER_FILE_EXTRA_KEYS).extra.get('erasure');
  }
  return erasureSetup({
    data: o.data,
    ...(o.erasure !== undefined ? { erasure: o.erasure } : {}),
    ...(file !== undefined ? { file, fileName: o.configFile! } : {}),
  });
}
