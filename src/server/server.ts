/**
 * @module Starting and stopping the S3 server: open the store, load credentials, build
 * the app, listen, and shut down gracefully (stop accepting, finish requests, close the
 * store and its directory lock).
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { openStore, localDirectory } from '../store/open.js';
import type { Store } from '../store/store.js';
import { createApp } from '../s3/app.js';
import type { ServerDeps } from '../s3/context.js';
import { bootstrapKeys, type BootstrapResult } from './credentials.js';
import { KeyRegistry } from '../store/keys-registry.js';
import { createSealer } from '../store/keys-seal.js';
import { startMetricsListener, type MetricsListener } from './internal-endpoints.js';
import { localUrl, removeEndpointFile, writeEndpointFile } from './endpoint-file.js';
import { loadMasterKey } from './master-key.js';
import { Logger } from './log.js';
import { Metrics, family } from './metrics.js';
import type { ServerConfig } from './config.js';
import { DEFAULT_UPLOAD_EXPIRY_MS, DEFAULT_UPLOAD_SWEEP_MS, UploadExpiryWorker } from './upload-expiry.js';

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
  close(): Promise<void>;
}

export async function startServer(config: ServerConfig, options: { write?: (line: string) => void } = {}): Promise<RunningServer> {
  const log = new Logger(config.log, options.write);
  const store = await openStore(config.data, {
    ...(config.pendingBytes ? { pendingBytes: config.pendingBytes } : {}),
    ...(config.maxUploadsPerBucket ? { maxUploadsPerBucket: config.maxUploadsPerBucket } : {}),
    log: (event, fields) => log.info(event, fields),
  });
  let master: ReturnType<typeof loadMasterKey>;
  let registry: KeyRegistry;
  let creds: BootstrapResult;
  let metricsListener: MetricsListener | undefined;
  try {
    const dataDir = localDirectory(config.data);
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
    throw err;
  }
  for (const w of creds.warnings) log.warn(w, {});
  if (creds.created) {
    const c = creds.list[0]!;
    process.stderr.write(
      `\nStrata generated credentials for this data directory (shown once; stored in ${localDirectory(config.data)}/strata-credentials.json):\n` +
        `  access key: ${c.accessKeyId}\n  secret key: ${c.secretAccessKey}\n\n`
    );
  }
  if (master.created) log.warn('master key generated', { file: master.masterKey!.source, id: master.masterKey!.id });
  const metrics = new Metrics();
  const repo = store.repo;
  const uploadExpiry = config.uploadExpiry ?? DEFAULT_UPLOAD_EXPIRY_MS;
  const expiry = new UploadExpiryWorker(store, log, {
    maxAgeMs: uploadExpiry,
    // Never sleep longer than the age itself: an upload expires at most one age late.
    intervalMs: Math.min(config.uploadSweepInterval ?? DEFAULT_UPLOAD_SWEEP_MS, uploadExpiry),
  });
  metrics.collect(() => [
    ...family('strata_commits_total', 'counter', 'Group commits written.', repo.stats.commits),
    ...family('strata_committed_operations_total', 'counter', 'Operations acknowledged through commits.', repo.stats.operations),
    ...family('strata_checkpoints_total', 'counter', 'Checkpoints (roots) written.', repo.stats.checkpoints),
    ...family('strata_compactions_total', 'counter', 'Index compactions.', repo.stats.compactions),
    ...family('strata_commit_sequence', 'gauge', 'Newest commit sequence.', repo.seq),
    ...family('strata_pending_bytes', 'gauge', 'Write bytes in flight (admission budget use).', repo.budget.used),
    ...family('strata_pending_budget_bytes', 'gauge', 'Admission budget for in-flight write bytes.', repo.budget.limit),
    ...family('strata_admission_refusals_total', 'counter', 'Writes refused by admission control (SlowDown).', repo.budget.refusals),
    ...family('strata_overlay_bytes', 'gauge', 'Index overlay bytes (flushed at checkpoints).', repo.state.overlayBytes()),
    ...family('strata_buckets', 'gauge', 'Buckets.', repo.state.buckets.size),
    ...family('strata_uploads_in_progress', 'gauge', 'Multipart uploads in progress.', repo.state.uploadsInProgress()),
    ...family('strata_upload_expiry_sweeps_total', 'counter', 'Sweeps for expired multipart uploads.', expiry.stats.sweeps),
    ...family('strata_upload_expiry_failures_total', 'counter', 'Expiry sweeps that failed.', expiry.stats.failures),
    ...family('strata_uploads_expired_total', 'counter', 'Multipart uploads aborted because they expired.', expiry.stats.aborted),
    ...family('strata_upload_completions_expired_total', 'counter', 'Completion records (kept for Complete retries) dropped.', expiry.stats.completionsDropped),
    ...family('strata_upload_chunks_deleted_total', 'counter', 'Carrier chunks of unreachable multipart parts deleted.', repo.reaper.stats.deleted),
    ...family('strata_upload_chunk_delete_failures_total', 'counter', 'Carrier chunk deletions that failed (chunk leaked).', repo.reaper.stats.failed),
  ]);
  const deps: ServerDeps = { store, keys: registry, secrets: registry, metrics, log };
  if (config.metricsToken !== undefined) deps.metricsToken = config.metricsToken;
  if (master.masterKey) deps.masterKey = master.masterKey;
  if (config.baseDomain) deps.baseDomain = config.baseDomain;
  if (config.region) deps.region = config.region;
  const app = createApp(deps);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: config.port, hostname: config.host, overrideGlobalObjects: false }, () => resolve(s as Server));
    (s as Server).once('error', reject);
    // `Expect: 100-continue` is answered once the request is authorized (expect-continue.ts),
    // so a refused client never sends its body; Node would otherwise send 100 at once.
    (s as Server).on('checkContinue', (req, res) => (s as Server).emit('request', req, res));
  });
  server.requestTimeout = 0; // large uploads may take long; idle sockets are cut instead
  server.setTimeout(SOCKET_IDLE_MS);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  if (config.metricsListen) {
    try {
      metricsListener = await startMetricsListener(config.metricsListen.host, config.metricsListen.port, metrics, config.metricsToken);
    } catch (err) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
      throw new Error(`cannot listen for metrics on ${config.metricsListen.host}:${config.metricsListen.port}: ${(err as Error).message}`);
    }
    log.info('metrics listening', { url: metricsListener.url });
  }
  const dataDir = localDirectory(config.data);
  if (dataDir) {
    try {
      writeEndpointFile(dataDir, localUrl(config.host, port));
    } catch (err) {
      log.warn('cannot record the endpoint for strata keys', { error: String(err) });
    }
  }
  log.info('listening', { url, data: config.data });
  expiry.start();
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    store,
    metrics,
    ...(creds.list[0] ? { accessKeyId: creds.list[0].accessKeyId, secretAccessKey: creds.list[0].secretAccessKey } : {}),
    ...(metricsListener ? { metricsUrl: metricsListener.url } : {}),
    close() {
      closing ??= (async () => {
        await metricsListener?.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await expiry.stop();
        if (dataDir) removeEndpointFile(dataDir);
        await store.close();
        log.info('stopped', {});
      })();
      return closing;
    },
  };
}
