/**
 * @module The full comparison of the model-based history test: everything S3 shows of a
 * bucket against the model — GetBucketVersioning, ListObjectVersions walked in pages of
 * random small sizes (with and without encoding-type=url, from random key/version-id
 * markers, under a prefix, with a delimiter), ListObjectsV2, and GET/HEAD of every key
 * (latest) and of every version and delete marker by id, plus removed ids; the tags of
 * one version in three by id.
 */
import {
  GetBucketVersioningCommand,
  GetObjectCommand,
  HeadObjectCommand,
  type GetBucketVersioningOutput,
  type GetObjectOutput,
  type HeadObjectOutput,
} from '@aws-sdk/client-s3';
import type { Probe, VersionsPage } from './client.js';
import { parseObjectsPage, parseVersionsPage } from './client.js';
import { checkRead, checkTags, expectEq, Mismatch } from './driver.js';
import { compareUtf8, md5Hex, type BucketModel, type ListedEntry } from './model.js';
import { liveAt, type BucketSnapshot } from './timeline.js';

/** A listed item: a version/marker, or a common prefix. */
type Item = ListedEntry | { prefix: string };

const PAGE_SIZES = [1, 2, 3, 5, 8, 1000];
/** A page must not hold more entries than asked, and S3 caps max-keys at 1000. */
const MAX_PAGE = 1000;

function show(items: readonly Item[]): string[] {
  return items.map((i) => ('prefix' in i ? `P ${i.prefix}` : `${i.marker ? 'M' : 'V'} ${i.key} ${i.id}${i.isLatest ? ' latest' : ''}${i.etag ? ` ${i.etag}/${i.size}` : ''}`));
}

/** A page's versions and prefixes in listing order (the XML lists all versions, then the prefixes). */
function pageItems(page: VersionsPage): Item[] {
  const items: Item[] = page.entries.map((e) => {
    const x: ListedEntry = { key: e.key, id: e.id, isLatest: e.isLatest, marker: e.marker };
    if (e.etag !== undefined) {
      x.etag = e.etag;
      x.size = e.size!;
    }
    return x;
  });
  for (const prefix of page.prefixes) items.push({ prefix });
  const keyOf = (i: Item) => ('prefix' in i ? i.prefix : i.key);
  // Stable: a key's versions keep their order.
  return items.map((i, n) => ({ i, n })).sort((a, b) => compareUtf8(keyOf(a.i), keyOf(b.i)) || a.n - b.n).map((x) => x.i);
}

export interface WalkOptions {
  prefix?: string;
  delimiter?: string;
  keyMarker?: string;
  versionIdMarker?: string;
  url?: boolean;
}

/** Lists every page of ListObjectVersions with `maxKeys` per page; the items in order. */
export async function walkVersions(p: Probe, bucket: string, maxKeys: number, o: WalkOptions = {}): Promise<Item[]> {
  const out: Item[] = [];
  let keyMarker = o.keyMarker;
  let versionIdMarker = o.versionIdMarker;
  for (let pages = 0; ; pages++) {
    if (pages > 10_000) throw new Mismatch('ListObjectVersions never ends');
    const q: Record<string, string> = { versions: '', 'max-keys': String(maxKeys) };
    if (o.prefix) q.prefix = o.prefix;
    if (o.delimiter) q.delimiter = o.delimiter;
    if (o.url) q['encoding-type'] = 'url';
    if (keyMarker !== undefined) q['key-marker'] = keyMarker;
    if (versionIdMarker !== undefined) q['version-id-marker'] = versionIdMarker;
    const r = await p.rawGet(bucket, q);
    if (r.status !== 200) throw new Mismatch(`ListObjectVersions ${JSON.stringify(q)}: status ${r.status}: ${r.text.slice(0, 300)}`);
    const page = parseVersionsPage(r.text);
    const items = pageItems(page);
    if (items.length > Math.min(maxKeys, MAX_PAGE)) throw new Mismatch(`a page of max-keys ${maxKeys} held ${items.length} entries`);
    out.push(...items);
    if (!page.isTruncated) return out;
    if (items.length === 0) throw new Mismatch(`an empty truncated page (${JSON.stringify(q)})`);
    if (page.nextKeyMarker === undefined) throw new Mismatch('a truncated page without NextKeyMarker');
    keyMarker = page.nextKeyMarker;
    versionIdMarker = page.nextVersionIdMarker;
  }
}

/** The model's listing from a key marker (and version id marker), as S3 pages it. */
function afterMarker(all: readonly ListedEntry[], keyMarker: string, versionIdMarker?: string): ListedEntry[] {
  if (versionIdMarker === undefined) return all.filter((e) => compareUtf8(e.key, keyMarker) > 0);
  const at = all.findIndex((e) => e.key === keyMarker && e.id === versionIdMarker);
  if (at < 0) throw new Error('the test picked a marker the model does not have');
  return all.slice(at + 1);
}

async function compareListing(what: string, actual: Promise<Item[]>, expected: readonly Item[]): Promise<void> {
  const a = show(await actual);
  const e = show(expected);
  if (JSON.stringify(a) !== JSON.stringify(e)) {
    throw new Mismatch(`${what}:\n  got      ${JSON.stringify(a)}\n  expected ${JSON.stringify(e)}`);
  }
}

/** Checks ListObjectVersions every way the test walks it; `next` picks sizes and markers. */
export async function checkVersionListings(p: Probe, m: BucketModel, next: () => number): Promise<void> {
  const all = m.listVersions();
  const size = () => PAGE_SIZES[next() % PAGE_SIZES.length]!;
  const n1 = size();
  await compareListing(`ListObjectVersions max-keys ${n1}`, walkVersions(p, m.name, n1), all);
  const n2 = size();
  await compareListing(`ListObjectVersions max-keys ${n2} encoding-type=url`, walkVersions(p, m.name, n2, { url: true }), all);
  if (all.length > 0) {
    const e = all[next() % all.length]!;
    const n3 = size();
    await compareListing(
      `ListObjectVersions from key-marker ${JSON.stringify(e.key)} version-id-marker ${e.id} max-keys ${n3}`,
      walkVersions(p, m.name, n3, { keyMarker: e.key, versionIdMarker: e.id }),
      afterMarker(all, e.key, e.id)
    );
    const n4 = size();
    await compareListing(`ListObjectVersions from key-marker ${JSON.stringify(e.key)} max-keys ${n4}`, walkVersions(p, m.name, n4, { keyMarker: e.key }), afterMarker(all, e.key));
  }
  for (const [prefix, delimiter] of [['a/', undefined], ['', '/'], ['a/', '/'], ['d/', '/']] as const) {
    const n = size();
    const expected = delimiter ? m.listVersionsDelimited(prefix, delimiter) : m.listVersions(prefix);
    const o: WalkOptions = { prefix, url: next() % 2 === 0 };
    if (delimiter) o.delimiter = delimiter;
    await compareListing(`ListObjectVersions prefix ${JSON.stringify(prefix)} delimiter ${JSON.stringify(delimiter)} max-keys ${n}`, walkVersions(p, m.name, n, o), expected);
  }
}

/** ListObjectsV2 in pages of `maxKeys`: the current objects. */
export async function checkObjectListing(p: Probe, m: BucketModel, maxKeys: number): Promise<void> {
  const got: string[] = [];
  let token: string | undefined;
  for (;;) {
    const q: Record<string, string> = { 'list-type': '2', 'max-keys': String(maxKeys), 'encoding-type': 'url' };
    if (token !== undefined) q['continuation-token'] = token;
    const r = await p.rawGet(m.name, q);
    if (r.status !== 200) throw new Mismatch(`ListObjectsV2: status ${r.status}: ${r.text.slice(0, 300)}`);
    const page = parseObjectsPage(r.text);
    got.push(...page.keys.map((k) => `${k.key} ${k.etag}/${k.size}`));
    if (!page.isTruncated) break;
    if (page.next === undefined) throw new Mismatch('ListObjectsV2: truncated without NextContinuationToken');
    token = page.next;
  }
  expectEq(`ListObjectsV2 max-keys ${maxKeys}`, got, m.current().map((c) => `${c.key} ${c.version.etag}/${c.version.content!.size}`));
}

/**
 * Everything: versioning status, listings, and a GET (or HEAD, one in three) of every key in
 * `keys` and of every version, marker and removed id. Throws Mismatch.
 */
export async function checkAll(p: Probe, m: BucketModel, keys: readonly string[], next: () => number): Promise<void> {
  const v = await p.call<GetBucketVersioningOutput>(new GetBucketVersioningCommand({ Bucket: m.name }));
  expectEq('GetBucketVersioning', v.out?.Status ?? 'Unversioned', m.versioning);
  await checkVersionListings(p, m, next);
  await checkObjectListing(p, m, PAGE_SIZES[next() % PAGE_SIZES.length]!);
  for (const key of keys) {
    await checkRead(p, m, key, undefined, false);
    await checkRead(p, m, key, undefined, true);
    for (const ver of m.versionsOf(key)) {
      // One GET in four of a version of 2 B or more reads a random range of it.
      const size = ver.content?.size ?? 0;
      const first = size > 1 ? next() % size : 0;
      const range: [number, number] | undefined = size > 1 && next() % 4 === 0 ? [first, first + (next() % (size - first))] : undefined;
      await checkRead(p, m, key, ver.id, !range && next() % 3 === 0, range);
      if (!ver.marker && next() % 3 === 0) await checkTags(p, m, key, ver.id);
    }
  }
  for (const r of m.removed) {
    const [key, id] = r.split('\0') as [string, string];
    if (!m.find(key, id)) await checkRead(p, m, key, id, false);
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

/** ListObjectsV2 of `bucket` as of `time`, every page (max-keys `maxKeys`): "key etag/size". */
async function listAsOf(p: Probe, bucket: string, time: number, maxKeys: number): Promise<string[]> {
  const got: string[] = [];
  let token: string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const q: Record<string, string> = { 'list-type': '2', 'max-keys': String(maxKeys), 'encoding-type': 'url', 'x-strata-as-of': iso(time) };
    if (token !== undefined) q['continuation-token'] = token;
    const r = await p.rawGet(bucket, q);
    if (r.status !== 200) throw new Mismatch(`ListObjectsV2 as of ${iso(time)}: status ${r.status}: ${r.text.slice(0, 300)}`);
    const page = parseObjectsPage(r.text);
    got.push(...page.keys.map((k) => `${k.key} ${k.etag}/${k.size}`));
    if (!page.isTruncated) return got;
    token = page.next;
  }
  throw new Mismatch('ListObjectsV2 as of a time never ends');
}

/**
 * Reads `bucket` as of `time` against `then` (the model's snapshot of that moment): the
 * listing, and a GET or HEAD of every key in `keys` (header or query form at random).
 * Throws Mismatch.
 */
export async function checkAsOf(p: Probe, bucket: string, then: BucketSnapshot, time: number, keys: readonly string[], next: () => number): Promise<void> {
  const expected = [...then.keys.keys()]
    .sort(compareUtf8)
    .flatMap((k) => {
      const v = liveAt(then, k);
      return v ? [`${k} ${v.etag}/${v.content!.size}`] : [];
    });
  expectEq(`${bucket}: ListObjectsV2 as of ${iso(time)}`, await listAsOf(p, bucket, time, PAGE_SIZES[next() % PAGE_SIZES.length]!), expected);
  for (const key of keys) {
    const head = next() % 3 === 0;
    const form = next() % 2 === 0 ? 'header' : 'query';
    const input = { Bucket: bucket, Key: key };
    const a = head
      ? await p.callAsOf<HeadObjectOutput>(new HeadObjectCommand(input), iso(time), form)
      : await p.callAsOf<GetObjectOutput>(new GetObjectCommand(input), iso(time), form);
    const v = liveAt(then, key);
    const where = `${bucket}: ${head ? 'HEAD' : 'GET'} ${JSON.stringify(key)} as of ${iso(time)} (${form})`;
    if (!v) {
      expectEq(`${where}: status`, a.status, 404);
      continue;
    }
    expectEq(`${where}: status`, a.status, 200);
    const out = a.out!;
    expectEq(`${where}: ETag`, out.ETag?.replace(/"/g, ''), v.etag);
    expectEq(`${where}: metadata`, out.Metadata?.model, v.meta);
    // A read as of a time names the version it served.
    expectEq(`${where}: VersionId`, out.VersionId, v.id);
    if (head) continue;
    const bytes = await ((out as GetObjectOutput).Body as unknown as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
    expectEq(`${where}: body MD5`, md5Hex(bytes), v.content!.md5);
  }
}
