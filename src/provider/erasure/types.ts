/**
 * @module The erasure provider's shared vocabulary: configuration, placement policy, and the
 * maintenance surface (check, repair, health) that scrub, repair and `strata domains` use.
 *
 * The erasure provider (index.ts) stores each blob across N child providers, its failure
 * domains. Blobs of at least `stripeThreshold` bytes are cut into stripes of k data cells and
 * m parity cells (the wasm Reed-Solomon codec), fragment i on a distinct domain chosen by
 * rendezvous hashing of the blob key under the placement policy (placement.ts). Smaller blobs
 * and the anchor are replicated whole to m+1 domains and read as the newest valid copy.
 */
import type { WriteGateStats } from './write-gate.js';
import type { Provider } from '../provider.js';
import type { LookupResult } from './lookup.js';
import type { CensusEntry } from './census.js';

/** One failure domain as configured: where it is and what it is labelled with. */
export interface DomainSpec {
  /** Stable name (default: `d1`, `d2`, … in the configured order). Placement hashes it. */
  id: string;
  /** A directory path or an s3/http(s) provider URL (provider/index.ts). */
  url: string;
  /** Free-form labels the policy spreads across, e.g. `{ host: 'a', zone: 'eu-1' }`. */
  labels: Readonly<Record<string, string>>;
}

/** An opened failure domain. */
export interface Domain {
  id: string;
  labels: Readonly<Record<string, string>>;
  provider: Provider;
}

/** At most `max` fragments of one blob may share a value of `label` (e.g. zone: 1, host: 2). */
export interface SpreadRule {
  label: string;
  max: number;
}

/** Where fragments may go. Distinct domains always; the rest is optional. */
export interface PlacementPolicy {
  spread?: readonly SpreadRule[];
  /** When given, only these domain ids are eligible. */
  allow?: readonly string[];
  /** These domain ids are never eligible. */
  deny?: readonly string[];
}

/** The erasure set-up: the config file's `erasure` section, or `--erasure k+m` plus `--data`. */
export interface ErasureConfig {
  /** Data cells per stripe. */
  k: number;
  /** Parity cells per stripe: up to m fragments (or m domains) may be lost. */
  m: number;
  domains: readonly DomainSpec[];
  policy: PlacementPolicy;
  /** Bytes per cell (one fragment's share of a stripe). */
  cellSize: number;
  /** Blobs at least this long are striped; shorter ones (and the anchor) are replicated. */
  stripeThreshold: number;
  /** Accept a write with fewer than k+m (striped) or m+1 (replicated) healthy domains, as long as
   * at least k (striped) or 1 (replicated) fragments land; repair restores redundancy later. */
  degradedWrites: boolean;
  /** A child call not answered within this many ms counts as a failed domain for that call. */
  domainTimeoutMs: number;
  /** Bytes of stripe buffers the writes of object bodies in flight may hold together; one that
   * does not fit waits for room (write-gate.ts); ERASURE_DEFAULTS.writeMemory when absent. */
  writeMemory?: number;
  /** Share of the write gate's descriptors and bytes the bulk writes of one owner
   * (PutOptions.owner: an access key) may hold at once, 0-1 (s3/key-share.ts); absent or 1: no
   * per-owner cap. Set by the server from --key-share, not by the config file. */
  ownerShare?: number;
}

/** State of one fragment (striped) or replica (replicated) found by a check. */
export type FragmentState = 'ok' | 'missing' | 'corrupt' | 'unreachable';

export interface FragmentCheck {
  /** Fragment index (0..k+m-1) for striped blobs; replica number for replicated ones. */
  index: number;
  /** Domain the fragment was found on (or should be on, when missing). */
  domain: string;
  state: FragmentState;
}

/** What checking (and optionally repairing) one blob found. */
export interface BlobCheck {
  key: string;
  /** Log segments (log-check.ts) report 'replicated': they are replicated blobs. */
  layout: 'striped' | 'replicated' | 'log';
  /** Logical length of the blob. */
  size: number;
  fragments: FragmentCheck[];
  /** Fragments rewritten onto healthy domains by this call (0 without repair). */
  repaired: number;
  /** Bytes written by the repair. */
  repairBytes: number;
  /** More fragments damaged than parity covers: the blob cannot be read (fails closed). */
  lost: boolean;
  /** Indices of fragments (copies) present by name that this check did not verify (a
   * `missingOnly` repair reads only what rebuilding needs); they are not in `fragments`. */
  unchecked?: number[];
}

export interface DomainHealth {
  id: string;
  labels: Readonly<Record<string, string>>;
  state: 'ok' | 'failed';
  /** Why it failed (timeout, I/O error text). */
  error?: string;
  /** Fragments and replicas found on it, and their bytes, when a listing was done. */
  blobs?: number;
  bytes?: number;
}

/** Running counters the server exports as `strata_erasure_*` metrics. */
export interface ErasureStats {
  fragmentsVerified: number;
  fragmentsDamaged: number;
  fragmentsRepaired: number;
  repairBytes: number;
  /** Reads that had to rebuild from parity (heal on read). */
  degradedReads: number;
  /** Blobs known degraded and not yet repaired (the repair queue's length). */
  degradedBlobs: number;
}

export interface CheckBlobOptions {
  repair?: boolean;
  signal?: AbortSignal;
  /** The blob's fragment names as a scrub's census found them (census.ts): the check then
   * needs no lookup of its own (it looks up again if the census proves stale). */
  found?: LookupResult;
  /** With `repair`: rebuild only what is missing by name, reading only what that needs; what
   * is not verified is listed in BlobCheck.unchecked (check.ts CheckOptions). */
  missingOnly?: boolean;
}

/** The provider's maintenance surface, beyond the plain Provider interface. */
export interface ErasureMaintenance {
  readonly k: number;
  readonly m: number;
  readonly domains: readonly Domain[];
  readonly stats: ErasureStats;
  /** Ids of the domains now counted failed (taken out of service for their cooldown). */
  failedDomainIds?(): string[];
  /** The write gate's figures (write-gate.ts); absent in a provider without one. */
  readonly writeGate?: WriteGateStats;
  /** Reads every fragment of `key` and checks its CRCs; with `repair`, rewrites missing or corrupt
   * fragments onto healthy eligible domains. Throws ProviderError 'NotFound' if no fragment
   * exists. Never writes when `lost`. */
  checkBlob(key: string, options?: CheckBlobOptions): Promise<BlobCheck>;
  /** Every blob after `startAfter` in key order with the fragment names each domain lists for
   * it, from one walk over every domain (census.ts): what scrub checks, with no lookup per
   * blob. Optional: scrub lists with list() and checks with lookups without it. */
  census?(options?: { startAfter?: string; skipPrefix?: string; signal?: AbortSignal }): AsyncGenerator<CensusEntry>;
  /** Keys heal-on-read found degraded, removed from the queue (the repair worker drains it). */
  takeRepairQueue(): string[];
  /** Probes every domain (bounded by domainTimeoutMs); with `usage`, lists each to count bytes. */
  domainHealth(options?: { usage?: boolean }): Promise<DomainHealth[]>;
}

export type ErasureProvider = Provider & ErasureMaintenance & { readonly kind: 'erasure' };

/** Is this provider an erasure provider (has the maintenance surface)? */
export function isErasureProvider(p: Provider): p is ErasureProvider {
  return p.kind === 'erasure';
}
