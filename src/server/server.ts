/**
 * @module Starting and stopping the S3 server: check what can be checked without touching
 * anything (TLS files, the data location), bind the port, then open the store, load
 * credentials, build the app and serve; shut down gracefully (stop accepting, finish or
 * after a grace period cut requests in flight, close the store and its directory lock).
 */
import { openStore, homeDirectory } from '../store/open.js';
import { erasureBanner } from '../store/erasure-open.js';
import { erasureSetup } from './erasure-option.js';
import type { Store, StoreOptions } from '../store/store.js';
import type { Provider } from '../provider/provider.js';
import { requestListener } from '../s3/app.js';
import type { ServerDeps } from '../s3/context.js';
import { bootstrapKeys, type BootstrapResult } from './credentials.js';
import { KeyRegistry } from '../store/keys-registry.js';
import { createSealer } from '../store/keys-seal.js';
import { serveInternal, startMetricsListener, type MetricsListener } from './internal-endpoints.js';
import { localUrl, removeEndpointFile, writeEndpointFile } from './endpoint-file.js';
import { loadMasterKey } from './master-key.js';
import { Logger } from './log.js';
import { Metrics, family, histogramFamily } from './metrics.js';
import { DEFAULT_KEY_SHARE_PERCENT, KeyShares } from '../s3/key-share.js';
import { budgetMetrics } from './budget-metrics.js';
import { DEFAULTS, type ServerConfig } from './config.js';
import { checkDataLocation, checkErasureDomains } from './data-location.js';
import { bindListener } from './listener.js';
import { drainServer, trackRequests } from './shutdown.js';
import { loadTls, type TlsMaterial } from './tls.js';
import { OptionError } from './option-types.js';
import { DEFAULT_UPLOAD_EXPIRY_MS, DEFAULT_UPLOAD_SWEEP_MS, UploadExpiryWorker } from './upload-expiry.js';
import { DEFAULT_GC_INTERVAL_MS, GcWorker, gcMetricValues } from './gc-worker.js';
import { DEFAULT_LIFECYCLE_INTERVAL_MS, LifecycleWorker } from './lifecycle-worker.js';
import { DEFAULT_EXPIRY_INTERVAL_MS, ExpiryWorker } from './expiry-worker.js';
import { ConnectionGuard, CONNECTION_DEFAULTS, connectionCap } from './connection-guard.js';
import { openFilesLimit } from '../provider/fs/fd-budget.js';
import { DEFAULT_SCRUB_INTERVAL_MS, erasureMaintenance } from './scrub-worker.js';
import { isErasureProvider } from '../provider/erasure/types.js';
import { crc32cImplementation, nativeCrc32cLibrary } from '../checksum/native-crc32c.js';
import { defaultFlavor } from '../wasm/loader.js';

/** Idle time after which a connection stalled mid-request is dropped, ms. */
const SOCKET_IDLE_MS = 5 * 60_000;

export interface RunningServer {
  url: string;
  port: number;
  store: Store;
  /** The server's metrics (what /metrics renders). */
  metrics: Metrics;
  /** The first start-up key (given or generated); absent when the repository's keys are managed with `strata keys`. */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** The separate metrics listener's URL (--metrics-listen). */
  metricsUrl?: string;
  /** The certificate being served (HTTPS only). */
  readonly tls: TlsMaterial | undefined;
  /** Re-reads --tls-cert/--tls-key and serves them to new connections; throws (keeping the
   * current certificate) if they cannot be used, or if the server is plain HTTP. */
  reloadTls(): TlsMaterial;
  /** Graceful stop (see module doc); idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the server. Throws OptionError for a bad TLS pair, data location or configured
 * master key, and the listen error (port in use), BEFORE anything is created; later errors
 * (repository locked, unreadable) release the port again. `config` fields left out take the option defaults.
 */
export async function startServer(
  config: ServerConfig,
  options: {
    write?: (line: string) => void;
    /** Human-readable progress of long work (a shutdown waiting for uploads), whatever --log says. */
    notify?: (message: string) => void;
    /** Repository tuning for an embedding program (checkpoint and compaction thresholds, cache
     * sizes); not a command-line option: the defaults are what a server wants. */
    store?: Pick<StoreOptions, 'checkpointEvery' | 'overlayBytes' | 'maxRuns' | 'blockCacheBytes' | 'bodyCacheBytes'>;
  } = {}
): Promise<RunningServer> {
  config = { ...DEFAULTS, ...config };
  const log = new Logger(config.log, options.write);
  let tls = config.tlsCert && config.tlsKey ? loadTls(config.tlsCert, config.tlsKey) : undefined;
  // An embedding program may give `erasure` without the resolved set-up: resolve it the same way.
  const erasure = config.erasureConfig ?? erasureSetup({ data: config.data, ...(config.erasure !== undefined ? { erasure: config.erasure } : {}) });
  // An erasure set starts with up to m unusable domains (logged below; they count as failed).
  let badDomains: string[] = [];
  if (erasure) badDomains = checkErasureDomains(erasure.domains, erasure.m);
  else checkDataLocation(config.data);
  if (process.env.STRATA_MASTER_KEY || config.masterKeyFile) {
    // A configured master key is only read, never created: check it before anything exists.
    try {
      loadMasterKey({
        ...(process.env.STRATA_MASTER_KEY ? { value: process.env.STRATA_MASTER_KEY } : {}),
        ...(config.masterKeyFile ? { file: config.masterKeyFile } : {}),
      });
    } catch (err) {
      throw new OptionError((err as Error).message);
    }
  }
  // Connection cap, header deadline and minimum body rate, from the first connection on
  // (no total request deadline: large uploads may take long; stalled ones are cut).
  const cap = connectionCap(config.maxConnections ?? CONNECTION_DEFAULTS.maxConnections, openFilesLimit());
  if (cap.warning) log.warn(cap.warning, {});
  const guard = new ConnectionGuard({
    maxConnections: cap.cap,
    headerTimeoutMs: config.headerTimeoutMs ?? CONNECTION_DEFAULTS.headerTimeoutMs,
    bodyWindowMs: config.bodyTimeoutMs ?? CONNECTION_DEFAULTS.bodyWindowMs,
    bodyMinBytes: config.bodyMinBytes ?? CONNECTION_DEFAULTS.bodyMinBytes,
    idleTimeoutMs: config.idleTimeoutMs ?? CONNECTION_DEFAULTS.idleTimeoutMs,
  });
  for (const bad of badDomains) log.warn(`${bad}: serving without it`, {});
  const listener = await bindListener(config.host, config.port, tls, guard);
  let store: Store;
  const opening = performance.now();
  const keySharePercent = config.keyShare ?? DEFAULT_KEY_SHARE_PERCENT;
  // At 100% nothing is shared out: no per-key caps at all.
  const sharing = keySharePercent < 100;
  try {
    store = await openStore(config.data, {
      ...options.store,
      ...(config.pendingBytes ? { pendingBytes: config.pendingBytes } : {}),
      ...(config.historyBudget ? { historyBudget: config.historyBudget } : {}),
      ...(config.commitLog ? { commitLog: config.commitLog === 'on' } : {}),
      provider: { directWrites: directWritesFor(config.directIo, erasure !== undefined) },
      ...(config.maxUploadsPerBucket ? { maxUploadsPerBucket: config.maxUploadsPerBucket } : {}),
      ...(config.retention !== undefined ? { retentionMs: config.retention } : {}),
      log: (event, fields) => log.info(event, fields),
      // An erasure set's write gate gives one access key the same share (write-gate.ts).
      ...(erasure ? { erasure: sharing ? { ...erasure, ownerShare: keySharePercent / 100 } : erasure } : {}),
    });
  } catch (err) {
    await listener.abort();
    throw err;
  }
  const commitLog = store.repo.usesCommitLog ? 'on' : config.commitLog === 'off' ? 'off' : 'off (the provider has none)';
  log.info('repository opened', { data: config.data, seq: store.repo.seq, commitLog, directIo: directIoState(store.repo.provider, config.directIo), ms: Math.round(performance.now() - opening) });
  if (erasure) log.info(erasureBanner(erasure), { domains: erasure.domains.map((d) => `${d.id}=${d.url}`) });
  const dataDir = homeDirectory(config.data, erasure);
  let master: ReturnType<typeof loadMasterKey>;
  let registry: KeyRegistry;
  let creds: BootstrapResult;
  let metricsListener: MetricsListener | undefined;
  try {
    master = loadMasterKey({
      ...(process.env.STRATA_MASTER_KEY ? { value: process.env.STRATA_MASTER_KEY } : {}),
      ...(config.masterKeyFile ? { file: config.masterKeyFile } : {}),
      ...(dataDir ? { dataDir } : {}),
    });
    registry = new KeyRegistry(store, master.masterKey ? createSealer(master.masterKey) : undefined);
    // A wrong master key stops the start here, before any request is served.
    registry.verifyAll();
    creds = await bootstrapKeys(registry, config.credentials, dataDir);
  } catch (err) {
    await store.close();
    await listener.abort();
    throw err;
  }
  for (const w of creds.warnings) log.warn(w, {});
  if (creds.created) {
    const c = creds.list[0]!;
    process.stderr.write(
      `\nStrata generated credentials for this data directory (shown once; stored in ${dataDir}/strata-credentials.json):\n` +
        `  access key: ${c.accessKeyId}\n  secret key: ${c.secretAccessKey}\n\n`
    );
  }
  if (master.created) log.warn('master key generated', { file: master.masterKey!.source, id: master.masterKey!.id });
  const metrics = new Metrics();
  const repo = store.repo;
  // What one access key may hold of the connection cap (as requests) and the pending budget.
  const keyShares = sharing ? new KeyShares(repo.budget, { percent: keySharePercent, maxConnections: cap.cap }) : undefined;
  if (keyShares) log.info('key share', { percent: keySharePercent, requests: keyShares.requestCap || 'no cap', bytes: keyShares.budgets.cap });
  // Writes queued for an erasure set's write gate shorten the body-rate window, so stalled
  // uploads let go of the places they hold within seconds. (The pending budget queues no
  // writes, which it refuses at once; only GETs wait for it.)
  const provider = repo.provider;
  if (isErasureProvider(provider) && provider.writeGate !== undefined) guard.pressure = () => provider.writeGate!.waitingForRoom > 0;
  const uploadExpiry = config.uploadExpiry ?? DEFAULT_UPLOAD_EXPIRY_MS;
  const expiry = new UploadExpiryWorker(store, log, {
    maxAgeMs: uploadExpiry,
    // Never sleep longer than the age itself: an upload expires at most one age late.
    intervalMs: Math.min(config.uploadSweepInterval ?? DEFAULT_UPLOAD_SWEEP_MS, uploadExpiry),
  });
  const gcInterval = config.gcInterval ?? DEFAULT_GC_INTERVAL_MS;
  const gcWorker = gcInterval > 0 ? new GcWorker(store, log, { intervalMs: gcInterval, ...(config.gcGrace !== undefined ? { graceMs: config.gcGrace } : {}) }) : undefined;
  const lifecycleInterval = config.lifecycleInterval ?? DEFAULT_LIFECYCLE_INTERVAL_MS;
  const lifecycle = new LifecycleWorker(store, log, { intervalMs: lifecycleInterval || DEFAULT_LIFECYCLE_INTERVAL_MS });
  metrics.collect(() => lifecycle.metrics());
  const historyExpiry = new ExpiryWorker(store, log, { intervalMs: config.expiryInterval ?? DEFAULT_EXPIRY_INTERVAL_MS });
  metrics.collect(() => [
    ...gcMetricValues(store).flatMap((m) => family(m.name, m.type, m.help, m.value)),
    ...family('strata_expiry_runs_total', 'counter', 'History expiry runs (scheduled and asked for).', historyExpiry.stats.runs),
    ...family('strata_expiry_failures_total', 'counter', 'History expiry runs that failed.', historyExpiry.stats.failures),
    ...family('strata_expiry_entries_examined_total', 'counter', 'Version log entries examined by expiry.', historyExpiry.stats.examined),
    ...family('strata_expiry_entries_expired_total', 'counter', 'Version log entries dropped by expiry.', historyExpiry.stats.expired),
    ...family('strata_expiry_bytes_total', 'counter', 'Bytes of version log entries dropped by expiry.', historyExpiry.stats.bytes),
    ...family('strata_expiry_last_run_ms', 'gauge', 'Duration of the last history expiry run.', historyExpiry.stats.lastMs),
    ...family('strata_commits_total', 'counter', 'Group commits written.', repo.stats.commits),
    ...family('strata_committed_operations_total', 'counter', 'Operations acknowledged through commits.', repo.stats.operations),
    ...family('strata_checkpoints_total', 'counter', 'Checkpoints (roots) written.', repo.stats.checkpoints),
    ...family('strata_compactions_total', 'counter', 'Index compactions.', repo.stats.compactions),
    ...family('strata_checkpoints_failed_total', 'counter', 'Background checkpoints that failed (retried later).', repo.stats.failedCheckpoints),
    ...family('strata_checkpoint_waits_total', 'counter', 'Commit batches that waited for a checkpoint in flight (overlays full: back-pressure).', repo.stats.checkpointWaits),
    ...family('strata_commit_gathers_total', 'counter', 'Commit batches that waited (about 1 ms at most) for more operations to join them.', repo.stats.gathered),
    ...histogramFamily(
      'strata_commit_log_append_seconds',
      'Time from the start of a group commit\'s append to the commit log until it was acknowledged durable (over erasure: on every live copy, a replacement included), for appends that succeeded.',
      repo.stats.logAppend
    ),
    ...family('strata_commit_sequence', 'gauge', 'Newest commit sequence.', repo.seq),
    ...family('strata_pending_bytes', 'gauge', 'Write bytes in flight (admission budget use).', repo.budget.used),
    ...family('strata_pending_budget_bytes', 'gauge', 'Admission budget for in-flight write bytes.', repo.budget.limit),
    ...family(
      'strata_admission_refusals_total',
      'counter',
      'Requests refused by admission control (SlowDown): writes, and GETs whose body does not fit the pending budget, or their access key\'s share of it or of requests in flight.',
      repo.budget.refusals + (keyShares ? keyShares.refusals + keyShares.budgets.refusals : 0)
    ),
    ...budgetMetrics(repo),
    ...family('strata_overlay_bytes', 'gauge', 'Index overlay bytes (flushed at checkpoints).', repo.state.overlayBytes()),
    ...family('strata_buckets', 'gauge', 'Buckets.', repo.state.buckets.size),
    ...family('strata_uploads_in_progress', 'gauge', 'Multipart uploads in progress.', repo.state.uploadsInProgress()),
    ...family('strata_upload_expiry_sweeps_total', 'counter', 'Sweeps for expired multipart uploads.', expiry.stats.sweeps),
    ...family('strata_upload_expiry_failures_total', 'counter', 'Expiry sweeps that failed.', expiry.stats.failures),
    ...family('strata_uploads_expired_total', 'counter', 'Multipart uploads aborted because they expired.', expiry.stats.aborted),
    ...family('strata_upload_completions_expired_total', 'counter', 'Completion records (kept for Complete retries) dropped.', expiry.stats.completionsDropped),
    ...family('strata_upload_chunks_deleted_total', 'counter', 'Carrier chunks of unreachable multipart parts deleted.', repo.reaper.stats.deleted),
    ...family('strata_upload_chunk_delete_failures_total', 'counter', 'Carrier chunk deletions that failed (chunk leaked).', repo.reaper.stats.failed),
    ...(keyShares
      ? [
          ...family('strata_key_share_identities', 'gauge', 'Access keys (anonymous requests count as one) holding requests or budget bytes now.', keyShares.budgets.identities),
          ...family('strata_key_share_request_refusals_total', 'counter', 'Requests refused because their access key had its share of requests in flight (503 SlowDown).', keyShares.refusals),
          ...family('strata_key_share_budget_refusals_total', 'counter', 'Reservations refused because their access key held its share of the pending budget (503 SlowDown).', keyShares.budgets.refusals),
        ]
      : []),
    ...family('strata_connections', 'gauge', 'Open client connections (admitted).', guard.open),
    ...family('strata_connections_refused_total', 'counter', 'Connections refused past the connection cap (503 SlowDown).', guard.refused),
    ...family('strata_header_timeouts_total', 'counter', 'Requests cut for an incomplete header block (400 RequestTimeout).', guard.headerTimeouts),
    ...family('strata_body_timeouts_total', 'counter', 'Requests cut for a body below the minimum rate (400 RequestTimeout).', guard.bodyTimeouts),
    ...family('strata_body_pressure_timeouts_total', 'counter', 'Of those, requests cut over the shorter window used while writes wait for room.', guard.pressureTimeouts),
  ]);
  const erasureUpkeep = erasureMaintenance(store, log, metrics, { scrubIntervalMs: config.scrubInterval ?? DEFAULT_SCRUB_INTERVAL_MS, ...(config.scrubRate !== undefined ? { rateBytesPerSec: config.scrubRate } : {}) });
  const deps: ServerDeps = { store, keys: registry, secrets: registry, metrics, log, lifecycle, historyExpiry };
  deps.internal = (r) => serveInternal(r, metrics);
  if (config.metricsToken !== undefined) deps.metricsToken = config.metricsToken;
  if (master.masterKey) deps.masterKey = master.masterKey;
  if (config.baseDomain) deps.baseDomain = config.baseDomain;
  if (config.region) deps.region = config.region;
  if (config.sseCOverHttp) deps.sseCOverHttp = true;
  if (keyShares) deps.keyShares = keyShares;
  const server = listener.server;
  // Expect: 100-continue is answered by the app once the request is authenticated and
  // authorized (s3/app.ts), so a refused client never sends its body.
  server.on('checkContinue', (req, res) => server.emit('request', req, res));
  server.requestTimeout = 0; // large uploads may take long; stalled bodies are cut by the guard
  server.setTimeout(SOCKET_IDLE_MS);
  const tracker = trackRequests(server);
  if (config.metricsListen) {
    try {
      metricsListener = await startMetricsListener(config.metricsListen.host, config.metricsListen.port, metrics, config.metricsToken);
    } catch (err) {
      await store.close();
      await listener.abort();
      throw new Error(`cannot listen for metrics on ${config.metricsListen.host}:${config.metricsListen.port}: ${(err as Error).message}`);
    }
    log.info('metrics listening', { url: metricsListener.url });
  }
  listener.ready(requestListener(deps));
  const { port, url } = listener;
  if (dataDir) {
    try {
      writeEndpointFile(dataDir, localUrl(config.host, port, tls !== undefined));
    } catch (err) {
      log.warn('cannot record the endpoint for strata keys', { error: String(err) });
    }
  }
  log.info('listening', { url, data: config.data, crc32c: nativeCrc32cLibrary ?? crc32cImplementation(), gf256: defaultFlavor('gf256'), ...(tls ? { tls: tls.fingerprint } : {}) });
  expiry.start();
  gcWorker?.start();
  if (lifecycleInterval > 0) lifecycle.start();
  historyExpiry.start();
  erasureUpkeep?.start();
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    store,
    metrics,
    ...(creds.list[0] ? { accessKeyId: creds.list[0].accessKeyId, secretAccessKey: creds.list[0].secretAccessKey } : {}),
    ...(metricsListener ? { metricsUrl: metricsListener.url } : {}),
    get tls() {
      return tls;
    },
    reloadTls() {
      if (!tls || !config.tlsCert || !config.tlsKey) throw new Error('the server is not serving HTTPS');
      const next = loadTls(config.tlsCert, config.tlsKey);
      listener.setTls(next);
      tls = next;
      log.warn('tls reloaded', { fingerprint: next.fingerprint, subject: next.subject, validTo: next.validTo });
      return next;
    },
    close() {
      closing ??= (async () => {
        guard.stop();
        log.warn('stopping', { inFlight: tracker.inFlight().length, graceMs: config.shutdownTimeout });
        await drainServer(server, tracker, {
          graceMs: config.shutdownTimeout ?? 0,
          report: (event, fields) => {
            if (event === 'drained') return log.info(`shutdown ${event}`, fields);
            log.warn(`shutdown ${event}`, fields);
            const what = `${String(fields.requests)} request(s): ${String(fields.what)}`;
            options.notify?.(event === 'cut' ? `cut after ${config.shutdownTimeout} ms: ${what}` : `waiting for ${what}`);
          },
        });
        await expiry.stop();
        await gcWorker?.stop();
        await lifecycle.stop();
        await historyExpiry.stop();
        await erasureUpkeep?.stop();
        await metricsListener?.close();
        if (dataDir) removeEndpointFile(dataDir);
        log.warn('closing repository', {});
        await store.close();
        log.warn('stopped', {});
      })();
      return closing;
    },
  };
}

/**
 * Whether bulk blobs are written with O_DIRECT for `--direct-io` `asked` (default auto). Auto is
 * on for an erasure set: its fragments are written once and read k at a time, and buffered they
 * cost this VM's kernel most of a large PUT's CPU (a (10,4) 64 MiB PUT: 516-576 ms of server CPU
 * buffered against 288-334 direct, 3 paired runs; bench/RESULTS.md), as MinIO and RustFS write
 * their erasure shards with O_DIRECT for. A plain data directory keeps the page cache: there a
 * GET soon after a PUT reads what the PUT cached (README "Large bodies").
 */
export function directWritesFor(asked: 'on' | 'off' | 'auto' | undefined, erasure: boolean): boolean {
  return asked === 'on' || ((asked ?? 'auto') === 'auto' && erasure);
}

/** What `--direct-io` came to, for the start-up line: a local directory says whether its probe
 * passed; other providers (erasure domains probe each directory alone) say what was asked. */
function directIoState(provider: Provider, asked: 'on' | 'off' | 'auto' | undefined): string {
  // A local directory: what its provider does, whatever was asked.
  const fsDirect = provider.kind === 'fs' ? (provider as Provider & { directWrites?: boolean }).directWrites : undefined;
  if (fsDirect !== undefined) return fsDirect ? 'on' : asked === 'on' ? 'off (the directory does not take O_DIRECT writes)' : 'off';
  if (!directWritesFor(asked, provider.kind === 'erasure')) return 'off';
  return provider.kind === 'erasure' ? 'on where a directory domain takes it' : 'n/a';
}
