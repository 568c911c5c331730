/**
 * @module Help text, generated from the verbs and their option tables: `strata --help`,
 * `strata <verb> --help`, and the README's option table (checked by a test, rewritten by
 * `npm run docs:options`).
 */
import type { OptionDef } from '../server/options.js';
import type { Verb } from './verb.js';

/** Column where option descriptions start in help output. */
const HELP_COLUMN = 28;

/** Help lines are wrapped to this width (a terminal's 100 columns, as the code's). */
const HELP_WIDTH = 100;

/** Splits `text` into lines of at most `width` characters at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

function flagColumn(def: OptionDef<never>): string {
  return `--${def.name}${def.type.placeholder ? ` ${def.type.placeholder}` : ''}`;
}

function details(def: OptionDef<never>): string {
  const bits: string[] = [];
  if (def.default !== undefined && def.default !== false)
    bits.push(`default ${def.type.format(def.default as never)}`);
  if (def.env && (def.from?.env ?? true)) bits.push(`env ${def.env}`);
  return bits.length ? ` (${bits.join('; ')})` : '';
}

function row(left: string, text: string): string {
  const body = wrap(text, HELP_WIDTH - HELP_COLUMN).map((l) => `${' '.repeat(HELP_COLUMN)}${l}`);
  if (left.length + 2 < HELP_COLUMN)
    body[0] = `  ${left.padEnd(HELP_COLUMN - 2)}${body[0]!.trimStart()}`;
  else body.unshift(`  ${left}`);
  return body.join('\n');
}

/** `strata <verb> --help`. */
export function verbHelp(verb: Verb): string {
  const lines = [
    `usage: strata ${verb.name} ${verb.synopsis}`.trimEnd(),
    '',
    verb.description.trim(),
    '',
    'options:',
  ];
  for (const def of verb.options)
    if (def.from?.flag ?? true) lines.push(row(flagColumn(def), `${def.help}${details(def)}`));
  lines.push(row('-h, --help', 'show this help'), row('-V, --version', 'show the version'));
  if (verb.notes) lines.push('', verb.notes.trimEnd());
  return `${lines.join('\n')}\n`;
}

/** `strata --help`. */
export function mainHelp(verbs: readonly Verb[]): string {
  const lines = ['usage: strata <command> [options]', '', 'commands:'];
  for (const v of verbs) lines.push(row(v.name, v.summary));
  lines.push('', "Run 'strata <command> --help' for the options of a command.");
  return `${lines.join('\n')}\n`;
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|');
}

/** Prose in a markdown cell: pipes escaped, and angle brackets so `<bucket>` is not read as HTML. */
function prose(s: string): string {
  return cell(s).replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The README's option table (markdown) for `table`. */
export function optionsMarkdown(table: readonly OptionDef<never>[]): string {
  const lines = ['| flag | environment | config-file key | default | |', '|---|---|---|---|---|'];
  for (const def of table) {
    const flag =
      (def.from?.flag ?? true)
        ? `\`--${def.name}${def.type.placeholder ? ` ${def.type.placeholder}` : ''}\``
        : '';
    const env = def.env && (def.from?.env ?? true) ? `\`${def.env}\`` : '';
    const key = (def.from?.file ?? true) ? `\`${def.name}\`` : '';
    const dflt = def.default !== undefined ? `\`${def.type.format(def.default as never)}\`` : '';
    lines.push(`| ${cell(flag)} | ${env} | ${key} | ${cell(dflt)} | ${prose(def.help)} |`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `text` (the README) with the section between `<!-- options:<name>:start ... -->` and
 * `<!-- options:<name>:end -->` replaced by `table`. Pure. Throws Error if the markers are
 * missing.
 */
export function replaceOptionsSection(text: string, name: string, table: string): string {
  const start = new RegExp(`<!-- options:${name}:start[^\\n]*-->\\n`).exec(text);
  const end = text.indexOf(`<!-- options:${name}:end -->`);
  if (!start || end < start.index) throw new Error(`README has no options:${name} markers`);
  return text.slice(0, start.index + start[0].length) + table + text.slice(end);
}
