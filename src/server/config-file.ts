/**
 * @module The JSON config file: read with bounds, checked key by key against the option
 * table. Keys are spelled like the flags (`base-domain`); the camelCase spelling and each
 * option's aliases (`baseDomain`, `pendingBytes`, `masterKeyFile`) are accepted so older
 * files keep working. Unknown keys, options that may not come from a file (`config`), and
 * one option given under two spellings are refused with a message naming them.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { OptionError, type RawValue } from './option-types.js';
import { allowed, closest, fileKeys, type OptionDef } from './options.js';

/** Largest config file read, bytes: a config is a few hundred bytes; a key list of a few
 * thousand entries still fits. Bounds what a wrong path (a log, /dev/zero) can cost. */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

export interface ConfigFile {
  path: string;
  /** Option values by option name (aliases already mapped). */
  values: Map<string, RawValue>;
  /** Values of the extra keys the caller accepts (e.g. `credentials`), by key. */
  extra: Map<string, RawValue>;
}

/** Reads at most MAX_CONFIG_FILE_BYTES of a regular file; throws OptionError otherwise. */
function readBounded(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new OptionError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new OptionError(`config file ${path} is not a regular file`);
    if (st.size > MAX_CONFIG_FILE_BYTES) {
      throw new OptionError(
        `config file ${path} is ${st.size} bytes; the limit is ${MAX_CONFIG_FILE_BYTES}`
      );
    }
    const buf = Buffer.alloc(MAX_CONFIG_FILE_BYTES + 1);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      if (n > MAX_CONFIG_FILE_BYTES)
        throw new OptionError(
          `config file ${path} grew past ${MAX_CONFIG_FILE_BYTES} bytes while read`
        );
    }
    try {
      return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(buf.subarray(0, n));
    } catch {
      throw new OptionError(`config file ${path} is not UTF-8 text`);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads and checks the config file at `path` against `table`; `extraKeys` are further keys
 * the caller handles itself. Reads only `path`. Throws OptionError for an unreadable file,
 * invalid JSON, a non-object, unknown or misplaced keys, or an option spelled twice. Values
 * are not parsed here (resolveOptions does, naming the file).
 */
export function readConfigFile<C>(
  path: string,
  table: readonly OptionDef<C>[],
  extraKeys: readonly string[] = []
): ConfigFile {
  const text = readBounded(path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new OptionError(`config file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new OptionError(`config file ${path} must hold a JSON object ({ "port": 9000, ... })`);
  }
  const byKey = new Map<string, OptionDef<C>>();
  for (const def of table) for (const k of fileKeys(def as OptionDef<never>)) byKey.set(k, def);
  const values = new Map<string, RawValue>();
  const extra = new Map<string, RawValue>();
  const seenAs = new Map<string, string>();
  const problems: string[] = [];
  for (const [key, value] of Object.entries(parsed as Record<string, RawValue>)) {
    if (extraKeys.includes(key)) {
      extra.set(key, value);
      continue;
    }
    const def = byKey.get(key);
    if (!def) {
      const hint = closest(key, [
        ...table.filter((d) => allowed(d as OptionDef<never>, 'file')).map((d) => d.name),
        ...extraKeys,
      ]);
      problems.push(`unknown key '${key.slice(0, 64)}'${hint ? ` (did you mean '${hint}'?)` : ''}`);
      continue;
    }
    if (!allowed(def as OptionDef<never>, 'file')) {
      problems.push(`'${key}' cannot be set in a config file`);
      continue;
    }
    const earlier = seenAs.get(def.name);
    if (earlier !== undefined) {
      problems.push(`'${key}' and '${earlier}' are the same option`);
      continue;
    }
    seenAs.set(def.name, key);
    values.set(def.name, value);
  }
  if (problems.length) throw new OptionError(`config file ${path}: ${problems.join('; ')}`);
  return { path, values, extra };
}
