/**
 * @module What GC remembers between passes: when each unreachable blob was first seen
 * unreachable, so that the grace period counts from that moment (not from the blob's age).
 *
 * One blob `gc/<12 hex digits of ms>-<random>`, written create-only under a fresh name at the
 * end of a pass, after which older state blobs are deleted; the newest name is the state. Its
 * text is a header line then one `<first seen, ms> TAB <blob key>` line per candidate.
 *
 * Losing or misreading the state is always safe: a candidate that is not remembered is
 * treated as first seen now, which only delays its deletion by one grace period. A state that
 * does not parse is therefore ignored (and replaced), never trusted in part.
 */
import { getBytes, ProviderError, type Provider } from '../provider/provider.js';
import { newId } from './layout.js';

export const GC_PREFIX = 'gc/';
const HEADER = 'strata-gc-state 1';

export interface GcState {
  /** The state blob read (absent: none). */
  key?: string;
  /** Blob key -> time it was first seen unreachable (ms). */
  seen: Map<string, number>;
  /** Every state blob listed (the newest one included). */
  blobs: string[];
}

/** The name of a state blob written at `now` (names sort by time). */
export function gcStateKey(now: number): string {
  return `${GC_PREFIX}${Math.max(0, Math.floor(now)).toString(16).padStart(12, '0')}-${newId(6)}`;
}

/** Parses a state blob's text; undefined when it is not one (see the module note). */
export function parseGcState(text: string): Map<string, number> | undefined {
  const lines = text.split('\n');
  if (lines[0] !== HEADER) return undefined;
  const seen = new Map<string, number>();
  for (const line of lines.slice(1)) {
    if (line === '') continue;
    const tab = line.indexOf('\t');
    const t = Number(line.slice(0, tab));
    const key = line.slice(tab + 1);
    if (tab <= 0 || !Number.isSafeInteger(t) || t < 0 || key === '') return undefined;
    seen.set(key, t);
  }
  return seen;
}

/** Encodes `seen` as a state blob's text. Keys holding a tab or newline are left out (none of ours do). */
export function encodeGcState(seen: ReadonlyMap<string, number>): Uint8Array {
  const parts = [HEADER];
  for (const [key, t] of seen) if (!/[\t\n]/.test(key)) parts.push(`${t}\t${key}`);
  return new TextEncoder().encode(`${parts.join('\n')}\n`);
}

/**
 * Reads the newest state blob on `provider`. A missing or unreadable state reads as empty.
 * Throws only what listing throws.
 */
export async function readGcState(provider: Provider): Promise<GcState> {
  const blobs: string[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await provider.list({ prefix: GC_PREFIX, ...(startAfter ? { startAfter } : {}) });
    for (const i of page.items) blobs.push(i.key);
    if (!page.next) break;
    startAfter = page.next;
  }
  blobs.sort();
  const key = blobs[blobs.length - 1];
  if (!key) return { seen: new Map(), blobs };
  try {
    const seen = parseGcState(new TextDecoder().decode(await getBytes(provider, key)));
    return seen ? { key, seen, blobs } : { seen: new Map(), blobs };
  } catch (err) {
    if (err instanceof ProviderError && err.code === 'NotFound') return { seen: new Map(), blobs };
    throw err;
  }
}

/** Writes `seen` as a new state blob (create-only) and returns its key. Throws provider errors. */
export async function writeGcState(provider: Provider, seen: ReadonlyMap<string, number>, now: number): Promise<string> {
  const key = gcStateKey(now);
  await provider.put(key, encodeGcState(seen), { ifNoneMatch: '*' });
  return key;
}
