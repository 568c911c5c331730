/**
 * @module GetObjectTorrent (`GET /bucket/key?torrent`): a BitTorrent metainfo file for the
 * object (BEP 3), computed by streaming the object once through SHA-1 per piece.
 *
 * The torrent is trackerless: it names no `announce` URL (Strata runs no tracker) and lists
 * the object's own URL as an HTTP web seed (`url-list`, BEP 19), so a client that can read
 * the object over HTTP can seed from it. As S3 does, objects encrypted with a customer key
 * (SSE-C) and objects over 5 GiB get no torrent.
 */
import { createHash } from 'node:crypto';
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { S3Error } from '../errors.js';
import { readKeys } from '../sse.js';
import { writeHead } from '../respond.js';

type Op<T extends Endpoint['op']> = Extract<Endpoint, { op: T }>;

/** Piece length: 256 KiB, the size S3 used for its torrents (a 5 GiB object: 20,480 pieces). */
export const TORRENT_PIECE_BYTES = 256 * 1024;
/** Largest object S3 makes a torrent of: 5 GiB. */
export const MAX_TORRENT_OBJECT_BYTES = 5 * 1024 ** 3;

/** A bencodable value (BEP 3): byte strings, integers, lists, dictionaries (keys sorted). */
export type Bencodable = string | Uint8Array | number | Bencodable[] | { [k: string]: Bencodable };

/** Bencodes `v` (dictionary keys sorted by their UTF-8 bytes). Pure. Throws on non-integers. */
export function bencode(v: Bencodable): Buffer {
  const out: Buffer[] = [];
  const walk = (x: Bencodable): void => {
    if (typeof x === 'number') {
      if (!Number.isSafeInteger(x)) throw new RangeError(`bencode: ${x} is not an integer`);
      out.push(Buffer.from(`i${x}e`));
    } else if (typeof x === 'string' || x instanceof Uint8Array) {
      const b = typeof x === 'string' ? Buffer.from(x, 'utf8') : Buffer.from(x.buffer, x.byteOffset, x.byteLength);
      out.push(Buffer.from(`${b.length}:`), b);
    } else if (Array.isArray(x)) {
      out.push(Buffer.from('l'));
      for (const e of x) walk(e);
      out.push(Buffer.from('e'));
    } else {
      out.push(Buffer.from('d'));
      const keys = Object.keys(x).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      for (const k of keys) {
        walk(k);
        walk(x[k]!);
      }
      out.push(Buffer.from('e'));
    }
  };
  walk(v);
  return Buffer.concat(out);
}

/** SHA-1 of every TORRENT_PIECE_BYTES piece of `body`, concatenated (20 bytes a piece). */
export async function pieceHashes(body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<Buffer> {
  const hashes: Buffer[] = [];
  let h = createHash('sha1');
  let inPiece = 0;
  for await (const chunk of body) {
    for (let off = 0; off < chunk.length; ) {
      const take = Math.min(chunk.length - off, TORRENT_PIECE_BYTES - inPiece);
      h.update(chunk.subarray(off, off + take));
      off += take;
      inPiece += take;
      if (inPiece === TORRENT_PIECE_BYTES) {
        hashes.push(h.digest());
        h = createHash('sha1');
        inPiece = 0;
      }
    }
  }
  if (inPiece > 0) hashes.push(h.digest());
  return Buffer.concat(hashes);
}

export async function handleGetObjectTorrent(r: RequestContext, e: Op<'GetObjectTorrent'>): Promise<void> {
  // The body is read lazily: nothing is fetched if the checks below refuse.
  const g = await r.store.getObject(e.bucket, e.key, { keys: readKeys(r).keys });
  if (g.version.encryption?.mode === 'sse-c') {
    throw new S3Error('InvalidRequest', 'Torrents are not available for objects encrypted with a customer-provided key.');
  }
  if (g.version.size > MAX_TORRENT_OBJECT_BYTES) {
    throw new S3Error('InvalidRequest', `Torrents are available for objects of at most ${MAX_TORRENT_OBJECT_BYTES} bytes.`);
  }
  const name = e.key.slice(e.key.lastIndexOf('/') + 1) || e.key;
  const scheme = (r.incoming.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const path = `/${encodeURIComponent(e.bucket)}/${e.key.split('/').map(encodeURIComponent).join('/')}`;
  const torrent = bencode({
    info: { length: g.version.size, name, 'piece length': TORRENT_PIECE_BYTES, pieces: await pieceHashes(g.body) },
    'url-list': [`${scheme}://${r.headers.host ?? 'localhost'}${path}`],
    'created by': 'Strata',
  });
  writeHead(r, 200, {
    'content-type': 'application/x-bittorrent',
    'content-disposition': `attachment; filename="${encodeURIComponent(name)}.torrent"`,
    'content-length': torrent.length,
  });
  r.res.end(torrent);
  r.bytesOut += torrent.length;
}
