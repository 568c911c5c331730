/**
 * The ISA-L lane of bench:codec: the C harness builds and reports well-formed rates for a
 * tiny RS(3,2) (when cc and libisal-dev are installed; otherwise the build returns the skip
 * line naming the package), and runIsal refuses output that is not what the harness prints.
 */
import { describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIsalHarness, runIsal } from '../../bench/isal/isal.js';

describe('bench/isal harness', () => {
  it('builds and measures RS(3,2), or says which package to install', () => {
    const h = buildIsalHarness();
    if ('skipped' in h) {
      expect(h.skipped).toMatch(/^skipped: apt-get install libisal-dev/);
      return;
    }
    const rows = runIsal(h.path, 3, 2, 4096, 2, 2, 'cpu');
    expect(rows.map((r) => `${r.impl}/${r.op}`).sort()).toEqual([
      'dispatch/encode',
      'dispatch/reconstruct',
      'sse/encode',
      'sse/reconstruct',
    ]);
    for (const r of rows) expect(r.mbps).toHaveLength(2);
  });

  it('refuses bad arguments, failures and malformed output', () => {
    const dir = mkdtempSync(join(tmpdir(), 'isal-fake-'));
    try {
      const fake = (name: string, body: string): string => {
        const p = join(dir, name);
        writeFileSync(p, `#!/bin/sh\n${body}\n`);
        chmodSync(p, 0o755);
        return p;
      };
      const row = (impl: string, op: string, mbps: string) => `{"impl":"${impl}","op":"${op}","mbps":${mbps}}`;
      const out = (k: number, rows: string, clock = 'cpu') =>
        `echo '{"k":${k},"m":2,"shard":64,"clock":"${clock}","rows":[${rows}]}'`;
      const cases: [string, string][] = [
        ['exit status', 'exit 3'],
        ['not json', 'echo hello'],
        ['truncated', `echo '{"k":3,"m":2,"shard":64,"rows":[{"impl"'`],
        ['other config', out(4, row('sse', 'encode', '[1]'))],
        ['other clock', out(3, row('sse', 'encode', '[1]'), 'wall')],
        ['unknown impl', out(3, row('avx9', 'encode', '[1]'))],
        ['unknown op', out(3, row('sse', 'rm -rf', '[1]'))],
        ['wrong run count', out(3, row('sse', 'encode', '[1,2]'))],
        ['non-positive rate', out(3, row('sse', 'encode', '[0]'))],
        ['non-numeric rate', out(3, row('sse', 'encode', '["x"]'))],
      ];
      for (const [label, body] of cases) {
        expect(() => runIsal(fake(label.replace(/\W/g, '_'), body), 3, 2, 64, 1, 1), label).toThrow();
      }
      expect(runIsal(fake('good', out(3, row('sse', 'encode', '[12.5]'))), 3, 2, 64, 1, 1)).toEqual([
        { impl: 'sse', op: 'encode', mbps: [12.5] },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
