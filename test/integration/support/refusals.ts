/**
 * "Refused and nothing written": helpers for tests that send a request Strata must refuse and
 * prove it changed nothing — the files under the data directory (names, sizes, mtimes) are as
 * before and the admission budget is back to zero.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { request } from 'undici';
import { METRICS_AUTH, type TestServer } from '../harness.js';
import { errorCode } from '../wire.js';
import { listFiles } from './tree.js';

export interface Reply {
  status: number;
  text: string;
}

/** Every file under the server's data directory with its size and mtime: what a write would change. */
export function snapshot(s: TestServer): string[] {
  return listFiles(s.dataDir).map((f) => {
    const st = statSync(join(s.dataDir, f));
    return `${f} ${st.size} ${st.mtimeMs}`;
  });
}

/** The server's strata_pending_bytes gauge, read from /metrics. */
export async function pendingBytes(s: TestServer): Promise<number> {
  const text = await (await request(`${s.url}/metrics`, { headers: METRICS_AUTH })).body.text();
  return Number(/^strata_pending_bytes (\S+)$/m.exec(text)![1]);
}

/**
 * Runs `act` against server `s`, expects S3 error `status`/`code` (an empty body for HEAD) and
 * no change on disk or in the budget; returns the reply.
 */
export async function expectRefused<R extends Reply>(s: TestServer, act: () => Promise<R>, status: number, code: string, head = false): Promise<R> {
  const before = snapshot(s);
  const r = await act();
  expect(r.status, r.text).toBe(status);
  if (head) expect(r.text).toBe('');
  else expect(errorCode(r.text), r.text).toBe(code);
  expect(snapshot(s), 'files under the data directory changed').toEqual(before);
  expect(await pendingBytes(s)).toBe(0);
  return r;
}
