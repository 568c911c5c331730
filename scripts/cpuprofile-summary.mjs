#!/usr/bin/env node
/**
 * Sums a V8 .cpuprofile (node --cpu-prof) into the tables used to trim the request path:
 *
 *   node scripts/cpuprofile-summary.mjs FILE [--top N] [--after-idle MS] [--incl f1,f2,...]
 *
 * prints self time per file and per function (top N, default 40), and with --incl the
 * inclusive time of each named function (samples with it anywhere on the stack; shares are
 * of the busy, non-idle time). --after-idle MS counts only the samples after the last idle
 * stretch of at least MS (default 0: all): pause the load generator before the phase to
 * measure, so start-up and set-up drop out.
 */
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? dflt : args[i + 1];
};
const file = args[0];
if (!file || file.startsWith('--')) {
  process.stderr.write('usage: cpuprofile-summary.mjs FILE [--top N] [--after-idle MS] [--incl f1,f2]\n');
  process.exit(2);
}
const top = Number(opt('top', '40'));
const afterIdleUs = Number(opt('after-idle', '0')) * 1000;
const incl = (opt('incl', '') || '').split(',').filter(Boolean);

const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const idleId = p.nodes.find((n) => n.callFrame.functionName === '(idle)')?.id;
const dt = p.timeDeltas;

let start = 0;
if (afterIdleUs > 0) {
  let run = 0;
  for (let i = 0; i < p.samples.length; i++) {
    if (p.samples[i] === idleId) {
      run += dt[i] ?? 0;
      if (run >= afterIdleUs) start = i;
    } else run = 0;
  }
}
const self = new Map();
let total = 0;
let busy = 0;
for (let i = start; i < p.samples.length; i++) {
  const us = dt[i] ?? 0;
  self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + us);
  total += us;
  if (p.samples[i] !== idleId) busy += us;
}

const where = (c) => (c.url || '(native)').replace(/^.*\/(dist|node_modules)\//, '$1/');
const byFn = new Map();
const byFile = new Map();
for (const [id, us] of self) {
  const c = byId.get(id).callFrame;
  const k = `${c.functionName || '(anonymous)'} ${where(c)}:${c.lineNumber + 1}`;
  byFn.set(k, (byFn.get(k) ?? 0) + us);
  byFile.set(where(c), (byFile.get(where(c)) ?? 0) + us);
}
const ms = (us) => (us / 1000).toFixed(1).padStart(9);
const show = (title, m) => {
  console.log(`== ${title}: total ${(total / 1000).toFixed(0)} ms, busy ${(busy / 1000).toFixed(0)} ms`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(v)} ms ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
};
show('self time by file', byFile);
show('self time by function', byFn);

if (incl.length) {
  const sums = new Map(incl.map((n) => [n, 0]));
  for (const [id, us] of self) {
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur).callFrame.functionName;
      if (sums.has(f) && !seen.has(f)) {
        seen.add(f);
        sums.set(f, sums.get(f) + us);
      }
    }
  }
  console.log('== inclusive time (share of busy)');
  for (const [n, v] of sums) console.log(`${ms(v)} ms ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${n}`);
}
