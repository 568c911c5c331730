/**
 * @module Shared set-up of the erasure kill tests: a spawned `strata serve --data
 * 'ROOT/disk{1...6}'` with STRATA_ERASURE=4+2 (the real server process, so it can be
 * SIGKILLed), an AWS SDK client for it, seeded object bodies, and the `strata` CLI verbs
 * (scrub, verify) run as child processes over the same domains.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { expect } from 'vitest';
import { ACCESS_KEY, CLI, REGION, SECRET_KEY, startTestServer, type TestServer } from '../integration/harness.js';
import { run, type CliResult } from '../integration/support/run-cli.js';
import { firstDiff } from '../support/bytes.js';
import { randomBytes } from '../support/random.js';

export const K = 4;
export const M = 2;
export const DOMAINS = K + M;

export interface EcRoot {
  root: string;
  /** The `--data` pattern over the domains. */
  data: string;
  domainDir(i: number): string;
  env: Record<string, string>;
  cleanup(): void;
}

/** A temp root with DOMAINS empty domain directories. */
export function ecRoot(label: string): EcRoot {
  const root = mkdtempSync(join(tmpdir(), `ec-${label}-`));
  const domainDir = (i: number) => join(root, `disk${i}`);
  for (let i = 1; i <= DOMAINS; i++) mkdirSync(domainDir(i));
  return {
    root,
    data: join(root, `disk{1...${DOMAINS}}`),
    domainDir,
    env: { STRATA_ERASURE: `${K}+${M}` },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Starts `strata serve` as a child process over the root's domains. */
export function startServer(ec: EcRoot): Promise<TestServer> {
  return startTestServer({ child: true, dataDir: ec.data, env: ec.env });
}

/** SIGKILLs the server and waits for the process to be gone. */
export async function killServer(s: TestServer): Promise<void> {
  const child = s.child!;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

export function client(url: string): S3Client {
  return new S3Client({
    endpoint: url,
    region: REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
    maxAttempts: 1,
  });
}

/** Body of object `seed`: small (packed) most of the time, 200 KiB .. 2.2 MiB (striped carrier) every 4th. */
export function bodyOf(seed: number): Uint8Array {
  const size = seed % 4 === 0 ? 200_000 + ((seed * 104_729) % 2_000_000) : 50 + ((seed * 131) % 6000);
  return randomBytes(size, 9000 + seed);
}

export async function putObject(c: S3Client, bucket: string, key: string, body: Uint8Array): Promise<void> {
  await c.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: body.length }));
}

/** The object's bytes, or undefined when it does not exist (404). */
export async function getObject(c: S3Client, bucket: string, key: string): Promise<Uint8Array | undefined> {
  try {
    const res = await c.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return await res.Body!.transformToByteArray();
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
    throw err;
  }
}

/** Every (key, seed) reads back byte-exact. */
export async function expectObjects(c: S3Client, bucket: string, objects: ReadonlyMap<string, number>, label: string): Promise<void> {
  for (const [key, seed] of objects) {
    const got = await getObject(c, bucket, key);
    expect(got, `${label}: ${key} missing`).toBeDefined();
    const want = bodyOf(seed);
    expect(firstDiff(got!, want), `${label}: ${key} (${want.length} bytes, got ${got!.length})`).toBe(-1);
  }
}

/** Runs `strata <args>` with the erasure environment; never rejects on a non-zero exit. */
export function strata(ec: EcRoot, args: readonly string[], timeoutMs = 60_000): Promise<CliResult> {
  return run(process.execPath, [CLI, ...args], { env: { ...process.env, ...ec.env }, timeoutMs });
}

/** `strata verify` over the domains must find the repository sound (exit 0). */
export async function expectVerifyClean(ec: EcRoot, label: string): Promise<void> {
  const r = await strata(ec, ['verify', '--data', ec.data]);
  expect(r.code, `${label}: strata verify\n${r.stdout}\n${r.stderr}`).toBe(0);
}
