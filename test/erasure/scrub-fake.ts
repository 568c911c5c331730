/**
 * A stand-in for the erasure provider's maintenance surface, for testing the scrub's own logic
 * (ordering, cursor, resume, rate, error accounting) apart from the fragment format: blobs live
 * in a real memory provider, and each key has k+m fragment states the test sets. The real
 * provider's behaviour is tested in test/erasure/scrub-real*.test.ts.
 */
import { MemoryProvider } from '../../src/provider/memory/index.js';
import { ProviderError, type Provider } from '../../src/provider/provider.js';
import type { BlobCheck, Domain, DomainHealth, ErasureProvider, ErasureStats, FragmentState } from '../../src/provider/erasure/types.js';

export class FakeErasure implements ErasureProvider {
  readonly kind = 'erasure' as const;
  readonly capabilities = { conditionalWrites: true, sortedList: true };
  readonly blobs = new MemoryProvider();
  put: Provider['put'] = (k, b, o) => this.blobs.put(k, b, o);
  get: Provider['get'] = (k, o) => this.blobs.get(k, o);
  head: Provider['head'] = (k) => this.blobs.head(k);
  /** list() calls so far (the scrub's count listing and its walk: this fake has no census). */
  listCalls = 0;
  list: Provider['list'] = (o) => {
    this.listCalls++;
    return this.blobs.list(o);
  };
  delete: Provider['delete'] = (k) => this.blobs.delete(k);
  close: Provider['close'] = () => this.blobs.close();
  readonly k = 4;
  readonly m = 2;
  readonly domains: Domain[];
  readonly stats: ErasureStats = { fragmentsVerified: 0, fragmentsDamaged: 0, fragmentsRepaired: 0, repairBytes: 0, degradedReads: 0, degradedBlobs: 0 };
  readonly damage = new Map<string, FragmentState[]>();
  readonly checked: string[] = [];
  readonly queue: string[] = [];
  /** Per-check delay, ms (a function of the key so completions come out of order). */
  delay: (key: string) => number = () => 0;
  /** Throw this for a key instead of checking it. */
  failures = new Map<string, Error>();

  constructor() {
    this.domains = Array.from({ length: 6 }, (_, i) => ({ id: `d${i + 1}`, labels: {}, provider: new MemoryProvider() }));
  }

  async checkBlob(key: string, options: { repair?: boolean; signal?: AbortSignal } = {}): Promise<BlobCheck> {
    const ms = this.delay(key);
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    if (options.signal?.aborted) throw new ProviderError('Aborted', 'aborted');
    const f = this.failures.get(key);
    if (f) throw f;
    const info = await this.head(key);
    this.checked.push(key);
    const states = this.damage.get(key) ?? new Array<FragmentState>(6).fill('ok');
    const bad = states.filter((s) => s !== 'ok').length;
    const lost = bad > this.m;
    const repaired = options.repair && !lost ? bad : 0;
    this.stats.fragmentsVerified += 6;
    this.stats.fragmentsDamaged += bad;
    this.stats.fragmentsRepaired += repaired;
    if (repaired) this.damage.delete(key);
    return {
      key,
      layout: 'striped',
      size: info.size,
      fragments: states.map((state, index) => ({ index, domain: `d${index + 1}`, state })),
      repaired,
      repairBytes: repaired * Math.ceil(info.size / this.k),
      lost,
    };
  }

  takeRepairQueue(): string[] {
    return this.queue.splice(0);
  }

  async domainHealth(): Promise<DomainHealth[]> {
    return this.domains.map((d) => ({ id: d.id, labels: d.labels, state: 'ok' }));
  }
}

/** A fake with `n` blobs `b/00000`.. of `size` bytes each. */
export async function fakeWith(n: number, size = 100): Promise<FakeErasure> {
  const p = new FakeErasure();
  for (let i = 0; i < n; i++) await p.put(`b/${String(i).padStart(5, '0')}`, new Uint8Array(size));
  return p;
}
