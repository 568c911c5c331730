/**
 * @module Capability detection: what does the backend really guarantee for conditional writes?
 *
 * Many S3-compatible servers accept `If-None-Match` / `If-Match` on PUT and ignore them,
 * and those that enforce them differ in how. The probe writes a scratch key and checks
 * each rule with requests whose outcome is known in advance, then removes the key
 * whatever happened. It establishes:
 * - `If-None-Match: *` refuses an existing key;
 * - the form of If-Match the backend compares: the quoted entity-tag of RFC 9110 (AWS S3,
 *   Strata), or the bare etag (Ceph RGW 16.2, which refuses the quoted form even for the
 *   current etag);
 * - that a wrong etag of the same length is refused;
 * - whether the comparison is a prefix comparison (RGW accepts `<etag>X` for `<etag>`).
 *
 * Why a prefix comparison is still a safe compare-and-swap here: the anchor is always
 * written by one PUT, so its etag is the MD5 of its bytes, 32 hex digits, and the
 * provider sends If-Match only with such etags (it refuses others when the backend
 * compares by prefix). Between two strings of the same length, "one is a prefix of the
 * other" is equality, whichever side the backend takes as the prefix; so exactly the
 * current anchor's etag matches. A backend with prefix comparison and etags of another
 * shape is reported as not enforcing conditional writes.
 */
import { randomBytes } from 'node:crypto';
import { ProviderError, type BlobInfo, type PutOptions } from '../provider.js';

/** Scratch key prefix of the probe (inside the provider's key prefix). */
export const PROBE_KEY_PREFIX = '.strata-probe-';

/** The etag shape of a single PUT on S3 and its compatibles: an MD5, in hex. */
export const FIXED_LENGTH_ETAG = /^[0-9a-f]{32}$/;

export interface IfMatchForm {
  /** Send `If-Match: "<etag>"` (true) or the bare etag (false). */
  quoted: boolean;
  /** The backend accepts a header that merely starts with the current etag. */
  prefixCompare: boolean;
}

export interface ProbeResult {
  conditionalWrites: boolean;
  /** Which check failed, when one did. */
  reason?: string;
  /** How If-Match must be sent, when conditional writes are enforced. */
  ifMatch?: IfMatchForm;
}

/** What the probe needs of the provider: puts, a put with a raw If-Match header, delete. */
export interface ProbeTarget {
  put(key: string, body: Uint8Array, options?: PutOptions): Promise<BlobInfo>;
  /** A PUT carrying exactly `ifMatchHeader` as its If-Match header. */
  putIfMatch(key: string, body: Uint8Array, ifMatchHeader: string): Promise<BlobInfo>;
  delete(key: string): Promise<void>;
}

type Outcome = { ok: true; info: BlobInfo } | { ok: false; refused: boolean; message: string };

async function attempt(put: Promise<BlobInfo>): Promise<Outcome> {
  try {
    return { ok: true, info: await put };
  } catch (err) {
    if (err instanceof ProviderError && (err.code === 'Unavailable' || err.code === 'Aborted'))
      throw err;
    // PreconditionFailed is a refusal; e.g. 400/501 NotImplemented means unsupported.
    const refused = err instanceof ProviderError && err.code === 'PreconditionFailed';
    return { ok: false, refused, message: (err as Error).message };
  }
}

/** `etag` with its last character changed: same length, never equal. */
function wrongEtag(etag: string): string {
  const last = etag.slice(-1);
  return etag.slice(0, -1) + (last === '0' ? '1' : '0');
}

/**
 * Runs the checks of the module doc on a scratch key. Mutates only that key, deleted
 * before returning. Throws ProviderError 'Unavailable' / 'Aborted' if the backend cannot
 * be reached; any other outcome is a result.
 */
export async function probeConditionalWrites(target: ProbeTarget): Promise<ProbeResult> {
  const key = PROBE_KEY_PREFIX + randomBytes(8).toString('hex');
  const body = (n: number) => Buffer.from(`probe ${n} ${key}`);
  const no = (reason: string): ProbeResult => ({ conditionalWrites: false, reason });
  try {
    const first = await attempt(target.put(key, body(1), { ifNoneMatch: '*' }));
    if (!first.ok) {
      if (first.refused) return no('If-None-Match: * refused a new key');
      return no(`If-None-Match: * on a new key failed: ${first.message}`);
    }
    const again = await attempt(target.put(key, body(2), { ifNoneMatch: '*' }));
    if (again.ok || !again.refused) return no('If-None-Match: * did not refuse an existing key');

    let current = first.info.etag;
    let quoted = true;
    let replaced = await attempt(target.putIfMatch(key, body(3), `"${current}"`));
    if (!replaced.ok) {
      quoted = false;
      replaced = await attempt(target.putIfMatch(key, body(3), current));
    }
    if (!replaced.ok)
      return no(`If-Match with the current etag failed, quoted and bare: ${replaced.message}`);
    current = replaced.info.etag;
    const form = (etag: string) => (quoted ? `"${etag}"` : etag);

    const wrong = await attempt(target.putIfMatch(key, body(4), form(wrongEtag(current))));
    if (wrong.ok || !wrong.refused) return no('If-Match did not refuse a wrong etag');

    const longer = await attempt(target.putIfMatch(key, body(5), form(`${current}0`)));
    const prefixCompare = longer.ok;
    if (prefixCompare && !FIXED_LENGTH_ETAG.test(current)) {
      return no(`If-Match compares by prefix and etags are not fixed-length hex (${current})`);
    }
    return { conditionalWrites: true, ifMatch: { quoted, prefixCompare } };
  } finally {
    await target.delete(key).catch(() => {});
  }
}
