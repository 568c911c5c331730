/**
 * @module TLS material for HTTPS on the server's port: the certificate chain and private key
 * (PEM files, `--tls-cert` / `--tls-key`), read and checked as a pair before anything else
 * happens, and re-read on SIGHUP (serve.ts) so a renewed certificate is served without a
 * restart. A reload that fails keeps the material already in use.
 */
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { OptionError } from './option-types.js';

/** Largest PEM file read, bytes: a long chain is a few KiB; this bounds a wrong path. */
export const MAX_PEM_BYTES = 1024 * 1024;

export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  /** SHA-256 fingerprint of the leaf certificate (safe to log). */
  fingerprint: string;
  subject: string;
  /** End of validity of the leaf certificate (as the certificate states it). */
  validTo: string;
}

function readPem(path: string, what: string): Buffer {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new OptionError(`${what}: cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new OptionError(`${what}: ${path} is not a regular file`);
    if (st.size > MAX_PEM_BYTES)
      throw new OptionError(`${what}: ${path} is larger than ${MAX_PEM_BYTES} bytes`);
    const buf = Buffer.alloc(st.size);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads the certificate chain and key and checks that they are PEM, that the key matches
 * the leaf certificate, and that the leaf certificate parses. Reads only the two files.
 * Throws OptionError naming the flag and the problem.
 */
export function loadTls(certFile: string, keyFile: string): TlsMaterial {
  const cert = readPem(certFile, '--tls-cert');
  const key = readPem(keyFile, '--tls-key');
  if (!cert.includes('-----BEGIN CERTIFICATE-----'))
    throw new OptionError(`--tls-cert: ${certFile} holds no PEM certificate`);
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key.toString('latin1')))
    throw new OptionError(`--tls-key: ${keyFile} holds no PEM private key`);
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (err) {
    throw new OptionError(`--tls-cert: ${certFile}: ${(err as Error).message}`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    const msg = (err as Error).message;
    throw new OptionError(
      /mismatch/i.test(msg)
        ? `--tls-key: ${keyFile} does not match the certificate in ${certFile}`
        : `--tls-cert/--tls-key: ${msg}`
    );
  }
  return {
    cert,
    key,
    fingerprint: leaf.fingerprint256,
    subject: leaf.subject.replace(/\n/g, ', '),
    validTo: leaf.validTo,
  };
}
