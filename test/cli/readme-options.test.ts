/**
 * The README's configuration table is the option table: this fails when an option is added
 * or changed in src/server/config.ts without `npm run docs:options`, and checks that the help
 * derived from the same table lists every flag.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { optionsMarkdown, replaceOptionsSection, verbHelp } from '../../src/cli/help.js';
import { serveVerb } from '../../src/cli/serve.js';
import { SERVER_OPTIONS } from '../../src/server/config.js';
import type { OptionDef } from '../../src/server/options.js';

const README = fileURLToPath(new URL('../../README.md', import.meta.url));

describe('README option table', () => {
  it('matches the option table (run `npm run docs:options` after changing options)', () => {
    const text = readFileSync(README, 'utf8');
    const table = optionsMarkdown(SERVER_OPTIONS as readonly OptionDef<never>[]);
    expect(replaceOptionsSection(text, 'serve', table)).toBe(text);
    for (const d of SERVER_OPTIONS) expect(table).toContain(`\`--${d.name}`);
  });

  it('serve --help lists every flag with its environment variable and default', () => {
    const help = verbHelp(serveVerb);
    for (const d of SERVER_OPTIONS) {
      expect(help).toContain(`--${d.name}`);
      if (d.env) expect(help).toContain(d.env);
    }
    expect(help).toMatch(/default 256MiB/);
    for (const line of help.split('\n')) expect(line.length).toBeLessThanOrEqual(100);
  });

  it('replaceOptionsSection refuses a README without markers', () => {
    expect(() => replaceOptionsSection('# nothing', 'serve', 'x')).toThrow(/markers/);
  });
});
