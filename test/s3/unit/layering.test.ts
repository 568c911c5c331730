/**
 * The S3 layer's layering: nothing under src/s3 imports from src/server (process wiring: the
 * server supplies what S3 needs through s3/ports.ts) or from src/provider (the store wraps
 * provider errors at its boundary, store/boundary.ts). Every import, export-from and dynamic
 * import() specifier of every file is resolved against its directory and checked; the scanner
 * itself is checked on lines that must and must not count.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const FORBIDDEN = ['src/server', 'src/provider'];

/** Module specifiers of `text`: static imports, export-from, import() and import type. */
function specifiers(text: string): string[] {
  const out: string[] = [];
  const patterns = [/\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, /^\s*import\s*['"]([^'"]+)['"]/gm];
  for (const re of patterns) for (const m of text.matchAll(re)) out.push(m[1]!);
  return out;
}

/** The forbidden layer `spec` (imported from `file`) lands in, or undefined. */
function forbiddenTarget(file: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const target = relative(root, resolve(dirname(file), spec)).split(sep).join('/');
  return FORBIDDEN.find((f) => target === f || target.startsWith(`${f}/`));
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? tsFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []
  );
}

describe('S3 layering', () => {
  it('the scanner finds what it must and nothing else', () => {
    const file = join(root, 'src/s3/ops/example.ts');
    const text = [
      "import type { Logger } from '../../server/log.js';",
      "import {\n  a,\n  b,\n} from '../../provider/provider.js';",
      "export { x } from \"../../server/x.js\";",
      "const m = await import('../../provider/fs/index.js');",
      "import '../../server/side-effect.js';",
      "import { ok } from '../../store/errors.js';",
      "import { h } from 'hono';",
      "// a comment naming server/log.js is not an import",
    ].join('\n');
    const hits = specifiers(text).filter((s) => forbiddenTarget(file, s) !== undefined);
    expect(hits).toEqual(['../../server/log.js', '../../provider/provider.js', '../../server/x.js', '../../provider/fs/index.js', '../../server/side-effect.js']);
    expect(forbiddenTarget(join(root, 'src/s3/app.ts'), './server-like.js')).toBeUndefined();
    expect(forbiddenTarget(join(root, 'src/s3/app.ts'), '../serverless/x.js')).toBeUndefined();
  });

  it('src/s3 imports nothing from src/server or src/provider', () => {
    const files = tsFiles(join(root, 'src/s3'));
    expect(files.length).toBeGreaterThan(50);
    const violations: string[] = [];
    for (const file of files) {
      for (const spec of specifiers(readFileSync(file, 'utf8'))) {
        if (forbiddenTarget(file, spec)) violations.push(`${relative(root, file)}: ${spec}`);
      }
    }
    expect(violations).toEqual([]);
  });
});
