/**
 * SIGKILL of `strata scrub --repair` midway: a (4,2) repository over 6 directory domains loses
 * one domain (its directory emptied, as a replaced disk); the repair is killed once it has
 * rebuilt part of that domain; a second `strata scrub --repair` runs to the end; then a scrub
 * finds no damage, `strata verify` is clean and every object reads back byte-exact through a
 * restarted server.
 */
import { spawn } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { CLI, type TestServer } from '../integration/harness.js';
import { bodyOf, client, ecRoot, expectObjects, expectVerifyClean, killServer, putObject, startServer, strata, type EcRoot } from './kill-setup.js';
import { treeBytes } from '../../bench/erasure-lanes.js';

/** Objects written before the loss: 160 of them, 40 striped carriers (~50 MiB in all). */
const OBJECTS = 160;
/** Repair rate limit, so the kill lands mid-repair on a fast machine too. */
const RATE = '8MiB';

interface ScrubJson {
  blobs: number;
  damagedByDomain: Record<string, number>;
  repairedFragments: number;
  lost: string[];
}


function parseReport(stdout: string): ScrubJson {
  const text = stdout.trim();
  return JSON.parse(text.slice(text.indexOf('{'))) as ScrubJson;
}

let ec: EcRoot | undefined;
let server: TestServer | undefined;
afterAll(async () => {
  if (server) await killServer(server).catch(() => undefined);
  ec?.cleanup();
});

describe('kill -9 of strata scrub --repair', () => {
  it('a second repair completes the first; the set is whole, verified and byte-exact', async () => {
    ec = ecRoot('kill-repair');
    server = await startServer(ec);
    let c = client(server.url);
    await c.send(new CreateBucketCommand({ Bucket: 'bkt' }));
    const objects = new Map<string, number>();
    for (let i = 0; i < OBJECTS; i += 8) {
      await Promise.all(
        Array.from({ length: 8 }, async (_, j) => {
          await putObject(c, 'bkt', `o${i + j}`, bodyOf(i + j));
          objects.set(`o${i + j}`, i + j);
        })
      );
    }
    c.destroy();
    await server.stop();
    server = undefined;

    const lost = ec.domainDir(3);
    const held = treeBytes(lost);
    expect(held).toBeGreaterThan(5 * 2 ** 20);
    for (const name of readdirSync(lost)) rmSync(join(lost, name), { recursive: true, force: true });

    // First repair, killed once it has rebuilt a part (but not all) of the lost domain.
    const child = spawn(process.execPath, [CLI, 'scrub', '--data', ec.data, '--repair', '--rate', RATE], {
      env: { ...process.env, ...ec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.resume();
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
    let rebuiltAtKill = 0;
    const deadline = Date.now() + 45_000;
    while (child.exitCode === null && Date.now() < deadline) {
      const now = treeBytes(lost);
      if (now > held / 5) {
        rebuiltAtKill = now;
        child.kill('SIGKILL');
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const first = await exited;
    expect(first.signal, `first repair was not killed mid-way (exit ${first.code}): ${stderr.slice(-2000)}`).toBe('SIGKILL');
    expect(rebuiltAtKill).toBeLessThan(held);

    // Second repair runs to the end.
    const second = await strata(ec, ['scrub', '--data', ec.data, '--repair', '--json']);
    expect(second.code, second.stderr).toBe(0);
    const report = parseReport(second.stdout);
    expect(report.lost).toEqual([]);
    expect(report.repairedFragments).toBeGreaterThan(0);
    // Most of what the domain held is back on it (striped fragments have nowhere else to go
    // when every domain holds one; a replica may land elsewhere).
    expect(treeBytes(lost)).toBeGreaterThanOrEqual(held * 0.8);

    // A plain scrub now finds nothing damaged; verify is clean; every object is exact.
    const check = await strata(ec, ['scrub', '--data', ec.data, '--json']);
    expect(check.code, check.stderr).toBe(0);
    const clean = parseReport(check.stdout);
    expect(Object.values(clean.damagedByDomain).reduce((a, n) => a + n, 0)).toBe(0);
    expect(clean.lost).toEqual([]);
    await expectVerifyClean(ec, 'after the repairs');
    server = await startServer(ec);
    c = client(server.url);
    await expectObjects(c, 'bkt', objects, 'after the repairs');
    c.destroy();
    await server.stop();
    server = undefined;
  }, 120_000);
});
