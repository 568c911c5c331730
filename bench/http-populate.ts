/**
 * @module Fills a data directory with N empty objects through the Store API (much faster
 * than HTTP), for listing benchmarks. Run: node http-populate.js <dir> <bucket> <n>.
 * Keys: `p<3-digit group>/obj-<9-digit i>` (1000 groups), see `benchKey`.
 */
import { openStore } from '../src/store/open.js';

export const GROUPS = 1000;
export function benchKey(i: number): string {
  return `p${String(i % GROUPS).padStart(3, '0')}/obj-${String(i).padStart(9, '0')}`;
}

async function main(): Promise<void> {
  const [dir, bucket, nArg] = process.argv.slice(2);
  const n = Number(nArg);
  const store = await openStore(dir!);
  await store.createBucket(bucket!).catch(() => undefined);
  const WINDOW = 2000;
  const empty = async function* () {};
  const started = Date.now();
  for (let base = 0; base < n; base += WINDOW) {
    const jobs: Promise<unknown>[] = [];
    for (let i = base; i < Math.min(n, base + WINDOW); i++) jobs.push(store.putObject(bucket!, benchKey(i), empty(), { size: 0 }));
    await Promise.all(jobs);
    if (base % 100_000 === 0) process.stderr.write(`populate: ${base}/${n} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  }
  await store.checkpoint();
  await store.close();
  process.stdout.write(`${JSON.stringify({ n, seconds: (Date.now() - started) / 1000 })}\n`);
}

if (process.argv[1]?.endsWith('http-populate.js')) await main();
