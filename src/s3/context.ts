/**
 * @module The per-request context handed to every operation handler, and the server-wide
 * dependencies it reaches through (the process's own parts through the ports of ports.ts).
 */
import type { LifecycleRunner } from '../admin/lifecycle.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Store } from '../store/store.js';
import type { BudgetAccount, ShareTicket } from '../store/budget.js';
import type { KeyShares } from './key-share.js';
import type { AuthResult } from './auth/index.js';
import type { KeyRegistry } from '../store/keys-registry.js';
import type { MasterKey } from '../store/master-key-derive.js';
import type { HistoryExpiryControl, InternalEndpoints, RequestLog, RequestMetrics } from './ports.js';
import { parseQueryPairs, splitTarget } from '../sigv4/raw-target.js';
import { resourceOfTarget } from './resource.js';

export interface ServerDeps {
  store: Store;
  /** The repository's access keys: records for authorization, secrets for authentication. */
  keys: KeyRegistry;
  /** accessKeyId -> secret (undefined: unknown key). The key registry itself; kept for signers' checks. */
  secrets: { get(accessKeyId: string): string | undefined };
  metrics: RequestMetrics;
  log: RequestLog;
  /** The process's /health and /metrics on the S3 port (server/internal-endpoints.ts), if any. */
  internal?: InternalEndpoints;
  baseDomain?: string;
  region?: string;
  /** The server's master key (sealing secrets, SSE-S3), when one is configured or generated. */
  masterKey?: MasterKey;
  /** Bearer token that opens GET /metrics on the S3 port; undefined: /metrics is not served there. */
  metricsToken?: string;
  /** SSE-C keys are accepted over plain HTTP from other hosts too (see s3/sse-transport.ts). */
  sseCOverHttp?: boolean;
  /** Per-access-key shares of requests in flight and of the pending budget (key-share.ts); none: unshared. */
  keyShares?: KeyShares;
  /** The server's lifecycle worker: admin runs go through it (admin/lifecycle.ts). */
  lifecycle?: LifecycleRunner;
  /** The history expiry worker (admin POST /expire runs it now). */
  historyExpiry?: HistoryExpiryControl;
}

export class RequestContext {
  readonly id: string;
  readonly started = performance.now();
  readonly method: string;
  /** The request-target exactly as received (never a normalised path). */
  readonly rawTarget: string;
  /** Lower-case names; repeated headers joined with ','. */
  readonly headers: Record<string, string | undefined>;
  readonly incoming: IncomingMessage;
  readonly res: ServerResponse;
  readonly deps: ServerDeps;
  op = 'Unknown';
  bucket?: string;
  key?: string;
  auth?: AuthResult;
  /** The time a read is served as of (ms; s3/as-of.ts), when the request asks for one. */
  asOf?: number;
  /** Headers every response of this request carries (CORS, request id). */
  readonly baseHeaders: Record<string, string>;
  bytesIn = 0;
  bytesOut = 0;
  errorCode?: string;
  /** What this request reserves memory from: its identity's share (key-share.ts), else the whole pending budget. */
  budget: BudgetAccount;
  /** The share this request counts against (enterKeyShare), if the server shares out. */
  #share: ShareTicket | undefined;

  constructor(incoming: IncomingMessage, res: ServerResponse, deps: ServerDeps, id: string) {
    this.incoming = incoming;
    this.res = res;
    this.deps = deps;
    this.id = id;
    this.method = (incoming.method ?? 'GET').toUpperCase();
    this.rawTarget = incoming.url ?? '/';
    const h: Record<string, string | undefined> = {};
    const raw = incoming.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      const v = raw[i + 1]!;
      h[name] = h[name] === undefined ? v : `${h[name]},${v}`;
    }
    this.headers = h;
    this.baseHeaders = { 'x-amz-request-id': id, 'x-amz-id-2': id, server: 'Strata' };
    this.budget = deps.store.repo.budget;
  }

  /**
   * Counts this request against `accessKeyId`'s share (null: anonymous; key-share.ts) from now
   * on, `budget` included, and lets go of the identity it counted against before (a POST form
   * is anonymous until its signer is read from the form). Throws StoreError 'SlowDown' when the
   * identity has its whole share of requests in flight. Does nothing without shares.
   */
  enterKeyShare(accessKeyId: string | null): void {
    const shares = this.deps.keyShares;
    if (!shares) return;
    const ticket = shares.enter(accessKeyId);
    this.#share?.leave();
    this.#share = ticket;
    this.budget = ticket.account;
  }

  /** The request ended: it no longer counts against its identity's requests (its reservations
   * do until released). */
  leaveKeyShare(): void {
    this.#share?.leave();
    this.#share = undefined;
  }

  #query?: Map<string, string>;

  /**
   * Decoded query parameters; a repeated parameter keeps its FIRST value, as the router's
   * (router/params.ts): what a policy condition reads (s3:prefix) must be what the handler uses.
   */
  get query(): Map<string, string> {
    if (!this.#query) {
      this.#query = new Map();
      for (const [k, v] of parseQueryPairs(splitTarget(this.rawTarget).rawQuery)) if (!this.#query.has(k)) this.#query.set(k, v);
    }
    return this.#query;
  }

  get store(): Store {
    return this.deps.store;
  }

  /**
   * The S3 resource for error bodies, as S3 names it: /bucket/key, /bucket or /. Before
   * routing (e.g. an authentication failure) it is read from the request-target itself.
   */
  get resource(): string {
    if (this.bucket !== undefined) return this.key === undefined ? `/${this.bucket}` : `/${this.bucket}/${this.key}`;
    return resourceOfTarget(this.rawTarget, this.headers.host, this.deps.baseDomain);
  }
}
