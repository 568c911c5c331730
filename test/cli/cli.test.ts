/**
 * The `strata` command line, spawned from dist/ as an operator runs it. Regressions from
 * issue 8 §7, each checked where it used to go wrong:
 *   - `serve --help` started a server and generated credentials;
 *   - `serve --prot 9001` served on 9000, `serve ../dir` served ./data;
 *   - `--pending-bytes` (now `--pending-budget`) `0|64MiB|abc` fell back to the default, a negative one refused all writes;
 *   - a port in use was found after the data directory was created and credentials printed;
 *   - `--data /proc/x` spun at 80% CPU forever;
 *   - `verify` on a missing directory created it and exited 1 (not 2);
 *   - `verify` named internal blobs, not the damaged bucket/key;
 *   - a shutdown waiting for uploads said nothing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ACCESS_KEY, CLI, METRICS_AUTH, METRICS_TOKEN, REGION, SECRET_KEY, removeDataDir } from '../integration/harness.js';
import { signV4 } from '../integration/wire.js';
import { needsRelaxedSimdFlag } from '../../src/wasm/relaxed-simd.js';
import { parseChildKey } from '../../src/provider/erasure/child-key.js';
import { createFsProvider } from '../../src/provider/fs/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'strata-cli-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
});

const CREDS_ENV = { STRATA_ACCESS_KEY: ACCESS_KEY, STRATA_SECRET_KEY: SECRET_KEY };

/** Runs the CLI to completion in `cwd` (default: a fresh empty directory). */
function run(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {}
) {
  const cwd = opts.cwd ?? mkdtempSync(join(scratch, 'cwd-'));
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...opts.env },
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 15_000,
  });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, cwd };
}

/** Starts `strata serve` and resolves once it logs `listening`. */
function serve(
  args: string[],
  env: Record<string, string> = {}
): Promise<{ child: ChildProcess; url: string; port: number; out: () => string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--host', '127.0.0.1', ...args], {
    env: { PATH: process.env.PATH ?? '', ...CREDS_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start: ${out}`)), 20_000);
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    const onData = () => {
      const m = /"msg":"listening","url":"(http[^"]+)"/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve({ child, url: m[1]!, port: Number(new URL(m[1]!).port), out: () => out });
    };
    child.stdout!.on('data', onData);
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((r) => child.once('exit', (code) => r(code)));
}

/** Every path under `dir` with its size and mtime: equal snapshots mean nothing was written. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      out.push(`${relative(dir, p)} ${st.isDirectory() ? 'dir' : st.size} ${st.mtimeMs}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** A signed request with fetch (small bodies). */
async function s3(base: string, method: string, path: string, body?: string): Promise<Response> {
  const u = new URL(base);
  const w = signV4({
    method,
    path,
    host: u.host,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
    region: REGION,
    ...(body !== undefined ? { body: Buffer.from(body) } : {}),
  });
  const { host: _h, 'content-length': _l, ...headers } = w.headers;
  return fetch(`${base}${w.target}`, { method, headers, ...(body !== undefined ? { body } : {}) });
}

describe('help, version, usage errors: nothing started, nothing written', () => {
  it('answers --help and --version on every verb without starting or creating anything', () => {
    for (const verb of ['serve', 'verify']) {
      const help = run([verb, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`usage: strata ${verb}`);
      expect(readdirSync(help.cwd)).toEqual([]); // no ./data, no credentials, no master key
      const version = run([verb, '--version']);
      expect(version.code).toBe(0);
      expect(version.stdout).toMatch(/^strata \d+\.\d+\.\d+/);
    }
    const serveHelp = run(['serve', '--port', '1', '-h']);
    expect(serveHelp.stdout).toContain('--pending-budget <size>');
    expect(serveHelp.stdout).toContain('STRATA_ACCESS_KEY');
    expect(run(['--help']).stdout).toMatch(/serve[\s\S]*verify/);
    expect(run(['--version']).code).toBe(0);
    expect(run([]).code).toBe(2);
    expect(run(['frobnicate']).code).toBe(2);
  });

  it('refuses unknown flags, stray arguments and bad values with exit 2, touching nothing', () => {
    const cases: [string[], RegExp][] = [
      [['serve', '--prot', '9001'], /unknown option --prot \(did you mean --port\?\)/],
      [['serve', '../dir'], /unexpected argument '\.\.\/dir'/],
      [['serve', '--pending-budget', '0'], /--pending-budget: 0 is out of range/],
      [['serve', '--pending-budget', 'abc'], /'abc' is not a size/],
      [['serve', '--pending-budget=-5'], /out of range/],
      [['serve', '--port', '70000'], /--port: 70000 is out of range/],
      [['serve', '--tls-cert', '/x.pem'], /--tls-cert and --tls-key go together/],
      [['verify', '--jsno'], /did you mean --json/],
      [['verify', 'a', 'b'], /unexpected argument 'b'/],
      [['verify', 'a', '--data', 'b'], /give the repository once/],
    ];
    for (const [args, re] of cases) {
      const r = run(args, { env: CREDS_ENV });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(re);
      expect(readdirSync(r.cwd), args.join(' ')).toEqual([]);
    }
  });

  it('refuses a malformed or missing master key before creating anything', () => {
    const bad = run(['serve', '--port', '0', '--data', './repo'], {
      env: { ...CREDS_ENV, STRATA_MASTER_KEY: 'not-a-key' },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/STRATA_MASTER_KEY: a master key is 32 bytes/);
    expect(readdirSync(bad.cwd)).toEqual([]);
    const missing = run(
      ['serve', '--port', '0', '--data', './repo', '--master-key-file', '/nonexistent/key'],
      { env: CREDS_ENV }
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read master key file \/nonexistent\/key/);
    expect(readdirSync(missing.cwd)).toEqual([]);
  });

  it('refuses a bad config file before creating anything', () => {
    const cwd = mkdtempSync(join(scratch, 'cwd-'));
    const cfg = join(scratch, 'typo.json');
    writeFileSync(cfg, JSON.stringify({ 'base-domian': 'x.example' }));
    const r = run(['serve', '--config', cfg], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown key 'base-domian' \(did you mean 'base-domain'\?\)/);
    expect(readdirSync(cwd)).toEqual([]);
  });
});

describe('serve', () => {
  it('finds a port in use before creating the data directory or printing credentials', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = run(['serve', '--host', '127.0.0.1', '--port', String(port), '--data', './repo']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the address is already in use`)
      );
      expect(r.stderr).not.toMatch(/access key|secret/);
      expect(readdirSync(r.cwd)).toEqual([]);
    } finally {
      blocker.close();
    }
  });

  it('fails at once on a data path that cannot be created (/proc/x used to spin forever)', () => {
    const t0 = Date.now();
    const r = run(
      [
        'serve',
        '--port',
        '0',
        '--data',
        process.platform === 'linux' ? '/proc/strata-x' : '/dev/null/x',
      ],
      { env: CREDS_ENV, timeoutMs: 10_000 }
    );
    expect(r.signal).toBeNull(); // not killed by the timeout
    expect(r.code).not.toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const file = join(scratch, 'a-file');
    writeFileSync(file, 'x');
    const notDir = run(['serve', '--port', '0', '--data', join(file, 'sub')], { env: CREDS_ENV });
    expect(notDir.code).toBe(2);
    expect(notDir.stderr).toMatch(/is not a directory/);
  });

  it('serves with --pending-budget in units and reports what a shutdown waits for', async () => {
    const data = mkdtempSync(join(scratch, 'data-'));
    const s = await serve([
      '--port',
      '0',
      '--data',
      data,
      '--pending-budget',
      '64MiB',
      '--shutdown-timeout',
      '1s',
      '--metrics-token',
      METRICS_TOKEN,
    ]);
    const metrics = await (await fetch(`${s.url}/metrics`, { headers: METRICS_AUTH })).text();
    expect(metrics).toMatch(/strata_pending_budget_bytes(\{\})? 67108864/);
    expect((await s3(s.url, 'PUT', '/slow')).status).toBe(200);
    // An upload that sends half its body and stalls.
    const w = signV4({
      method: 'PUT',
      path: '/slow/big.bin',
      host: `127.0.0.1:${s.port}`,
      headers: { 'content-length': String(4 * 2 ** 20) },
      payloadHash: 'UNSIGNED-PAYLOAD',
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
      region: REGION,
    });
    const req = request({
      host: '127.0.0.1',
      port: s.port,
      method: 'PUT',
      path: w.target,
      headers: w.headers,
    });
    const outcome = new Promise<string>((resolve) => {
      req.on('response', (res) => resolve(`status ${res.statusCode}`));
      req.on('error', (err) => resolve(`error ${(err as NodeJS.ErrnoException).code}`));
    });
    req.write(Buffer.alloc(2 * 2 ** 20));
    await new Promise((r) => setTimeout(r, 300));
    s.child.kill('SIGTERM');
    const code = await exited(s.child);
    expect(code).toBe(0);
    const out = s.out();
    expect(out).toMatch(/"msg":"shutdown waiting","requests":1,[^\n]*PUT \/slow\/big\.bin/);
    expect(out).toMatch(/"msg":"shutdown cut","requests":1,"afterMs":1000/);
    expect(out).toMatch(/"msg":"stopped"/);
    // The same progress in plain words on stderr, whatever --log says.
    expect(out).toMatch(/strata: waiting for 1 request\(s\): PUT \/slow\/big\.bin \(\d+ s, [\d.]+ MiB read\)/);
    expect(out).toMatch(/strata: cut after 1000 ms: 1 request\(s\)/);
    expect(await outcome).toMatch(/error|status 5/);
    // The lock was released: the next start on the same directory works at once.
    const again = await serve(['--port', '0', '--data', data]);
    const listed = await (await s3(again.url, 'GET', '/slow')).text();
    expect(listed).not.toContain('big.bin'); // never acknowledged, never stored
    again.child.kill('SIGTERM');
    expect(await exited(again.child)).toBe(0);
    removeDataDir(data);
  });

  it('says in its listening line which CRC32C it runs; STRATA_NATIVE_CRC32C=node-rs or 0 picks another, and all store the same bytes', async () => {
    const body = Array.from({ length: 30_000 }, (_, i) => `${i % 997},`).join('');
    // serve() passes no environment of this process on (PATH and credentials only).
    const linux = process.platform === 'linux';
    for (const [env, expected] of [
      [{}, linux ? 'aws-crt' : undefined],
      [{ STRATA_NATIVE_CRC32C: 'node-rs' }, linux ? '@node-rs/crc32' : undefined],
      [{ STRATA_NATIVE_CRC32C: '0' }, 'wasm'],
    ] as const) {
      const data = mkdtempSync(join(scratch, 'data-'));
      const s = await serve(['--port', '0', '--data', data], env);
      const line = JSON.parse(s.out().split('\n').find((l) => l.includes('"msg":"listening"'))!) as { crc32c: string };
      if (expected) expect(line.crc32c).toBe(expected);
      else expect(['aws-crt', '@node-rs/crc32', 'wasm']).toContain(line.crc32c);
      expect((await s3(s.url, 'PUT', '/bkt')).status).toBe(200);
      expect((await s3(s.url, 'PUT', '/bkt/k', body)).status).toBe(200);
      const got = await s3(s.url, 'GET', '/bkt/k');
      expect(got.status).toBe(200);
      expect(await got.text()).toBe(body);
      s.child.kill('SIGTERM');
      expect(await exited(s.child)).toBe(0);
      removeDataDir(data);
    }
  });

  it('runs the relaxed-SIMD Reed-Solomon build and says so; STRATA_RELAXED_SIMD=0 runs plain SIMD; each reads what the other wrote, degraded too', async () => {
    const needsFlag = needsRelaxedSimdFlag(process.versions.v8);
    const root = mkdtempSync(join(scratch, 'ec-'));
    const args = ['--port', '0', '--data', `${root}/disk{1...6}`, '--erasure', '4+2'];
    // 3 MiB bodies: above the 1 MiB stripe threshold, so cut into (4,2) stripes by the codec.
    const bodies = [0, 1].map((n) => Array.from({ length: 900_000 }, (_, i) => `${(i * 7 + n) % 1009},`).join('').slice(0, 3 << 20));
    for (const b of bodies) expect(b.length).toBe(3 << 20);
    for (const [n, env, expected] of [[0, {}, 'relaxed'], [1, { STRATA_RELAXED_SIMD: '0' }, needsFlag ? 'simd' : 'relaxed']] as const) {
      const s = await serve(args, env);
      const line = JSON.parse(s.out().split('\n').find((l) => l.includes('"msg":"listening"'))!) as { gf256: string };
      expect(line.gf256).toBe(expected);
      if (n === 0) expect((await s3(s.url, 'PUT', '/ecb')).status).toBe(200);
      expect((await s3(s.url, 'PUT', `/ecb/k${n}`, bodies[n])).status).toBe(200);
      for (const m of [0, 1].slice(0, n + 1)) expect(await (await s3(s.url, 'GET', `/ecb/k${m}`)).text()).toBe(bodies[m]);
      s.child.kill('SIGTERM');
      expect(await exited(s.child)).toBe(0);
    }
    // Two domains lost, each holding a data fragment of one of the two striped blobs (the
    // bodies; placement differs from run to run, and a blob whose two lost fragments are both
    // parity reads without a rebuild): every read rebuilds from parity, with the relaxed build.
    const dataOn = new Map<string, Set<string>>(); // striped blob -> domains holding a data fragment
    for (let i = 1; i <= 6; i++) {
      const fs = await createFsProvider({ dir: join(root, `disk${i}`) });
      for (const item of (await fs.list({})).items) {
        const name = parseChildKey(item.key);
        if (name?.layout !== 'striped' || name.index >= 4) continue;
        if (!dataOn.has(name.key)) dataOn.set(name.key, new Set());
        dataOn.get(name.key)!.add(`disk${i}`);
      }
    }
    expect(dataOn.size).toBe(2);
    const [a, b] = [...dataOn.values()];
    const first = [...a!][0]!;
    const second = b!.has(first) ? (first === 'disk1' ? 'disk2' : 'disk1') : [...b!][0]!;
    for (const d of [first, second]) {
      rmSync(join(root, d), { recursive: true, force: true });
      mkdirSync(join(root, d));
    }
    const s = await serve([...args, '--metrics-token', METRICS_TOKEN]);
    for (const m of [0, 1]) expect(await (await s3(s.url, 'GET', `/ecb/k${m}`)).text()).toBe(bodies[m]);
    // The reads were rebuilt from parity (not served from surviving data fragments alone).
    const metrics = await (await fetch(`${s.url}/metrics`, { headers: METRICS_AUTH })).text();
    expect(Number(/^strata_erasure_degraded_reads_total(?:\{\})? (\d+)/m.exec(metrics)?.[1] ?? 0)).toBeGreaterThanOrEqual(2);
    s.child.kill('SIGTERM');
    expect(await exited(s.child)).toBe(0);
    rmSync(root, { recursive: true, force: true });
  });

  it('exits at once on a second signal', async () => {
    const data = mkdtempSync(join(scratch, 'data-'));
    const s = await serve(['--port', '0', '--data', data, '--shutdown-timeout', '60s']);
    expect((await s3(s.url, 'PUT', '/bkt')).status).toBe(200);
    const w = signV4({
      method: 'PUT',
      path: '/bkt/k',
      host: `127.0.0.1:${s.port}`,
      headers: { 'content-length': '1000000' },
      payloadHash: 'UNSIGNED-PAYLOAD',
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
      region: REGION,
    });
    const req = request({
      host: '127.0.0.1',
      port: s.port,
      method: 'PUT',
      path: w.target,
      headers: w.headers,
    });
    req.on('error', () => undefined);
    req.write(Buffer.alloc(1000));
    await new Promise((r) => setTimeout(r, 200));
    s.child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 300));
    expect(s.child.exitCode).toBeNull(); // still waiting for the upload
    const t0 = Date.now();
    s.child.kill('SIGINT');
    expect(await exited(s.child)).toBe(130);
    expect(Date.now() - t0).toBeLessThan(5000);
    removeDataDir(data);
  });
});

describe('verify', () => {
  it('on a missing directory: exit 2, nothing created', () => {
    const r = run(['verify', 'no/such/repo']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no such directory/);
    expect(readdirSync(r.cwd)).toEqual([]);
    const env = run(['verify'], { env: { STRATA_DATA_DIR: 'elsewhere' } });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/elsewhere: no such directory/);
    expect(readdirSync(env.cwd)).toEqual([]);
  });

  it('runs beside the server without writing, and names the objects damage reaches', async () => {
    const data = mkdtempSync(join(scratch, 'data-'));
    const s = await serve(['--port', '0', '--data', data]);
    expect((await s3(s.url, 'PUT', '/photos')).status).toBe(200);
    for (const k of ['a.txt', 'b.txt', 'c.txt'])
      expect((await s3(s.url, 'PUT', `/photos/${k}`, `body of ${k} `.repeat(50))).status).toBe(200);

    const live = run(['verify', data]);
    expect(live.code).toBe(0);
    expect(live.stderr).toMatch(new RegExp(`served by pid ${s.child.pid}`));
    expect(live.stdout).toMatch(/result\s+OK/);
    // Started as `node main.js`, not through the command's shebang: serve says what is missing.
    expect(s.out()).toContain('strata: note: node was started without --initial-old-space-size=64');
    s.child.kill('SIGTERM');
    expect(await exited(s.child)).toBe(0);

    const before = snapshot(data);
    expect(run(['verify', data]).code).toBe(0);
    expect(snapshot(data)).toEqual(before); // read-only: not a byte, not a directory, no lock

    // Damage the body of photos/b.txt inside whatever blob holds it.
    const needle = Buffer.from('body of b.txt body of b.txt');
    let hit: string | undefined;
    const find = (d: string) => {
      for (const name of readdirSync(d)) {
        const p = join(d, name);
        if (statSync(p).isDirectory()) find(p);
        else if (readFileSync(p).includes(needle)) hit = p;
      }
    };
    find(join(data, 'blobs'));
    expect(hit).toBeDefined();
    const bytes = readFileSync(hit!);
    bytes[bytes.indexOf(needle) + 3] ^= 0x20;
    writeFileSync(hit!, bytes);

    const damaged = run(['verify', data]);
    expect(damaged.code).toBe(1);
    expect(damaged.stdout).toMatch(/DAMAGED/);
    expect(damaged.stdout).toMatch(/affects [^\n]*photos\/b\.txt/);
    const json = run(['verify', '--json', data]);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as { ok: boolean; problems: { affects?: string[] }[] };
    expect(report.ok).toBe(false);
    expect(report.problems.flatMap((p) => p.affects ?? [])).toContain('photos/b.txt');
    expect(existsSync(join(data, 'LOCK'))).toBe(false);
    removeDataDir(data);
  });
});
