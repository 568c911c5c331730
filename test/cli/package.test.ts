/**
 * Packaging and process hygiene, as an operator meets them (issue 8 §7):
 *   - `npm pack` gives a tarball that installs with only the runtime dependencies in an empty
 *     directory (offline, from the npm cache: a lockfile derived from ours pins them) and whose
 *     `strata` command serves S3 — the runtime used to need the full dev install;
 *   - the package has a name of its own (`npx strata` resolved to an unrelated package);
 *   - SIGTERM to `npm start` used to leave the node server running and holding the lock; and
 *     an npm killed outright (SIGKILL: nothing can be forwarded) must not leave it either.
 * Uses dist/ as built by `npm test`'s pretest (the pack skips scripts: no rebuild here).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ACCESS_KEY, REGION, ROOT, SECRET_KEY } from '../integration/harness.js';
import { signV4 } from '../integration/wire.js';

const work = mkdtempSync(join(tmpdir(), 'strata-pack-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  // Servers orphaned by a failing run (the bug under test) must not outlive it.
  if (process.platform === 'linux')
    for (const pid of processesMentioning(work)) process.kill(pid, 'SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  optionalDependencies?: Record<string, string>;
};

/** Starts `cmd args` and resolves with the server URL once its `listening` line appears. */
function startLogged(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const child = spawn(cmd, args, {
    cwd,
    env: { ...process.env, STRATA_ACCESS_KEY: ACCESS_KEY, STRATA_SECRET_KEY: SECRET_KEY, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start: ${out}`)), 30_000);
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    child.stdout!.on('data', () => {
      const m = /"msg":"listening","url":"(http[^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  return { child, url, out: () => out };
}

/** Pids of live processes whose command line mentions `needle`. */
function processesMentioning(needle: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (cmd.includes(needle) && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z')
        found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function until(what: string, cond: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function putAndGet(base: string): Promise<string> {
  const u = new URL(base);
  const send = (method: string, path: string, body?: string) => {
    const w = signV4({
      method,
      path,
      host: u.host,
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
      region: REGION,
      ...(body ? { body: Buffer.from(body) } : {}),
    });
    const { host: _h, 'content-length': _l, ...headers } = w.headers;
    return fetch(`${base}${w.target}`, { method, headers, ...(body ? { body } : {}) });
  };
  expect((await send('PUT', '/packaged')).status).toBe(200);
  expect((await send('PUT', '/packaged/hello.txt', 'from the tarball')).status).toBe(200);
  return (await send('GET', '/packaged/hello.txt')).text();
}

describe('npm package', () => {
  it('has a name of its own and installs from its tarball with runtime dependencies only', async () => {
    expect(pkg.name).not.toBe('strata');
    expect(Object.keys(pkg.bin)).toEqual(['strata']);
    // Build-time tools are not runtime dependencies.
    for (const dev of ['assemblyscript', 'typescript', 'esbuild', 'vitest'])
      expect(pkg.dependencies[dev]).toBeUndefined();

    const packed = JSON.parse(
      execFileSync(NPM, ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
        cwd: ROOT,
        encoding: 'utf8',
      })
    ) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = packed[0]!.files.map((f) => f.path);
    expect(files).toContain(pkg.bin.strata);
    expect(files).toContain('dist/wasm-build/embedded.js');
    expect(files).toContain('dist/browser/codec.js');
    expect(
      files.filter(
        (f) =>
          /^(src|test|bench|assembly|scripts)\//.test(f) ||
          (f.endsWith('.ts') && !f.endsWith('.d.ts')) ||
          f.startsWith('dist/bench/')
      )
    ).toEqual([]);

    // An empty project whose lockfile pins the runtime dependencies as our lockfile does, so
    // `npm ci --offline` installs from the local cache (no registry needed).
    const app = join(work, 'app');
    execFileSync('mkdir', ['-p', app]);
    const tgz = readFileSync(join(work, packed[0]!.filename));
    writeFileSync(join(app, 'strata.tgz'), tgz);
    const ours = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const runtime = Object.fromEntries(
      Object.entries(ours.packages).filter(([k, v]) => k !== '' && !v.dev)
    );
    const spec = 'file:strata.tgz';
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({
        name: 'app',
        version: '1.0.0',
        private: true,
        dependencies: { [pkg.name]: spec },
      })
    );
    writeFileSync(
      join(app, 'package-lock.json'),
      JSON.stringify({
        name: 'app',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: {
          '': { name: 'app', version: '1.0.0', dependencies: { [pkg.name]: spec } },
          [`node_modules/${pkg.name}`]: {
            version: pkg.version,
            resolved: spec,
            integrity: `sha512-${createHash('sha512').update(tgz).digest('base64')}`,
            dependencies: pkg.dependencies,
            optionalDependencies: pkg.optionalDependencies,
            bin: pkg.bin,
          },
          ...runtime,
        },
      })
    );
    execFileSync(NPM, ['ci', '--omit=dev', '--offline', '--no-audit', '--no-fund'], {
      cwd: app,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const installed = readdirSync(join(app, 'node_modules')).flatMap((d) =>
      d.startsWith('@') ? readdirSync(join(app, 'node_modules', d)).map((s) => `${d}/${s}`) : [d]
    );
    // Plus the optional packages that match this machine: @node-rs/crc32's prebuilt binary (os,
    // cpu and libc as its lockfile entry says), and aws-crt (an optional dependency of ours) with
    // its own dependencies (devOptional: some are dev dependencies of ours too); those nested under
    // another package's node_modules are not listed here.
    const glibc = Boolean((process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime);
    const platform = Object.entries(runtime as Record<string, { optional?: boolean; devOptional?: boolean; os?: string[]; cpu?: string[]; libc?: string[] }>)
      .filter(([, v]) => (v.optional || v.devOptional) && (!v.os || v.os.includes(process.platform)) && (!v.cpu || v.cpu.includes(process.arch)) && (!v.libc || v.libc.includes(glibc ? 'glibc' : 'musl')))
      .map(([k]) => k.replace(/^node_modules\//, ''))
      .filter((k) => !k.includes('/node_modules/'));
    expect(platform).toContain('aws-crt');
    expect(installed.filter((d) => d !== '.bin' && d !== '.package-lock.json').sort()).toEqual(
      [pkg.name, ...Object.keys(pkg.dependencies), ...platform].sort()
    );

    const bin = join(app, 'node_modules', '.bin', 'strata');
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8' })).toContain(`(${pkg.name},`);
    const data = join(work, 'packaged-data');
    const s = startLogged(
      bin,
      ['serve', '--host', '127.0.0.1', '--port', '0', '--data', data, '--log', 'warn'],
      app
    );
    // --log warn prints no "listening" line: read the URL from the banner instead.
    const url = await Promise.race([
      s.url,
      until('banner', () => /Strata S3 server on (http\S+)/.test(s.out())).then(
        () => /Strata S3 server on (http\S+)/.exec(s.out())![1]!
      ),
    ]);
    expect(await putAndGet(url)).toBe('from the tarball');
    // The bin's shebang passes the node flags (node-flags.ts): serve notes when one is missing.
    expect(s.out()).not.toContain('node was started without');
    s.child.kill('SIGTERM');
    await new Promise((r) => s.child.once('exit', r));
    expect(s.child.exitCode).toBe(0);
  });
});

describe.runIf(process.platform === 'linux')('npm start leaves no orphan', () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`${signal} to npm start stops the server and releases the lock`, async () => {
      const data = join(work, `start-${signal}`);
      const s = startLogged(
        NPM,
        ['start', '--', '--host', '127.0.0.1', '--port', '0', '--data', data],
        ROOT
      );
      await s.url;
      expect(processesMentioning(data).length).toBeGreaterThan(0);
      expect(existsSync(join(data, 'LOCK'))).toBe(true);
      s.child.kill(signal);
      await until('the server to stop', () => processesMentioning(data).length === 0);
      await until('the lock to be released', () => !existsSync(join(data, 'LOCK')));
    });
  }
});
