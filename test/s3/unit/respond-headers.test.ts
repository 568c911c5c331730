/**
 * The response head every S3 response goes out with (respond.ts writeHead): the request's base
 * headers, then the handler's, a handler's header replacing a base header of the same name
 * (never sent twice), values kept as given, on a real Node HTTP server read back by undici
 * (a name sent twice comes back as a list of values, so a duplicate shows).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { writeHead, sendEmpty } from '../../../src/s3/respond.js';
import type { RequestContext } from '../../../src/s3/context.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** Serves one response made by `respond` and returns its status and its header pairs (raw
 * pairs when the client gives them, else each value of each name, in order). */
async function rawHead(respond: (r: RequestContext) => void): Promise<{ status: number; raw: [string, string][] }> {
  const server = createServer((_req, res) => {
    respond({ res, baseHeaders: { 'x-amz-request-id': 'REQ1', 'x-amz-id-2': 'REQ1', server: 'Strata' } } as unknown as RequestContext);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const res = await request(`http://127.0.0.1:${port}/`);
  await res.body.dump();
  const flat = (res as unknown as { rawHeaders?: string[] }).rawHeaders;
  const raw: [string, string][] = [];
  if (flat) for (let i = 0; i < flat.length; i += 2) raw.push([flat[i]!.toLowerCase(), flat[i + 1]!]);
  else for (const [k, v] of Object.entries(res.headers)) for (const x of Array.isArray(v) ? v : [v!]) raw.push([k, x]);
  return { status: res.statusCode, raw };
}

const named = (raw: [string, string][], name: string) => raw.filter(([k]) => k === name).map(([, v]) => v);

describe('response head', () => {
  it('sends the base headers, then the handler headers, each name once', async () => {
    const { status, raw } = await rawHead((r) => {
      writeHead(r, 206, { 'content-length': 5, etag: '"abc"', 'x-amz-meta-a': 'b c' });
      r.res.end('hello');
    });
    expect(status).toBe(206);
    expect(named(raw, 'x-amz-request-id')).toEqual(['REQ1']);
    expect(named(raw, 'x-amz-id-2')).toEqual(['REQ1']);
    expect(named(raw, 'server')).toEqual(['Strata']);
    expect(named(raw, 'content-length')).toEqual(['5']);
    expect(named(raw, 'etag')).toEqual(['"abc"']);
    expect(named(raw, 'x-amz-meta-a')).toEqual(['b c']);
    // Base first, in their order, then the handler's in theirs.
    const order = raw.map(([k]) => k).filter((k) => ['x-amz-request-id', 'x-amz-id-2', 'server', 'content-length', 'etag', 'x-amz-meta-a'].includes(k));
    expect(order).toEqual(['x-amz-request-id', 'x-amz-id-2', 'server', 'content-length', 'etag', 'x-amz-meta-a']);
  });

  it('lets a handler header replace a base header of the same name, sent once', async () => {
    const { raw } = await rawHead((r) => sendEmpty(r, 204, { server: 'Other', 'x-amz-request-id': 'REQ2' }));
    expect(named(raw, 'server')).toEqual(['Other']);
    expect(named(raw, 'x-amz-request-id')).toEqual(['REQ2']);
    expect(named(raw, 'x-amz-id-2')).toEqual(['REQ1']);
  });

  it('refuses a header value Node would refuse in an object (no smuggled line breaks)', async () => {
    let thrown: unknown;
    const { status } = await rawHead((r) => {
      try {
        writeHead(r, 200, { 'x-amz-meta-x': 'a\r\nInjected: yes' });
      } catch (err) {
        thrown = err;
        r.res.writeHead(500).end();
      }
    });
    expect(status).toBe(500);
    expect((thrown as NodeJS.ErrnoException)?.code).toBe('ERR_INVALID_CHAR');
  });
});
