/**
 * @module HTTP-level garbage, written byte by byte to raw sockets: random bytes, broken
 * request lines, duplicate / huge / invalid headers, Content-Length and Transfer-Encoding
 * combinations, lying lengths with the client going away, pipelined requests.
 *
 * Most of it never reaches the S3 app (Node's parser answers 400/413/431 or drops the
 * connection); what does must still get a proper S3 answer. Requests that could write go to
 * the play bucket only.
 */
import type { Rng } from './rng.js';
import type { FuzzCase, RawCase } from './transport.js';
import { signV4, requestHead } from '../../integration/wire.js';
import type { FuzzContext } from './context.js';

const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH', 'PROPFIND', 'CONNECT', 'TRACE', 'get', 'G E T', '', 'GET\x00', 'GETX', 'M-SEARCH', 'PURGE'];
const VERSIONS = ['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.1 x', '', 'http/1.1', 'HTTP/1.12', 'HTTP/1'];

function targets(ctx: FuzzContext, rng: Rng): string[] {
  const key = rng.pick(ctx.knownKeys);
  return [
    '/',
    '*',
    'http://evil.example/x',
    `http://${ctx.host}/${ctx.knownBucket}/${key}`,
    `/${ctx.knownBucket}/${key}`,
    `/${ctx.knownBucket}`,
    '/%',
    '/%zz',
    '/%ED%A0%80',
    '/%C0%AF',
    '/a b',
    '/\x00',
    `/${'a'.repeat(rng.pick([1024, 8192, 70_000]))}`,
    '//..//',
    '?',
    '/?%',
    `/${ctx.knownBucket}?list-type=2&${'a=1&'.repeat(rng.int(100, 5000))}`,
    `/${ctx.knownBucket}/${key}#frag`,
    '\\\\',
    '/ü',
    `/${ctx.knownBucket}/${key}?${rng.nasty()}`,
    rng.bytes(rng.int(1, 40)).toString('latin1'),
  ];
}

function hosts(ctx: FuzzContext, rng: Rng): string[] {
  return [ctx.host, ctx.host, '', 'evil', '[::1', 'a b', '127.0.0.1:99999', `${ctx.knownBucket}.localhost`, `${ctx.knownBucket}.${ctx.baseDomain}`, `UPPER.${ctx.baseDomain}:1`, `.${ctx.baseDomain}`, `${ctx.baseDomain}.`, 'ü', `${ctx.host}\r\nHost: other`, rng.nasty()];
}

function headerBlock(h: [string, string][]): string {
  return h.map(([k, v]) => `${k}: ${v}\r\n`).join('');
}

/** A request line of random parts with a few plausible headers. */
function brokenRequestLine(ctx: FuzzContext, rng: Rng): RawCase {
  const line = `${rng.pick(METHODS)} ${rng.pick(targets(ctx, rng))} ${rng.pick(VERSIONS)}`;
  const headers: [string, string][] = [];
  if (rng.chance(0.8)) headers.push(['Host', rng.pick(hosts(ctx, rng))]);
  if (rng.chance(0.3)) headers.push(['Content-Length', String(rng.int(0, 100))]);
  const body = rng.chance(0.3) ? rng.bytes(rng.int(0, 100)) : Buffer.alloc(0);
  return { kind: 'raw', pieces: [`${line}\r\n${headerBlock(headers)}\r\n`, body], close: rng.pick(['end', 'keep', 'keep'] as const), timeoutMs: 1500 };
}

/** Header-level abuse around an otherwise plausible (sometimes validly signed) request. */
function headerAbuse(ctx: FuzzContext, rng: Rng): RawCase {
  const toPlay = rng.chance(0.5);
  const key = toPlay ? `raw/${rng.int(0, 20)}` : rng.pick(ctx.knownKeys);
  const method = toPlay ? rng.pick(['PUT', 'POST', 'GET']) : rng.pick(['GET', 'HEAD']);
  const body = method === 'GET' || method === 'HEAD' ? Buffer.alloc(0) : rng.bytes(rng.size(4096));
  const signed = signV4({
    method,
    path: `/${toPlay ? ctx.playBucket : ctx.knownBucket}/${key}`,
    ...(method === 'POST' ? { query: { uploads: '' } } : {}),
    ...(body.length ? { body } : {}),
    host: ctx.host,
    credentials: ctx.credentials,
    region: ctx.region,
  });
  const h: [string, string][] = Object.entries(signed.headers);
  const n = rng.int(1, 3);
  let payload: Buffer = body;
  for (let i = 0; i < n; i++) {
    rng.pick<() => void>([
      () => h.push(['Content-Length', String(body.length)]),
      () => h.push(['Content-Length', String(body.length + rng.int(1, 10))]),
      () => h.push(['Transfer-Encoding', 'chunked']),
      () => {
        h.push(['Transfer-Encoding', rng.pick(['chunked', 'gzip', 'chunked, chunked', 'gzip, chunked', 'identity', 'x'])]);
        const cut = rng.int(0, payload.length);
        payload = Buffer.concat([Buffer.from(`${rng.pick([cut.toString(16), 'zz', '-1', 'fffffffffffffffff', ''])}\r\n`), payload.subarray(0, cut), Buffer.from(rng.pick(['\r\n0\r\n\r\n', '\r\n', '', '0\r\n']))]);
      },
      () => h.push(['Transfer-Encoding ', 'chunked']),
      () => h.push(['X-No-Colon', '']),
      () => h.push([' folded', 'continuation']),
      () => h.push([rng.pick(['Bad Name', 'Bad\x00Name', 'Ü', '(x)', '']), 'v']),
      () => h.push([`x-amz-meta-${rng.text(4)}`, 'v'.repeat(rng.pick([8 * 1024, 20 * 1024, 70 * 1024]))]),
      () => {
        for (let k = rng.int(50, 2500); k > 0; k--) h.push([`x-h${k}`, 'v']);
      },
      () => h.push(['x-value', `a\x00b${rng.bytes(4).toString('latin1')}`]),
      () => h.push(['Content-Length', rng.pick(['+5', '0x10', ' 5 ', '5, 5', '1e3', '-0', '18446744073709551616'])]),
      () => h.push(['Expect', rng.pick(['100-continue', '200-ok', ''])]),
      () => h.push(['Connection', 'Upgrade'], ['Upgrade', rng.pick(['h2c', 'websocket', 'x'])]),
      () => h.push(['Host', rng.pick(hosts(ctx, rng))]),
      () => h.push(['Authorization', rng.pick([signed.headers.authorization!, 'AWS4-HMAC-SHA256', rng.nasty()])]),
      () => h.splice(rng.int(0, h.length - 1), 1),
    ])();
  }
  const close = rng.pick(['end', 'keep', 'keep', 'destroy'] as const);
  return { kind: 'raw', pieces: [`${method} ${signed.target} HTTP/1.1\r\n${headerBlock(h)}\r\n`, payload], close, timeoutMs: 2000, head: method === 'HEAD' };
}

/** A validly signed upload whose body stops short of its Content-Length; the client leaves. */
function lyingLength(ctx: FuzzContext, rng: Rng): RawCase {
  const size = rng.pick([rng.size(64 * 1024), 300 * 1024, 600 * 1024, rng.size(20 * 1024 * 1024)]);
  const body = rng.bytes(size);
  const unsigned = rng.chance(0.5);
  const multipart = ctx.uploads.length > 0 && rng.chance(0.3) ? rng.pick(ctx.uploads) : undefined;
  const signed = signV4({
    method: 'PUT',
    path: `/${ctx.playBucket}/${multipart ? multipart.key : `short/${rng.int(0, 50)}`}`,
    ...(multipart ? { query: { partNumber: String(rng.int(1, 3)), uploadId: multipart.uploadId } } : {}),
    body,
    ...(unsigned ? { payloadHash: 'UNSIGNED-PAYLOAD' } : {}),
    host: ctx.host,
    credentials: ctx.credentials,
    region: ctx.region,
  });
  const sent = rng.int(0, Math.max(0, size - 1));
  return {
    kind: 'raw',
    pieces: [requestHead(signed), body.subarray(0, sent)],
    close: rng.pick(['end', 'destroy', 'keep'] as const),
    timeoutMs: 400,
  };
}

/** Several requests in one write, some of them broken. */
function pipelined(ctx: FuzzContext, rng: Rng): RawCase {
  const parts: string[] = [];
  for (let i = rng.int(2, 5); i > 0; i--) {
    const s = signV4({
      method: rng.pick(['GET', 'HEAD']),
      path: `/${ctx.knownBucket}/${rng.pick(ctx.knownKeys)}`,
      host: ctx.host,
      credentials: ctx.credentials,
      region: ctx.region,
    });
    parts.push(rng.chance(0.2) ? requestHead(s).replace('HTTP/1.1', 'HTTP/9') : requestHead(s));
  }
  return { kind: 'raw', pieces: [parts.join('')], close: 'keep', timeoutMs: 1500, head: parts[0]!.startsWith('HEAD') };
}

/** Random bytes, sometimes after a valid request line. */
function noise(ctx: FuzzContext, rng: Rng): RawCase {
  const prefix = rng.chance(0.5) ? `PUT /${ctx.playBucket}/noise HTTP/1.1\r\nHost: ${ctx.host}\r\n` : '';
  return { kind: 'raw', pieces: [prefix, rng.bytes(rng.size(8192))], close: rng.pick(['end', 'destroy', 'keep'] as const), timeoutMs: 800 };
}

/** A valid request trickled out in small pieces. */
function trickle(ctx: FuzzContext, rng: Rng): RawCase {
  const s = signV4({ method: 'GET', path: `/${ctx.knownBucket}/${rng.pick(ctx.knownKeys)}`, host: ctx.host, credentials: ctx.credentials, region: ctx.region });
  const text = requestHead(s);
  const pieces: string[] = [];
  for (let i = 0; i < text.length; ) {
    const n = rng.int(1, 80);
    pieces.push(text.slice(i, i + n));
    i += n;
  }
  return { kind: 'raw', pieces, close: 'keep', timeoutMs: 3000, gapMs: 2 };
}

/** GETs of large objects (sometimes pipelined, sometimes ranged), the client gone mid-body. */
function downloadAbort(ctx: FuzzContext, rng: Rng): RawCase {
  const big = ctx.knownKeys.filter((k) => /carrier|packed|multipart/.test(k));
  let text = '';
  for (let i = rng.pick([1, 1, 2, 5]); i > 0; i--) {
    const range: Record<string, string> = rng.chance(0.3) ? { range: `bytes=${rng.int(0, 100_000)}-` } : {};
    text += requestHead(signV4({ method: 'GET', path: `/${ctx.knownBucket}/${rng.pick(big)}`, headers: range, host: ctx.host, credentials: ctx.credentials, region: ctx.region }));
  }
  return { kind: 'raw', pieces: [text], close: 'destroy', timeoutMs: 2000, lingerMs: rng.int(0, 60) };
}

/** One HTTP-level case. */
export function httpLevelCase(ctx: FuzzContext, rng: Rng): FuzzCase {
  const [family, make] = rng.weighted<[string, (c: FuzzContext, r: Rng) => RawCase]>([
    [3, ['request-line', brokenRequestLine]],
    [5, ['header-abuse', headerAbuse]],
    [3, ['lying-length', lyingLength]],
    [1, ['pipelined', pipelined]],
    [2, ['noise', noise]],
    [1, ['trickle', trickle]],
    [2, ['download-abort', downloadAbort]],
  ]);
  return { ...make(ctx, rng), family };
}
