/**
 * @module Headless Chromium for tests, driven by playwright-core.
 *
 * The browser is the one the `@sparticuz/chromium` devDependency ships inside its npm tarball
 * (see npm-chromium.ts), on every machine: `npm install` alone brings it, so a fresh machine
 * and CI run the very same binary and CI proves what a new contributor gets. Debian's
 * chromium is not preferred when present because its version moves with apt and its presence
 * would change what the suite tests from machine to machine. CHROMIUM_PATH, when set, names
 * another Chromium or Chrome binary to use instead (e.g. /usr/bin/chromium, or a browser for
 * a platform the npm build does not cover).
 *
 * The flags keep the browser off the network this machine does not have.
 */
import { chromium, type Browser } from 'playwright-core';
import { unpackNpmChromium } from './npm-chromium.js';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Containers often give /dev/shm only 64 MiB, which a renderer can exhaust; /tmp has room.
  '--disable-dev-shm-usage',
];

export interface ChromiumChoice {
  /** 'npm' for the @sparticuz/chromium build, 'CHROMIUM_PATH' for the override. */
  source: 'npm' | 'CHROMIUM_PATH';
  executablePath: string;
  /** The environment the browser process gets (the bundled libraries on LD_LIBRARY_PATH). */
  env: Record<string, string>;
}

/**
 * Which browser launchChromium starts, unpacking the npm one on first use (see
 * {@link unpackNpmChromium} for what that writes and throws). Does not start anything.
 */
export async function chooseChromium(): Promise<ChromiumChoice> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  const override = process.env.CHROMIUM_PATH;
  if (override) return { source: 'CHROMIUM_PATH', executablePath: override, env };
  const npm = await unpackNpmChromium();
  const inherited = env.LD_LIBRARY_PATH;
  env.LD_LIBRARY_PATH = inherited ? `${npm.libraryPath}:${inherited}` : npm.libraryPath;
  return { source: 'npm', executablePath: npm.executablePath, env };
}

/**
 * Starts a headless Chromium (see the module header for which one). The caller closes it.
 * Throws when the browser cannot be found, unpacked or started.
 */
export async function launchChromium(): Promise<Browser> {
  const choice = await chooseChromium();
  return chromium.launch({ executablePath: choice.executablePath, env: choice.env, args: ARGS });
}
