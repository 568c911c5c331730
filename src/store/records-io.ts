/**
 * @module Reading and writing record blobs (commits, roots) with every check applied:
 * pack framing and CRC, then the SHA-256 the referrer expects.
 */
import { getBytes, type Provider } from '../provider/provider.js';
import { readEntry } from '../pack/reader.js';
import { ENTRY_HEADER_SIZE, PACK_HEADER_SIZE, PackStream } from '../pack/stream-writer.js';
import { hashRecord, type RecordRef } from './commit.js';
import { blobError } from './body-reader.js';
import { StoreError } from './errors.js';

/**
 * The record `ref` names, after checking its framing, CRC and hash. Throws StoreError
 * 'MissingBlob' (gone), 'Corrupt' (bad bytes) or 'BrokenChain' (right framing, wrong
 * record: the hash differs), each naming the blob.
 */
export async function readRecord(provider: Provider, ref: RecordRef, what: string): Promise<Uint8Array> {
  let body: Uint8Array;
  try {
    const bytes = await getBytes(provider, ref.key, { start: ref.offset, end: ref.offset + ENTRY_HEADER_SIZE + ref.length - 1 });
    body = readEntry(bytes, { length: ref.length });
  } catch (err) {
    const mapped = blobError(err, ref.key);
    if (mapped instanceof StoreError) throw new StoreError(mapped.code, `${what}: ${mapped.message}`, { cause: err });
    throw mapped;
  }
  if (hashRecord(body) !== ref.hash) {
    throw new StoreError('BrokenChain', `${what} ${ref.key}: record hash ${hashRecord(body).slice(0, 16)}… differs from the expected ${ref.hash.slice(0, 16)}…`);
  }
  return body;
}

/** The reference to `record` once written after `bodies` as one pack blob under `key` (a pack
 * image starting at `base` of it: a commit log frame's payload). */
export function recordRef(key: string, record: Uint8Array, bodies: readonly Uint8Array[] = [], base = 0): RecordRef {
  let offset = base + PACK_HEADER_SIZE;
  for (const b of bodies) offset += ENTRY_HEADER_SIZE + b.length;
  return { key, offset, length: record.length, hash: hashRecord(record) };
}

/**
 * Writes `bodies` followed by `record` as one pack blob under `key` (create-only) and
 * returns the reference to the record. Resolves only once the provider made it durable.
 */
export async function writeRecordBlob(
  provider: Provider,
  key: string,
  record: Uint8Array,
  bodies: readonly Uint8Array[] = [],
  packId?: Uint8Array
): Promise<RecordRef> {
  const pack = new PackStream([...bodies.map((b) => b.length), record.length], packId ? { id: packId } : {});
  const chunks: Uint8Array[] = [pack.header()];
  for (const b of bodies) chunks.push(...pack.entry(b));
  chunks.push(...pack.entry(record));
  chunks.push(...pack.finish());
  await provider.put(key, chunks, { ifNoneMatch: '*', contentLength: pack.size });
  const row = pack.rows[pack.rows.length - 1]!;
  return { key, offset: row.offset, length: record.length, hash: hashRecord(record) };
}
