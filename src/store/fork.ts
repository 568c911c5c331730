/**
 * @module Bucket forks: a new bucket that starts as an exact copy of another, in O(1).
 *
 * A fork is ONE commit holding a `forkBucket` mutation (applied in state.ts: every keyspace
 * of the source is shared, keyspace.ts) followed by the fork's settings (setConfig), so a
 * crash leaves either no fork or a complete one, and replaying the chain forks the same
 * state again. Nothing is copied: the fork reads the source's frozen overlay and immutable
 * runs until its own writes (and the source's) diverge; both sides write only their own
 * overlay. The source may be deleted afterwards: the fork's index names the same runs and
 * bodies, and no blob the index refers to is ever deleted (only the parts of multipart
 * uploads in progress are; carrier-reaper.ts) — the garbage collector to come must count a
 * run or body as live while ANY bucket's index refers to it.
 *
 * What the fork takes from the source:
 *   - every object (the object namespace as of the fork's commit);
 *   - every bucket setting (CORS, ACL, default encryption, tagging, Block Public Access,
 *     Object Ownership, versioning, Object Lock...) except those in NOT_COPIED: the lifecycle
 *     rules, the owner, who is whoever the caller names (CreateBucket: the creating key), and the bucket
 *     policy, whose statements name the source bucket in their resources;
 *   - not the multipart uploads in progress (the fork starts with none), and not the access
 *     keys' grants (they name the source's bucket id; the fork has its own).
 */
import type { Repository } from './repository.js';
import { StoreError } from './errors.js';
import { checkBucketName } from './validate.js';
import { newId } from './layout.js';
import { OWNER_CONFIG, ownerIn, stageOwner } from './keys.js';
import { prepareForkAt, stageForkAt, type PreparedForkAt } from './fork-at-time.js';
import { ticketed } from './inflight-blobs.js';
import { LIFECYCLE_CONFIG } from './lifecycle-config.js';

/**
 * Bucket settings a fork does not take from its source: the owner (the caller names it) and
 * the bucket policy (its resources are ARNs of the source bucket: copied, it would describe
 * another bucket, and a Deny written for the source would silently not apply to the fork),
 * and the lifecycle configuration: a fork keeps the source's objects as they were, and the
 * source's rules expiring them would defeat that (a fork has rules only when given its own).
 */
export const NOT_COPIED: ReadonlySet<string> = new Set([OWNER_CONFIG, 'policy', LIFECYCLE_CONFIG]);

export interface ForkOptions {
  /** Access key id that owns the fork; absent: owned by nobody (admin keys only). */
  owner?: string;
  /** Fork the source as it was at this time (ms since the epoch) instead of now. */
  at?: number;
  /**
   * Settings set on the fork after the copied ones, in order (null removes): what the
   * request creating the fork asks for itself (e.g. its ACL).
   */
  configs?: ReadonlyArray<readonly [string, Uint8Array | null]>;
}

export interface ForkResult {
  name: string;
  source: string;
  created: number;
  /** Names of the settings copied from the source, sorted. */
  copied: string[];
}

/**
 * Forks bucket `source` into the new bucket `name` (see the module note), as of the commit
 * that creates it — after every write acknowledged before this call and before any write
 * that starts after it resolves. Runs alone in its commit (Repository.run `alone`).
 *
 * Throws StoreError 'InvalidBucketName' (for `name`), 'InvalidRequest' when `name` is
 * `source`, 'NoSuchBucket' when `source` does not exist, 'BucketAlreadyOwnedByYou' /
 * 'BucketAlreadyExists' when `name` does (owned by `opts.owner` or nobody is given / else),
 * 'InvalidArgument' for an `opts.at` outside the source's history window, and the commit's
 * errors.
 *
 * With `opts.at`, the fork is the source as it was then (fork-at-time.ts): its runs are
 * written first — O(versions up to that time), not O(1) — then the same commit creates it.
 */
export async function forkBucket(repo: Repository, source: string, name: string, opts: ForkOptions = {}): Promise<ForkResult> {
  checkBucketName(name);
  if (name === source) throw new StoreError('InvalidRequest', `A bucket cannot be forked into itself (${name})`, { detail: { BucketName: name } });
  // A past state is written before the commit (unless the name is taken: the commit says so),
  // its runs kept from GC until that commit is applied (inflight-blobs.ts).
  const ticket = repo.inflight.open();
  let failure: unknown;
  try {
    return await forkIn(repo, source, name, opts, opts.at !== undefined && !repo.state.buckets.has(name) ? await prepareForkAt(repo, source, opts.at, ticketed(repo.provider, ticket)) : undefined);
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    repo.closeTicket(ticket, failure);
  }
}

async function forkIn(repo: Repository, source: string, name: string, opts: ForkOptions, prepared: PreparedForkAt | undefined): Promise<ForkResult> {
  return repo.run(
    async (tx) => {
      const src = tx.bucket(source);
      if (!src?.state) throw new StoreError('NoSuchBucket', 'The specified bucket does not exist', { detail: { BucketName: source } });
      if (tx.bucket(name)) {
        if (opts.owner !== undefined && ownerIn(tx, name) !== opts.owner) {
          throw new StoreError(
            'BucketAlreadyExists',
            'The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.',
            { detail: { BucketName: name } }
          );
        }
        throw new StoreError('BucketAlreadyOwnedByYou', 'Your previous request to create the named bucket succeeded and you already own it.', {
          detail: { BucketName: name },
        });
      }
      if (opts.at !== undefined) {
        if (!prepared) throw new StoreError('ConditionalRequestConflict', `bucket ${name} was deleted while the fork was prepared; retry the request`);
        stageForkAt(tx, prepared, name);
      } else tx.forkBucket(name, source, newId(8), tx.time);
      const copied: string[] = [];
      for (const [config, value] of [...src.state.configs].sort(([a], [b]) => (a < b ? -1 : 1))) {
        if (NOT_COPIED.has(config)) continue;
        tx.setConfig(name, config, value.slice()); // its own bytes: caches key on them (policy-settings.ts)
        copied.push(config);
      }
      if (opts.owner !== undefined) stageOwner(tx, name, opts.owner);
      for (const [config, value] of opts.configs ?? []) tx.setConfig(name, config, value);
      return { name, source, created: tx.time, copied };
    },
    { alone: true }
  );
}
