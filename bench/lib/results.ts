/** @module Keeps bench/RESULTS.md: each benchmark owns one marked section and rewrites it. */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** bench/RESULTS.md, found from either bench/lib (tsx/vitest) or dist/bench/lib (built). */
export const RESULTS_PATH = (() => {
  for (const rel of ['../RESULTS.md', '../../../bench/RESULTS.md']) {
    const p = join(here, rel);
    if (existsSync(p)) return p;
  }
  return join(here, '../RESULTS.md');
})();

/**
 * Replaces the section between `<!-- name:start -->` and `<!-- name:end -->` in
 * bench/RESULTS.md with `body` (appending the section if it is new). Other sections are
 * left as they are.
 */
export function writeSection(name: string, body: string, path = RESULTS_PATH): void {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${start}\n${body.trim()}\n${end}`;
  let text = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmark results\n';
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i >= 0 && j > i) text = text.slice(0, i) + block + text.slice(j + end.length);
  else text = `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(path, text);
}
