/**
 * @module The as-of section of `bench:history`: GET and LIST of a 100,000-object bucket as of
 * 1 hour and 1 day of writes back, against current reads in the same run (issue 9).
 *
 * Time is simulated with the store's injected clock (Store.open `now`): the bucket is built at
 * day 0, then a day of writes follows — WRITES_PER_DAY overwrites (and some deletes and new
 * keys) of random keys, spread evenly over 24 simulated hours, in concurrent groups of BATCH
 * — so "1 hour back" has ~1/24 of them after it and "1 day back" all of them (about one later
 * write per key). A checkpoint then puts everything in runs (the realistic state of a bucket a
 * day old), and every read is measured warm (one unmeasured pass of each kind first).
 *
 * Measured, each as a median of many: GET of a random existing key (whole 64 B body); a LIST
 * page of 1000 (ListObjectsV2 without delimiter, pages walked from random start keys); a
 * delimiter LIST page (1000 common prefixes under `objects/`). The listings are also checked
 * complete against a model of what existed at each time, and sampled GETs byte for byte.
 */
import { BUCKET, bodyOf, drain, filesystemOf, objectKey, once, openBenchStore, removeDir, tempDir, KEY_ROOT } from './engine-fixture.js';
import type { Store } from '../src/store/store.js';
import { table } from './lib/markdown.js';
import { fmt, median, percentile } from './lib/stats.js';

const BODY_BYTES = 64;
const BATCH = 1000;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Reads per measurement (GETs), and LIST pages per measurement. */
const GETS = 2000;
const PAGES = 30;
const DELIMITER_PAGES = 10;

interface Timings {
  getUs: number[];
  listMs: number[];
  delimMs: number[];
}

/** Deterministic xorshift32. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/** What a key holds at a time in the model: the writer's index of its body, or absent. */
type Model = Map<number, number>;

/** Forks BUCKET as of `at` into `name` (Store.forkBucket: fork.ts, fork-at-time.ts). */
async function forkAt(store: Store, name: string, at: number): Promise<void> {
  await store.forkBucket(BUCKET, name, { at });
}

async function listCount(store: Store, at: number | undefined, bucket = BUCKET): Promise<{ keys: number; pages: number }> {
  let keys = 0;
  let pages = 0;
  let token: string | undefined;
  do {
    const opts = { maxKeys: 1000, ...(token ? { continuationToken: token } : {}) };
    const page = at === undefined ? await store.listObjects(bucket, opts) : await store.listObjectsAsOf(bucket, { ...opts, at });
    keys += page.contents.length;
    pages++;
    token = page.nextContinuationToken;
  } while (token);
  return { keys, pages };
}

async function time(store: Store, at: number | undefined, keys: number[], starts: string[]): Promise<Timings> {
  const out: Timings = { getUs: [], listMs: [], delimMs: [] };
  for (const i of keys) {
    const t = performance.now();
    try {
      await drain((await store.getObject(BUCKET, objectKey(i), at === undefined ? {} : { asOf: at })).body);
    } catch (err) {
      if ((err as { code?: string }).code !== 'NoSuchKey') throw err;
    }
    out.getUs.push((performance.now() - t) * 1000);
  }
  for (const startAfter of starts) {
    const opts = { maxKeys: 1000, startAfter };
    const t = performance.now();
    if (at === undefined) await store.listObjects(BUCKET, opts);
    else await store.listObjectsAsOf(BUCKET, { ...opts, at });
    out.listMs.push(performance.now() - t);
  }
  for (let p = 0; p < DELIMITER_PAGES; p++) {
    const opts = { maxKeys: 1000, prefix: KEY_ROOT, delimiter: '/' };
    const t = performance.now();
    if (at === undefined) await store.listObjects(BUCKET, opts);
    else await store.listObjectsAsOf(BUCKET, { ...opts, at });
    out.delimMs.push(performance.now() - t);
  }
  return out;
}

/** Runs the as-of measurements and returns the markdown of this section. */
export async function benchAsOf(opts: { quick: boolean; log: (m: string) => void }): Promise<string> {
  const objects = opts.quick ? 5_000 : 100_000;
  const writesPerDay = objects;
  const dir = await tempDir('asof');
  const clock = { t: Date.UTC(2026, 0, 1) };
  const { store } = await openBenchStore(dir, { now: () => clock.t });
  const fs = filesystemOf(dir);
  try {
    await store.createBucket(BUCKET);
    const model: Model = new Map();
    opts.log(`as-of: building ${fmt(objects)} objects at day 0`);
    const t0 = performance.now();
    for (let start = 0; start < objects; start += BATCH) {
      const puts: Promise<unknown>[] = [];
      for (let i = start; i < Math.min(objects, start + BATCH); i++) {
        puts.push(store.putObject(BUCKET, objectKey(i), once(bodyOf(i, BODY_BYTES)), { size: BODY_BYTES }));
        model.set(i, i);
      }
      await Promise.all(puts);
    }
    const buildS = (performance.now() - t0) / 1000;
    clock.t = Math.max(clock.t, store.repo.lastCommitTime) + 1000;
    const dayBack = clock.t; // = now - 1 day once the day of writes is over
    const atDay = new Map(model);
    let atHour: Model | undefined;
    opts.log(`as-of: a simulated day of ${fmt(writesPerDay)} writes`);
    const next = rng(0x9e3779b9);
    const step = DAY_MS / writesPerDay; // simulated ms between writes
    let w = 0;
    let created = objects;
    const t1 = performance.now();
    // The writes of the first 23 hours, then the state 1 hour back, then the last hour's.
    const beforeHour = Math.round((writesPerDay * (DAY_MS - HOUR_MS)) / DAY_MS);
    while (w < writesPerDay) {
      const group = Math.min(BATCH, (w < beforeHour ? beforeHour : writesPerDay) - w);
      // Keys are distinct within a group: the group's writes commit together, in any order.
      const seen = new Set<number>();
      const ops: Promise<unknown>[] = [];
      clock.t += Math.round(group * step);
      for (let k = 0; k < group; k++) {
        const roll = next();
        const i = roll < 0.02 ? created++ : Math.floor(next() * created);
        if (seen.has(i)) continue;
        seen.add(i);
        const id = objects + w + k;
        if (roll > 0.97 && model.has(i)) {
          ops.push(store.deleteObject(BUCKET, objectKey(i)));
          model.delete(i);
        } else {
          ops.push(store.putObject(BUCKET, objectKey(i), once(bodyOf(id, BODY_BYTES)), { size: BODY_BYTES }));
          model.set(i, id);
        }
      }
      await Promise.all(ops);
      w += group;
      if (!atHour && w === beforeHour) {
        clock.t = Math.max(clock.t, store.repo.lastCommitTime) + 1;
        atHour = new Map(model);
        atHour.set(-1, clock.t); // remembered time of the snapshot
        clock.t += 1;
      }
    }
    const writeS = (performance.now() - t1) / 1000;
    clock.t = Math.max(clock.t, store.repo.lastCommitTime, dayBack + DAY_MS);
    const hourBack = atHour!.get(-1)!;
    atHour!.delete(-1);
    opts.log('as-of: checkpoint, then warm reads');
    await store.checkpoint();
    const pick = rng(12345);
    const getKeys = Array.from({ length: GETS }, () => Math.floor(pick() * created));
    const starts = Array.from({ length: PAGES }, () => objectKey(Math.floor(pick() * objects)));
    const points: [string, number | undefined, Model][] = [
      ['now', undefined, model],
      ['as of 1 hour back', hourBack, atHour!],
      ['as of 1 day back', dayBack, atDay],
    ];
    // Completeness first (also warms the caches), then timings.
    const checks: string[] = [];
    for (const [name, at, m] of points) {
      const { keys, pages } = await listCount(store, at);
      let bad = 0;
      for (const i of getKeys.slice(0, 500)) {
        const want = m.get(i);
        try {
          const chunks: Uint8Array[] = [];
          for await (const c of (await store.getObject(BUCKET, objectKey(i), at === undefined ? {} : { asOf: at })).body) chunks.push(c);
          if (want === undefined || !Buffer.concat(chunks).equals(bodyOf(want, BODY_BYTES))) bad++;
        } catch (err) {
          if ((err as { code?: string }).code !== 'NoSuchKey' || want !== undefined) bad++;
        }
      }
      checks.push(`${name}: listed ${fmt(keys)} of ${fmt(m.size)} in ${fmt(pages)} pages, ${500 - bad} of 500 GETs right${keys === m.size && bad === 0 ? '' : ' — MISMATCH'}`);
    }
    // One unmeasured pass of every kind of read (JIT, caches), then the measured ones.
    for (const [, at] of points) await time(store, at, getKeys, starts);
    const rows: string[][] = [];
    const base = await time(store, undefined, getKeys, starts);
    for (const [name, at] of points) {
      const r = at === undefined ? base : await time(store, at, getKeys, starts);
      rows.push([
        name,
        `${fmt(median(r.getUs), 0)} µs (p99 ${fmt(percentile(r.getUs, 99), 0)})`,
        `${fmt(median(r.getUs) / median(base.getUs), 2)}x`,
        `${fmt(median(r.listMs), 1)} ms`,
        `${fmt(median(r.listMs) / median(base.listMs), 2)}x`,
        `${fmt(median(r.delimMs), 1)} ms`,
        `${fmt(median(r.delimMs) / median(base.delimMs), 2)}x`,
      ]);
    }
    // A fork as of each past time: its cost is that of writing the metadata then (O(versions)).
    const forks: string[][] = [];
    for (const [name, at, m] of points.slice(1)) {
      const target = `fork-${forks.length}`;
      const t = performance.now();
      await forkAt(store, target, at!);
      const forkMs = performance.now() - t;
      const { keys } = await listCount(store, undefined, target);
      forks.push([name, `${fmt(forkMs / 1000, 2)} s`, `${fmt(keys)} of ${fmt(m.size)}${keys === m.size ? '' : ' — MISMATCH'}`]);
    }
    return [
      '### Reads as of a past time',
      '',
      `fs provider on ${fs}; default options. A bucket of ${fmt(objects)} objects (${BODY_BYTES} B bodies, ${BATCH} concurrent ` +
        `puts, built in ${fmt(buildS, 1)} s) then a simulated day of ${fmt(writesPerDay)} writes to random keys (2% new keys, ` +
        `3% deletes, the rest overwrites; ${fmt(writeS, 1)} s of real time) on the store's injected clock, so "1 day back" ` +
        'has about one later write per key and "1 hour back" about 1/24 of that. Checkpointed (everything in runs), warm ' +
        `block cache; ${fmt(GETS)} GETs of random keys, ${PAGES} ListObjectsV2 pages of 1000 from random start keys, ` +
        `${DELIMITER_PAGES} delimiter pages (1000 common prefixes under ${KEY_ROOT}). Medians; "x" is against the current read ` +
        'in the same run.',
      '',
      table(['Read', 'GET (median)', 'vs now', 'LIST page of 1000', 'vs now', 'Delimiter LIST page', 'vs now'], rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r']),
      '',
      `Complete and right: ${checks.join('; ')}.`,
      '',
      'A fork as of a past time writes the fork\'s own index and version log runs (metadata only, bodies shared): O(versions up to that time), unlike a fork as of now (O(1), above).',
      '',
      table(['Fork of the bucket', 'Time (prepare + commit)', 'Fork lists'], forks, ['l', 'r', 'l']),
    ].join('\n');
  } finally {
    await store.close();
    await removeDir(dir);
  }
}
