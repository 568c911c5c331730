/**
 * @module A byte-bounded LRU of verified small bodies (packed entries), keyed by where they
 * live. Pack entries never change once written, so a cached body can never be stale; bodies
 * enter when read (after their CRC32C was checked) — not when written, so a bulk writer pays
 * nothing for it. Hot small objects are then served without touching the provider.
 */

/** Largest body worth caching: the pack threshold, so whole packed bodies only. */
export const MAX_CACHED_BODY = 512 * 1024;
/** What an entry costs besides its bytes (key string, Map slot, array objects), charged so
 * that many tiny bodies cannot hold far more memory than the budget says. */
const ENTRY_OVERHEAD_BYTES = 160;

export class BodyCache {
  readonly maxBytes: number;
  readonly #map = new Map<string, Uint8Array>();
  #bytes = 0;
  hits = 0;
  misses = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  static key(blob: string, offset: number): string {
    return `${blob}@${offset}`;
  }

  get(key: string): Uint8Array | undefined {
    const v = this.#map.get(key);
    if (v === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.#map.delete(key);
    this.#map.set(key, v);
    return v;
  }

  /** Stores `body` (the caller must not modify it afterwards). Oversized bodies are ignored. */
  set(key: string, body: Uint8Array): void {
    if (this.maxBytes <= 0 || body.length > MAX_CACHED_BODY || body.length > this.maxBytes) return;
    // A small view into a large buffer (a socket read) would pin all of it: keep a copy.
    if (body.buffer.byteLength > 2 * body.length) body = body.slice();
    const old = this.#map.get(key);
    if (old) {
      this.#bytes -= old.length + ENTRY_OVERHEAD_BYTES;
      this.#map.delete(key);
    }
    this.#map.set(key, body);
    this.#bytes += body.length + ENTRY_OVERHEAD_BYTES;
    while (this.#bytes > this.maxBytes) {
      const [k, v] = this.#map.entries().next().value as [string, Uint8Array];
      this.#map.delete(k);
      this.#bytes -= v.length + ENTRY_OVERHEAD_BYTES;
    }
  }

  get bytes(): number {
    return this.#bytes;
  }
}
