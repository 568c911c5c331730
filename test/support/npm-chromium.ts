/**
 * @module The headless Chromium that arrives through npm alone.
 *
 * The `@sparticuz/chromium` devDependency carries, inside its tarball, a brotli-compressed
 * chrome-headless-shell build for linux x64 (`bin/chromium.br`) and, in `bin/al2023.tar.br`,
 * the shared libraries it links against beyond glibc and libgcc (NSS, NSPR, expat), which a
 * bare Debian or Ubuntu lacks. Nothing is downloaded: this file only unpacks those two files,
 * once per package version, into `node_modules/.cache/strata-chromium/<version>/`, and says how
 * to start the binary (its path, and the LD_LIBRARY_PATH that finds the bundled libraries).
 *
 * Only the package's data files are used, never its JavaScript (which unpacks into a shared
 * /tmp/chromium that checkouts of different versions would fight over, without atomicity).
 * Unpacking writes into a private directory and renames it into place, so concurrent test
 * workers either win the rename or use the winner's copy; a half-unpacked binary is never
 * visible. It needs `tar` (part of every Linux base system) for the library archive.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createBrotliDecompress } from 'node:zlib';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The package's directory (a devDependency, so npm always installs it at the top level). */
export const NPM_CHROMIUM_PACKAGE = join(ROOT, 'node_modules', '@sparticuz', 'chromium');
/** Where unpacked copies live: beside node_modules' other caches, removed with it. */
export const NPM_CHROMIUM_CACHE = join(ROOT, 'node_modules', '.cache', 'strata-chromium');
/**
 * A `.partial-*` directory older than this is the leftover of a test run killed while
 * unpacking (which takes a few seconds); younger ones may belong to a live worker, ms.
 */
const STALE_PARTIAL_MS = 10 * 60_000;
/** A library the binary needs that only the bundled archive provides on a bare system. */
const PROBE_LIBRARY = 'libnss3.so';

export interface UnpackedChromium {
  /** The @sparticuz/chromium package version (the Chromium major version). */
  version: string;
  /** The chrome-headless-shell binary. */
  executablePath: string;
  /** The directory of the bundled shared libraries: prepend it to LD_LIBRARY_PATH. */
  libraryPath: string;
}

/**
 * Unpacks (first call per package version) or finds (later calls, any process) the npm
 * Chromium in `cache` (default `node_modules/.cache/strata-chromium/`). Mutates only `cache`:
 * creates `<version>/`, and removes other versions' copies and stale partial directories.
 *
 * @throws Error when the package is not installed (`npm install` was not run), when this is
 *   not linux x64 (the only build the package ships; set CHROMIUM_PATH to another browser),
 *   or when decompression or `tar` fails (the partial directory is removed).
 */
export async function unpackNpmChromium(cache = NPM_CHROMIUM_CACHE): Promise<UnpackedChromium> {
  const manifest = join(NPM_CHROMIUM_PACKAGE, 'package.json');
  if (!existsSync(manifest)) {
    throw new Error(`${NPM_CHROMIUM_PACKAGE} is missing: run npm install (it is a devDependency)`);
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `@sparticuz/chromium ships a linux x64 Chromium only (this is ${process.platform} ` +
        `${process.arch}): set CHROMIUM_PATH to a Chromium or Chrome binary`
    );
  }
  const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
  const dest = join(cache, version);
  const found = layout(version, dest);
  if (existsSync(found.executablePath)) return found;

  mkdirSync(cache, { recursive: true });
  removeLeftovers(cache, version);
  const partial = `${dest}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(partial);
  try {
    const bin = join(NPM_CHROMIUM_PACKAGE, 'bin');
    await pipeline(
      createReadStream(join(bin, 'chromium.br')),
      createBrotliDecompress(),
      createWriteStream(join(partial, 'chromium'), { mode: 0o755 })
    );
    await untarBrotli(join(bin, 'al2023.tar.br'), partial);
    if (!existsSync(join(partial, 'lib', PROBE_LIBRARY))) {
      throw new Error(`@sparticuz/chromium ${version}: al2023.tar.br lacks lib/${PROBE_LIBRARY}`);
    }
    try {
      renameSync(partial, dest);
    } catch (e) {
      // Another worker renamed its copy first: theirs is complete, use it.
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !existsSync(found.executablePath)) {
        throw e;
      }
    }
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  return found;
}

function layout(version: string, dir: string): UnpackedChromium {
  return { version, executablePath: join(dir, 'chromium'), libraryPath: join(dir, 'lib') };
}

/** Removes other versions' copies and partial directories left by killed runs. */
function removeLeftovers(cache: string, version: string): void {
  const now = Date.now();
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    const partial = name.includes('.partial-');
    if (partial ? now - statSync(path).mtimeMs > STALE_PARTIAL_MS : name !== version) {
      rmSync(path, { recursive: true, force: true });
    }
  }
}

/**
 * Extracts a .tar.br into `dir`: node:zlib decompresses it beside the output (tar would stop
 * reading a pipe at the end-of-archive marker and break the stream), then the system tar.
 */
async function untarBrotli(archive: string, dir: string): Promise<void> {
  const tarFile = join(dir, '.archive.tar');
  await pipeline(createReadStream(archive), createBrotliDecompress(), createWriteStream(tarFile));
  const tar = spawn('tar', ['-x', '-f', tarFile, '-C', dir, '--no-same-owner'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  tar.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await new Promise<number | null>((resolve, reject) => {
    tar.once('error', reject);
    tar.once('close', resolve);
  });
  if (code !== 0) throw new Error(`tar -x of ${archive} exited with ${code}: ${stderr}`);
  rmSync(tarFile);
}
