/**
 * @module `<data>/strata-server.json`: where the server holding a local repository's lock
 * listens, so `strata keys` (and later admin verbs) can reach its admin API instead of
 * opening the locked repository. Written when the server listens, removed when it stops;
 * a file left by a crash is harmless (the directory lock, not this file, says whether a
 * server runs; a stale URL simply does not answer).
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const ENDPOINT_FILE = 'strata-server.json';

export interface EndpointRecord {
  /** A URL a local client can connect to (wildcard listen addresses become loopback). */
  url: string;
  pid: number;
}

/** The URL to reach a server listening on `host:port` (HTTPS when `tls`) from this machine. */
export function localUrl(host: string, port: number, tls = false): string {
  const h = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `${tls ? 'https' : 'http'}://${h.includes(':') ? `[${h}]` : h}:${port}`;
}

/** Writes the record for this process (mode 0600, replaced atomically). Throws on I/O errors. */
export function writeEndpointFile(dataDir: string, url: string): void {
  const file = join(dataDir, ENDPOINT_FILE);
  const temp = `${file}.${process.pid}.new`;
  writeFileSync(temp, `${JSON.stringify({ url, pid: process.pid } satisfies EndpointRecord)}\n`, { mode: 0o600 });
  renameSync(temp, file);
}

/** The record, or undefined when there is none or it is unreadable. */
export function readEndpointFile(dataDir: string): EndpointRecord | undefined {
  try {
    const v = JSON.parse(readFileSync(join(dataDir, ENDPOINT_FILE), 'utf8')) as EndpointRecord;
    return typeof v?.url === 'string' && /^https?:\/\//.test(v.url) && Number.isInteger(v.pid) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the record if this process wrote it. Never throws. */
export function removeEndpointFile(dataDir: string): void {
  if (readEndpointFile(dataDir)?.pid !== process.pid) return;
  rmSync(join(dataDir, ENDPOINT_FILE), { force: true });
}
