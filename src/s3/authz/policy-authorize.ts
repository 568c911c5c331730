/**
 * @module The bucket side of authorization: what a bucket's policy, ACLs and Block Public
 * Access say about one request, combined with what the requesting key is granted.
 *
 * Order of decision for each action the request performs (IAM evaluation logic, S3's
 * ACL and Block Public Access rules):
 *   1. an applying Deny in the bucket policy refuses (even the owner and admins, except
 *      that they may always read, replace and delete the policy itself: no lockout);
 *   2. the key's own rights allow (bucket owner, admin, a grant on the bucket: `granted`);
 *   3. an applying Allow in the policy allows, unless the policy is public and the bucket
 *      restricts public buckets (RestrictPublicBuckets);
 *   4. an ACL that applies allows (the bucket's ACL for listing and writing, the object's for
 *      reading it; AllUsers/AuthenticatedUsers grants count for nothing under
 *      IgnorePublicAcls, and every ACL under the BucketOwnerEnforced Object Ownership);
 *   5. otherwise 403 AccessDenied.
 * A GET, HEAD or GetObjectAttributes of a key that does not exist answers 404 only to whom
 * may list the bucket (with that key as s3:prefix), 403 to everyone else, as S3 does.
 */
import type { RequestContext } from '../context.js';
import type { Endpoint } from '../router/endpoint.js';
import { S3Error } from '../errors.js';
import { isStoreError } from '../../store/errors.js';
import type { ObjectVersion } from '../../store/records.js';
import { aclAllows } from './acl.js';
import { objectAcl, objectOwner } from './acl-object.js';
import { ACCESS_RULES, extraActions, OWNER_ALWAYS, type AclPermission } from './policy-actions.js';
import { conditionContext } from './policy-context.js';
import { evaluatePolicy, type PolicyDecision } from './policy-evaluate.js';
import { aclsDisabled, bucketSettings, type BucketSettings } from './policy-settings.js';
import { blockedBy } from './public-access.js';

/** What the requesting key holds on the bucket, decided by the key grants (authorize.ts). */
export interface KeyRights {
  /** The key's own rights allow this operation (bucket owner, admin, a grant). */
  granted: boolean;
  /** The key owns the bucket or is an admin: exempt from a Deny on managing the policy. */
  ownerOrAdmin: boolean;
}

/** Canned ACL values S3 counts as public. */
const PUBLIC_CANNED = new Set(['public-read', 'public-read-write', 'authenticated-read']);
const OBJECT_WRITES = new Set(['PutObject', 'CopyObject', 'CreateMultipartUpload']);
/** Reads that S3 answers 404 for a missing key only to whom may list the bucket (API reference of each). */
const READS_OBJECT: ReadonlySet<string> = new Set(['GetObject', 'HeadObject', 'GetObjectAttributes']);

const denied = () => new S3Error('AccessDenied');

type BucketOrObject = Extract<Endpoint, { bucket: string }>;

class Decision {
  #object: ObjectVersion | null | undefined;
  readonly r: RequestContext;
  readonly e: BucketOrObject;
  readonly principal: string | null;
  readonly s: BucketSettings;
  readonly rights: KeyRights;
  readonly headers: Readonly<Record<string, string | undefined>>;

  constructor(r: RequestContext, e: BucketOrObject, principal: string | null, s: BucketSettings, rights: KeyRights, headers: Readonly<Record<string, string | undefined>>) {
    this.r = r;
    this.headers = headers;
    this.e = e;
    this.principal = principal;
    this.s = s;
    this.rights = rights;
  }

  /** The stored object (null: none), looked up once. */
  async object(): Promise<ObjectVersion | null> {
    if (this.#object === undefined) {
      const key = 'key' in this.e ? this.e.key : undefined;
      if (key === undefined) return (this.#object = null);
      try {
        this.#object = await this.r.store.version(this.e.bucket, key);
      } catch (err) {
        if (!isStoreError(err, 'NoSuchKey') && !isStoreError(err, 'NoSuchBucket')) throw err;
        this.#object = null;
      }
    }
    return this.#object;
  }

  /** The policy's verdict on `action` over `resource` (a broken policy denies all but owners). */
  async policy(action: string, resource: string, prefix?: string): Promise<PolicyDecision> {
    const p = this.s.policy;
    if (!p) return 'none';
    if ('broken' in p) return this.rights.ownerOrAdmin ? 'none' : 'deny';
    const needObject = p.policy.readsObjectTags && 'key' in this.e && prefix === undefined;
    const ctx = conditionContext(this.r, this.e, {
      principal: this.principal,
      headers: this.headers,
      ...(needObject ? { object: await this.object() } : {}),
      ...(prefix !== undefined ? { prefix } : {}),
    });
    return evaluatePolicy(p.policy, { principal: this.principal, action, resource, context: ctx });
  }

  policyAllowCounts(): boolean {
    return !(this.s.block.restrictPublicBuckets && this.s.policy?.isPublic);
  }

  async aclAllows(on: 'bucket' | 'object', permission: AclPermission): Promise<boolean> {
    // BucketOwnerEnforced: ACLs no longer affect permissions.
    if (aclsDisabled(this.s)) return false;
    const ignore = this.s.block.ignorePublicAcls;
    if (on === 'bucket') return aclAllows(this.s.acl, 'bucket', permission, this.principal, this.s.owner, this.s.owner, ignore);
    const v = await this.object();
    if (!v) return false;
    return aclAllows(objectAcl(v), 'object', permission, this.principal, objectOwner(v, this.s.owner), this.s.owner, ignore);
  }

  /** Whether the principal may list the bucket with `prefix` (the 404-or-403 question). */
  async mayList(prefix: string): Promise<boolean> {
    const d = await this.policy('s3:ListBucket', this.e.bucket, prefix);
    if (d === 'deny') return false;
    if (this.rights.granted) return true;
    if (d === 'allow' && this.policyAllowCounts()) return true;
    return this.aclAllows('bucket', 'READ');
  }
}

/**
 * Authorizes bucket- or object-level endpoint `e` for `principal` (null: anonymous) given
 * the key's `rights`. Reads the bucket's settings and, when a condition or an object ACL
 * needs it, the stored object; changes nothing. `headers` hold the x-amz-* values the write
 * carries (a POST form's fields; default the request's headers). Resolves when allowed; throws S3Error
 * `AccessDenied` otherwise (also for a bucket that does not exist, unless the key's rights
 * allow: then the handler answers NoSuchBucket).
 */
export async function authorizeBucketAccess(
  r: RequestContext,
  e: BucketOrObject,
  principal: string | null,
  rights: KeyRights,
  headers: Readonly<Record<string, string | undefined>> = r.headers
): Promise<void> {
  const rule = ACCESS_RULES[e.op];
  if (rule.scope === 'none' || rule.scope === 'service') throw new Error(`${e.op} is not a bucket operation`);
  const settings = bucketSettings(r.store, e.bucket);
  if (!settings) {
    if (rights.granted) return;
    throw denied();
  }
  if (rule.scope === 'perKey') {
    // DeleteObjects: each key is authorized as a DeleteObject by the handler. Refused as a
    // whole when nothing could allow any key: no rights, no policy, no ACL giving WRITE.
    const acl = !aclsDisabled(settings) && aclAllows(settings.acl, 'bucket', 'WRITE', principal, settings.owner, settings.owner, settings.block.ignorePublicAcls);
    if (rights.granted || settings.policy || acl) return;
    throw denied();
  }
  const d = new Decision(r, e, principal, settings, rights, headers);
  const resource = rule.scope === 'bucket' ? e.bucket : `${e.bucket}/${(e as { key: string }).key}`;
  const actions = [rule.action, ...extraActions(e, headers)];
  const decisions: PolicyDecision[] = [];
  for (const action of actions) {
    const v = await d.policy(action, resource);
    if (v === 'deny' && !(rights.ownerOrAdmin && OWNER_ALWAYS.has(action))) throw denied();
    decisions.push(v);
  }
  let allowed = rights.granted;
  if (!allowed) allowed = decisions.every((v) => v === 'allow') && d.policyAllowCounts();
  // An ACL grants the operation itself; setting the new object's own ACL or tags comes with
  // writing it (the writer owns what it writes). Denies were refused above.
  if (!allowed && rule.acl) allowed = await d.aclAllows(rule.acl.on, rule.acl.permission);
  if (READS_OBJECT.has(e.op) && !rights.granted && (await d.object()) === null) {
    // Missing key: 404 to whom may list the bucket, 403 to everyone else.
    if (await d.mayList((e as { key: string }).key)) return;
    throw denied();
  }
  if (!allowed) throw denied();
  if (OBJECT_WRITES.has(e.op) && settings.block.blockPublicAcls && PUBLIC_CANNED.has((headers['x-amz-acl'] ?? '').trim())) {
    throw blockedBy('BlockPublicAcls');
  }
}
