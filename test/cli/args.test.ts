/**
 * The shared argument parser of every `strata` verb: help and version win, unknown and
 * repeated flags, missing values and stray positionals are usage errors, `--` ends options.
 */
import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError, type ArgSpec } from '../../src/cli/args.js';
import { booleanType, integerType, pathType } from '../../src/server/option-types.js';
import type { OptionDef } from '../../src/server/options.js';

const options = [
  { name: 'json', key: 'json', type: booleanType(), help: 'machine-readable output' },
  { name: 'port', key: 'port', type: integerType({ min: 0, max: 65535 }), help: 'port' },
  { name: 'data', key: 'data', type: pathType(), help: 'data' },
  { name: 'hidden', key: 'hidden', type: pathType(), help: 'file only', from: { flag: false } },
] as OptionDef<never>[];

const spec: ArgSpec = { options, positionals: { name: 'DIR', max: 1 } };

function usage(argv: string[], s: ArgSpec, re: RegExp): void {
  expect(() => parseArgs(argv, s)).toThrow(UsageError);
  expect(() => parseArgs(argv, s)).toThrow(re);
}

describe('parseArgs', () => {
  it('reads values, switches and positionals', () => {
    const p = parseArgs(['--port', '9001', 'dir', '--json', '--data=/x=y'], spec);
    expect(Object.fromEntries(p.flags)).toEqual({ port: '9001', json: true, data: '/x=y' });
    expect(p.positionals).toEqual(['dir']);
    expect(parseArgs(['--json=false'], spec).flags.get('json')).toBe('false');
    // A value may start with a single dash (so a negative number reaches its range check).
    expect(parseArgs(['--port', '-5'], spec).flags.get('port')).toBe('-5');
    expect(parseArgs(['-'], spec).positionals).toEqual(['-']);
  });

  it('answers --help and --version before anything else is checked', () => {
    for (const argv of [['--help'], ['-h'], ['--prot', '1', '--help'], ['a', 'b', 'c', '-h']])
      expect(parseArgs(argv, spec).help).toBe(true);
    for (const argv of [['--version'], ['-V'], ['--bogus', '--version']])
      expect(parseArgs(argv, spec).version).toBe(true);
    // After `--`, --help is a positional.
    expect(parseArgs(['--', '--help'], spec).positionals).toEqual(['--help']);
  });

  it('refuses unknown flags with a hint, short options, repeats and missing values', () => {
    usage(['--prot', '1'], spec, /unknown option --prot \(did you mean --port\?\)/);
    usage(['--jsno'], spec, /did you mean --json/);
    usage(['--zzzzzz'], spec, /^unknown option --zzzzzz$/);
    usage(['-x'], spec, /unknown option -x/);
    usage(['--hidden', 'v'], spec, /unknown option --hidden/);
    usage(['--json', '--json'], spec, /--json is given twice/);
    usage(['--port=1', '--port', '2'], spec, /given twice/);
    usage(['--port'], spec, /--port needs a value/);
    usage(['--data', '--json'], spec, /--data needs a value/);
    usage([`--${'a'.repeat(70_000)}`], spec, /longer than/);
  });

  it('counts positionals, `--` included', () => {
    usage(['a', 'b'], spec, /unexpected argument 'b'/);
    usage(
      ['x'],
      { options, positionals: { name: 'X', max: 0, strayHint: 'use --data' } },
      /unexpected argument 'x' \(use --data\)/
    );
    usage([], { options, positionals: { name: 'NAME', min: 1, max: 1 } }, /missing NAME/);
    expect(parseArgs(['--', '--port'], spec).positionals).toEqual(['--port']);
    usage(['--', 'a', 'b'], spec, /unexpected argument 'b'/);
  });
});
