/**
 * @module Signed requests through undici for tests that speak to the server below the SDKs:
 * `signed` signs a request with the harness's credentials for the server's host, `send` makes
 * it and returns the status and the whole body.
 */
import { request } from 'undici';
import { ACCESS_KEY, REGION, SECRET_KEY, type TestServer } from '../harness.js';
import { signV4 } from '../wire.js';

type Unsigned = Parameters<typeof signV4>[0] extends infer T ? Omit<T, 'host' | 'credentials' | 'region'> : never;
type Signed = ReturnType<typeof signV4>;

export interface SignedSender {
  signed(o: Unsigned): Signed;
  send(r: { method: string; target: string; headers: Record<string, string>; body?: Uint8Array }): Promise<{ status: number; body: Buffer }>;
}

/** Signing and sending for server `s` (read when called: `s` may be started later). */
export function signedSender(server: () => TestServer): SignedSender {
  return {
    signed: (o) => signV4({ host: new URL(server().url).host, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY }, region: REGION, ...o }),
    send: async (r) => {
      const res = await request(`${server().url}${r.target}`, { method: r.method, headers: r.headers, ...(r.body ? { body: r.body } : {}) });
      return { status: res.statusCode, body: Buffer.from(await res.body.arrayBuffer()) };
    },
  };
}
