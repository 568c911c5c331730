/**
 * bench:http's lanes and report: `--only=` selects lanes and groups and refuses unknown names,
 * a re-run lane replaces the stored lane for every target while the others stay, the stored
 * figures survive a save/load round trip, and the targets table gives PASS or MISS on every
 * row with a target (a figure not measured is a MISS, never a silent blank), computed from
 * the figures it is given.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadStored, mergeStored, saveStored, selectLanes, type CellSummary, type StoredHttp } from '../../bench/http-lanes.js';
import { renderSection, targetsTable } from '../../bench/http-report.js';
import { logLinesSince, logMark, type TargetName } from '../../bench/http-targets.js';
import type { ListStats } from '../../bench/http-list.js';

const K4 = 4096;
const M8 = 8 << 20;

function cell(target: TargetName, size: number, conc: number, op: 'PUT' | 'GET', opsPerSec: number, cpuMsPerOp: number, extra: { errors?: number; wrong?: number } = {}): CellSummary {
  const n = opsPerSec * 2;
  return {
    target,
    size,
    conc,
    op,
    p95: 1,
    p99: 2,
    runs: [
      {
        n,
        seconds: 2,
        errors: extra.errors ?? 0,
        wrong: extra.wrong ?? 0,
        bytes: n * size,
        checkedBytes: target === 'trivial-hono' ? 0 : n * size,
        p50: 0.3,
        serverCpuSeconds: (n * cpuMsPerOp) / 1000,
        clientCpuSeconds: 1,
        logLines: n,
      },
    ],
  };
}

const stamp = { at: '2026-12-02T03:00:00.000Z', load: [1, 1, 1], quick: false, runs: 1, ms: 2000, targets: ['strata', 's3rver', 'fs', 'trivial-hono'] as TargetName[] };

function listStats(objects: number, pageMs: number, delimMs: number): ListStats {
  const ms = (x: number) => Array.from({ length: 9 }, () => x);
  return {
    objects,
    populateSeconds: 1,
    cases: [
      { label: 'page', first: 1, ms: ms(pageMs), wrong: 0 },
      { label: 'page after', first: 1, ms: ms(pageMs), wrong: 0 },
      { label: 'root', first: 1, ms: ms(delimMs), wrong: 0 },
      { label: 'prefix', first: 1, ms: ms(1), wrong: 0 },
    ],
    pass: { pages: objects / 1000, keys: objects, seconds: 1, dup: 0, missing: 0, order: 0, pageP50: 1, pageP95: 2 },
  };
}

function stored(opts: { strataPut: number; strataGetCpu: number; errors?: number; wrong?: number }): StoredHttp {
  return {
    sweep: {
      put4k: { ...stamp, cells: [cell('strata', K4, 16, 'PUT', opts.strataPut, 0.2, { errors: opts.errors ?? 0 }), cell('fs', K4, 16, 'PUT', 2200, 0.5)] },
      get4k: {
        ...stamp,
        cells: [
          cell('strata', K4, 16, 'GET', 6000, opts.strataGetCpu, { wrong: opts.wrong ?? 0, errors: opts.wrong ?? 0 }),
          cell('trivial-hono', K4, 16, 'GET', 10000, 0.05),
          cell('s3rver', K4, 16, 'GET', 1000, 0.6),
          cell('strata', K4, 1, 'GET', 3000, 0.2),
        ],
      },
      put8m: { ...stamp, cells: [cell('strata', M8, 1, 'PUT', 60, 10)] },
      get8m: { ...stamp, cells: [cell('strata', M8, 1, 'GET', 100, 8)] },
    },
    lists: {
      list100k: { ...stamp, runs: 1, stats: listStats(100_000, 4, 8) },
      list1m: { ...stamp, runs: 1, stats: listStats(1_000_000, 6, 300) },
    },
  };
}

const row = (md: string, label: string) => md.split('\n').find((l) => l.startsWith(`| ${label}`)) ?? '';

describe('bench:http lanes', () => {
  it('selects lanes and groups, and refuses unknown names', () => {
    expect(selectLanes('put4k,get4k', false).sweep.map((l) => l.name)).toEqual(['put4k', 'get4k']);
    expect(selectLanes('put4k,get4k', false).lists).toEqual([]);
    expect(selectLanes('list', false)).toEqual({ sweep: [], lists: ['list100k', 'list1m'] });
    expect(selectLanes('list', true).lists).toEqual(['list10k']);
    expect(selectLanes('get', false).sweep.map((l) => l.name)).toEqual(['get4k', 'get64k', 'get1m', 'get8m', 'get64m']);
    expect(selectLanes(undefined, false).sweep).toHaveLength(10);
    expect(() => selectLanes('put4k,bogus', false)).toThrow(/unknown lane 'bogus'/);
    const lanes = selectLanes('sweep', false).sweep;
    expect(lanes.every((l) => l.keys >= 2 && l.keys * l.size <= 128 << 20)).toBe(true);
    expect(lanes.filter((l) => l.conc.includes(16)).every((l) => l.keys >= 16)).toBe(true);
  });

  it('replaces a re-run lane for every target and keeps the other lanes', () => {
    const base = stored({ strataPut: 1000, strataGetCpu: 0.2 });
    const rerun: StoredHttp = { sweep: { put4k: { ...stamp, targets: ['strata'], cells: [cell('strata', K4, 16, 'PUT', 9000, 0.1)] } }, lists: {} };
    const merged = mergeStored(base, rerun);
    expect(merged.sweep.put4k!.cells).toHaveLength(1);
    expect(merged.sweep.get4k).toBe(base.sweep.get4k);
    expect(merged.lists.list1m).toBe(base.lists.list1m);
  });

  it('saves and loads the stored figures unchanged, one line per lane', () => {
    const dir = mkdtempSync(join(tmpdir(), 'http-store-'));
    try {
      const path = join(dir, 'RESULTS-http.json');
      expect(loadStored(path)).toEqual({ sweep: {}, lists: {} });
      const s = stored({ strataPut: 1000, strataGetCpu: 0.2 });
      saveStored(s, path);
      expect(loadStored(path)).toEqual(s);
      saveStored({ sweep: {}, lists: {} }, path);
      expect(loadStored(path)).toEqual({ sweep: {}, lists: {} });
      writeFileSync(path, '{not json');
      expect(() => loadStored(path)).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('counts the log lines a server wrote after a mark', () => {
    const dir = mkdtempSync(join(tmpdir(), 'http-log-'));
    try {
      const path = join(dir, 'stdout.log');
      expect(logMark(path)).toBe(0);
      writeFileSync(path, 'a\nb\n');
      const mark = logMark(path);
      writeFileSync(path, 'a\nb\n' + '{"msg":"request"}\n'.repeat(100_000));
      expect(logLinesSince(path, mark)).toBe(100_000);
      expect(logLinesSince(path, 0)).toBe(100_002);
      expect(logLinesSince(join(dir, 'absent'), 0)).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('bench:http targets table', () => {
  it('passes rows whose figures meet the targets and misses the others', () => {
    const md = targetsTable(stored({ strataPut: 5000, strataGetCpu: 0.1 }));
    expect(row(md, '4 KiB PUT (durable), 16 conn, vs the fs peer')).toMatch(/5,000 vs 2,200 ops\/s = 2\.3x \| PASS/);
    expect(row(md, '4 KiB PUT (durable), 16 conn |')).toMatch(/5,000 ops\/s \| PASS/);
    expect(row(md, '4 KiB GET, 16 conn, vs trivial')).toMatch(/6,000 vs 10,000 ops\/s = 60% \| PASS/);
    expect(row(md, '4 KiB GET, 16 conn, server CPU')).toMatch(/0\.100 vs 0\.050 ms = 2\.0x \| PASS/);
    expect(row(md, '8 MiB PUT')).toMatch(/480 MiB\/s \| PASS/);
    expect(row(md, '8 MiB GET')).toMatch(/800 MiB\/s \| MISS/);
    expect(row(md, 'LIST page of 1000, 100,000')).toMatch(/4\.00 ms \| PASS/);
    expect(row(md, 'delimiter LIST (1,000 prefixes), 100,000')).toMatch(/8\.00 ms .*\| PASS/);
    expect(row(md, 'delimiter LIST (1,000 prefixes), 1,000,000')).toMatch(/300\.00 ms .*\| MISS/);
    expect(row(md, 'LIST page of 1000, 1,000,000')).toMatch(/no target/);
    expect(row(md, 'full paginated pass, 1,000,000')).toMatch(/PASS/);
    expect(row(md, 'errors')).toMatch(/\| PASS \|$/);
    expect(row(md, 'bytes checked')).toMatch(/0 wrong responses.*\| PASS \|$/);
    expect(row(md, 'earlier: 4 KiB GET, 16 conn, vs s3rver')).toMatch(/6\.0x \| MISS/);
    // Every row either has a verdict or says it has no target.
    for (const l of md.split('\n').slice(2)) expect(l).toMatch(/\| (PASS|MISS) \|$|no target/);
  });

  it('misses on slow figures, errors, wrong bytes and figures not measured', () => {
    const md = targetsTable(stored({ strataPut: 3000, strataGetCpu: 0.2, errors: 2, wrong: 1 }));
    expect(row(md, '4 KiB PUT (durable), 16 conn, vs the fs peer')).toMatch(/1\.4x \| MISS/);
    expect(row(md, '4 KiB GET, 16 conn, server CPU')).toMatch(/4\.0x \| MISS/);
    expect(row(md, 'errors')).toMatch(/strata 3.*\| MISS \|$/);
    expect(row(md, 'bytes checked')).toMatch(/1 wrong responses.*\| MISS \|$/);
    const empty = targetsTable({ sweep: {}, lists: {} });
    expect(row(empty, '8 MiB GET')).toMatch(/not measured \| MISS/);
    expect(row(empty, 'errors')).toMatch(/not measured \| MISS/);
    expect(row(empty, 'delimiter LIST (1,000 prefixes), 1,000,000')).toMatch(/not measured \| MISS/);
  });

  it('a ratio just short of its target is shown with the digits that tell it apart', () => {
    // 4,340 / 2,200 = 1.973x would read "2.0x" against ">= 2x"; 1.99 would read "2.0x" too.
    expect(row(targetsTable(stored({ strataPut: 4340, strataGetCpu: 0.1 })), '4 KiB PUT (durable), 16 conn, vs the fs peer')).toMatch(/= 1\.97x \| MISS/);
    expect(row(targetsTable(stored({ strataPut: 4378, strataGetCpu: 0.1 })), '4 KiB PUT (durable), 16 conn, vs the fs peer')).toMatch(/= 1\.99x \| MISS/);
    expect(row(targetsTable(stored({ strataPut: 4400, strataGetCpu: 0.1 })), '4 KiB PUT (durable), 16 conn, vs the fs peer')).toMatch(/= 2\.0x \| PASS/);
    // A CPU ratio of 3.004x against "<= 3x" is a MISS, shown as 3.004x (not "3.0x").
    expect(row(targetsTable(stored({ strataPut: 5000, strataGetCpu: 0.1502 })), '4 KiB GET, 16 conn, server CPU')).toMatch(/= 3\.004x \| MISS/);
  });

  it('renders a section with the differences, each lane stamp, and log lines per operation', () => {
    const md = renderSection(stored({ strataPut: 5000, strataGetCpu: 0.1 }), false);
    expect(md).toContain('only Strata verifies SigV4');
    expect(md).toMatch(/\| put4k \| 2026-12-02T03:00:00Z \| 1\.00 \/ 1\.00 \/ 1\.00 \| full \|/);
    expect(md).toMatch(/\| strata \| 16 \| 4 KiB \| PUT \|.*\| 1\.00 \|$/m);
    expect(md).toContain('### LIST, 1,000,000 objects');
    expect(md).not.toContain('quick runs');
  });
});
