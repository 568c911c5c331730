/**
 * The structured logger (src/server/log.ts, src/server/stdout-lines.ts): a hand-built line is
 * exactly the JSON that JSON.stringify({ time, level, msg, ...fields }) gives, for hostile
 * field values too; levels filter; stdout lines written in one turn go out in one write, a
 * large batch at once, and what is pending is written when the process exits (normally, by
 * process.exit, or on an uncaught exception).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatLogLine, Logger } from '../../src/server/log.js';
import { FLUSH_BYTES, flushStdoutLines, writeStdoutLine } from '../../src/server/stdout-lines.js';

const reference = (level: string, msg: string, fields: Record<string, unknown>, line: string) => {
  const time = (JSON.parse(line) as { time: string }).time;
  return `${JSON.stringify({ time, level, msg, ...fields })}\n`;
};

describe('formatLogLine', () => {
  const cases: Record<string, unknown>[] = [
    {},
    { id: 'ABC', op: 'GetObject', bucket: 'b', key: 'k', status: 200, in: 0, out: 4096, ms: 0.3 },
    { key: 'quote " backslash \\ slash /', bucket: undefined, code: undefined },
    { key: 'ctl \u0000\u0001\n\r\t\u001f end' },
    { key: 'lone \ud800 high, lone \udfff low, pair \ud83d\ude00, line sep \u2028' },
    { key: 'ünïcödé ключ 鍵' },
    { n: NaN, inf: Infinity, neg: -0, big: 1e21, small: 1e-7, t: true, f: false, nul: null },
    { obj: { a: [1, 'x', null], d: new Date(0) }, arr: ['a"', 2] },
    { fn: () => 1, sym: Symbol('s') },
    { 'we"ird\nname': 'v' },
    { msg: 'override', level: 'x', time: 'y' },
  ];
  for (const [i, fields] of cases.entries()) {
    it(`matches JSON.stringify (case ${i})`, () => {
      const line = formatLogLine('info', 'request', fields);
      expect(line.endsWith('}\n')).toBe(true);
      expect(line.indexOf('\n')).toBe(line.length - 1);
      expect(line).toBe(reference('info', 'request', fields, line));
    });
  }

  it('quotes a hostile message and level', () => {
    const line = formatLogLine('warn"', 'a\nb', { x: 1 });
    expect(line).toBe(reference('warn"', 'a\nb', { x: 1 }, line));
  });

  it('skips inherited properties', () => {
    const fields = Object.create({ inherited: 'no' }) as Record<string, unknown>;
    fields.own = 'yes';
    expect(JSON.parse(formatLogLine('info', 'm', fields))).toEqual({ time: expect.any(String), level: 'info', msg: 'm', own: 'yes' });
  });

  it('carries the current time', () => {
    const before = Date.now();
    const t = Date.parse((JSON.parse(formatLogLine('info', 'm', {})) as { time: string }).time);
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(Date.now());
  });
});

describe('Logger levels', () => {
  it('info writes all, warn drops info, off keeps only errors', () => {
    for (const [level, want] of [['info', ['info', 'warn', 'error']], ['warn', ['warn', 'error']], ['off', ['error']]] as const) {
      const lines: string[] = [];
      const log = new Logger(level, (l) => lines.push(l));
      log.info('a', { k: 1 });
      log.warn('b');
      log.error('c');
      expect(lines.map((l) => (JSON.parse(l) as { level: string }).level)).toEqual(want);
      expect(log.infoEnabled).toBe(level === 'info');
    }
  });
});

describe('stdout batching', () => {
  it('writes the lines of one turn in one write, at the next turn', async () => {
    const writes: string[] = [];
    const real = process.stdout.write;
    process.stdout.write = ((chunk: string) => (writes.push(chunk), true)) as typeof process.stdout.write;
    try {
      writeStdoutLine('one\n');
      writeStdoutLine('two\n');
      expect(writes).toEqual([]);
      await new Promise((r) => setImmediate(r));
      expect(writes).toEqual(['one\ntwo\n']);
      // A batch past FLUSH_BYTES goes out at once (bounded memory).
      const big = `${'x'.repeat(FLUSH_BYTES)}\n`;
      writeStdoutLine('three\n');
      writeStdoutLine(big);
      expect(writes).toEqual(['one\ntwo\n', `three\n${big}`]);
      writeStdoutLine('four\n');
      flushStdoutLines();
      expect(writes.at(-1)).toBe('four\n');
      await new Promise((r) => setImmediate(r));
      expect(writes).toHaveLength(3);
    } finally {
      process.stdout.write = real;
    }
  });

  // The built module (npm run build:js): Node 20 runs no TypeScript.
  const moduleUrl = new URL('../../dist/src/server/stdout-lines.js', import.meta.url).href;
  for (const [name, ending] of [
    ['a normal exit', ''],
    ['process.exit()', 'process.exit(3);'],
    ['an uncaught exception', "throw new Error('boom');"],
  ] as const) {
    it(`writes pending lines at ${name}`, () => {
      const script = `const { writeStdoutLine } = await import(${JSON.stringify(moduleUrl)});
for (let i = 0; i < 1000; i++) writeStdoutLine('line ' + i + '\\n');
${ending}`;
      const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
      });
      const lines = out.stdout.split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(1000);
      expect(lines[999]).toBe('line 999');
    });
  }
});
