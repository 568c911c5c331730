/**
 * The esbuild bundle of the codec (dist/browser/codec.js) runs in headless Chromium and
 * produces byte-identical Reed-Solomon parity, reconstruction and checksums to Node's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { createEncoder } from '../../src/codec/reed-solomon.js';
import { checksum, CHECKSUM_ALGORITHMS } from '../../src/checksum/index.js';
import { encodePack, concatPack } from '../../src/pack/writer.js';
import { launchChromium } from '../support/chromium.js';

const BUNDLE = fileURLToPath(new URL('../../dist/browser/codec.js', import.meta.url));
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

// The page regenerates the same seeded bytes as this function.
function seeded(n: number, seed: number): Uint8Array {
  let x = seed >>> 0 || 1;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

let server: Server;
let browser: Browser;
let base: string;

beforeAll(async () => {
  expect(existsSync(BUNDLE), 'dist/browser/codec.js is built by `npm run build:js`').toBe(true);
  const bundle = readFileSync(BUNDLE);
  server = createServer((req, res) => {
    if (req.url === '/codec.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    } else {
      // The page imports the bundle itself (vitest would rewrite an import() inside evaluate).
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><title>codec</title><script type="module">import * as c from "/codec.js"; window.codec = c;</script>');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
});

describe('codec bundle in headless Chromium', () => {
  it('computes the same parity, reconstruction, checksums and pack as Node', async () => {
    const page = await browser.newPage();
    await page.goto(base);
    await page.waitForFunction(() => 'codec' in window);
    const inPage = await page.evaluate(async (algorithms: string[]) => {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const codec = (window as any).codec;
      const seeded = (n: number, seed: number) => {
        let x = seed >>> 0 || 1;
        const out = new Uint8Array(n);
        for (let i = 0; i < n; i++) {
          x ^= x << 13;
          x >>>= 0;
          x ^= x >>> 17;
          x ^= x << 5;
          x >>>= 0;
          out[i] = x & 0xff;
        }
        return out;
      };
      const hex = (b: Uint8Array) => Array.from(b, (v) => v.toString(16).padStart(2, '0')).join('');
      const rs = codec.createEncoder(10, 4);
      const shards = rs.split(seeded(1_000_003, 42));
      rs.encode(shards);
      // Every kernel build the browser accepts (Chromium validates relaxed SIMD too).
      const byFlavor: Record<string, string[]> = {};
      for (const flavor of codec.availableFlavors('gf256')) {
        const other = codec.createEncoder(10, 4, { flavor });
        const s2 = other.split(seeded(1_000_003, 42));
        other.encode(s2);
        byFlavor[flavor] = s2.slice(10).map(hex);
      }
      const damaged = shards.slice();
      for (const i of [0, 3, 7, 12]) damaged[i] = null;
      rs.reconstruct(damaged);
      const data = seeded(777_777, 9);
      const sums: Record<string, string> = {};
      for (const a of algorithms) sums[a] = hex(codec.checksum(a, data));
      const pack = codec.concatPack(codec.encodePack([seeded(100, 1), seeded(5000, 2)], { id: seeded(12, 3) }));
      const decoded = codec.decodePack(pack);
      return {
        flavor: rs.flavor,
        byFlavor,
        parity: shards.slice(10).map(hex),
        rebuilt: [0, 3, 7, 12].map((i) => hex(damaged[i])),
        sums,
        pack: hex(pack),
        packBodies: decoded.entries.map((e: { body: Uint8Array }) => hex(e.body)),
        hasNodeGlobals: typeof (globalThis as { process?: unknown }).process !== 'undefined',
      };
    }, [...CHECKSUM_ALGORITHMS]);

    expect(['relaxed', 'simd']).toContain(inPage.flavor);
    expect(Object.keys(inPage.byFlavor)).toEqual(expect.arrayContaining(['simd', 'scalar']));
    expect(inPage.hasNodeGlobals).toBe(false);
    const rs = createEncoder(10, 4);
    const shards = rs.split(seeded(1_000_003, 42));
    rs.encode(shards);
    expect(inPage.parity).toEqual(shards.slice(10).map(hex));
    for (const [flavor, parity] of Object.entries(inPage.byFlavor)) expect(parity, flavor).toEqual(shards.slice(10).map(hex));
    expect(inPage.rebuilt).toEqual([0, 3, 7, 12].map((i) => hex(shards[i]!)));
    const data = seeded(777_777, 9);
    for (const a of CHECKSUM_ALGORITHMS) expect(inPage.sums[a], a).toBe(hex(checksum(a, data)));
    const pack = concatPack(encodePack([seeded(100, 1), seeded(5000, 2)], { id: seeded(12, 3) }));
    expect(inPage.pack).toBe(hex(pack));
    expect(inPage.packBodies).toEqual([hex(seeded(100, 1)), hex(seeded(5000, 2))]);
    await page.close();
  });
});
