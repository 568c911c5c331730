// Rewrites the option table of README.md (between the `options:serve` markers) from the
// option table in src/server/config.ts, as built in dist/. Run by `npm run docs:options`;
// test/cli/readme-options.test.ts fails while the README and the table disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_OPTIONS } from '../dist/src/server/config.js';
import { optionsMarkdown, replaceOptionsSection } from '../dist/src/cli/help.js';

const readme = join(dirname(fileURLToPath(import.meta.url)), '..', 'README.md');
const before = readFileSync(readme, 'utf8');
const after = replaceOptionsSection(before, 'serve', optionsMarkdown(SERVER_OPTIONS));
if (after === before) console.log('README.md option table is up to date');
else {
  writeFileSync(readme, after);
  console.log('README.md option table rewritten');
}
