/**
 * @module The only WebAssembly loader.
 *
 * Compiles each module of `wasm-build/` once per flavor, at import (top-level await),
 * and hands out instances. Flavors:
 *
 *   relaxed  SIMD plus relaxed-SIMD (only gf256 has one); the default when validate accepts
 *            it: Node 21+, Chromium 114+, and Node 20 behind --experimental-wasm-relaxed-simd,
 *            which the `strata` command sets at start (relaxed-simd.ts)
 *   simd     the default wherever `WebAssembly.validate` accepts SIMD but not relaxed SIMD
 *            (a library on Node 20, older browsers)
 *   scalar   the same kernels without SIMD; the fallback, and the twin every test runs
 *
 * Nothing here touches wasm memory: the typed boundaries next to this file
 * (gf256.ts, checksum.ts, pack.ts) own their instance's memory.
 */
import { WASM_BINARIES } from '../../wasm-build/embedded.js';

export type Flavor = 'simd' | 'scalar' | 'relaxed';
export type ModuleName = 'gf256' | 'checksum' | 'pack';

/** Order of preference when no flavor is asked for. */
const PREFERENCE: readonly Flavor[] = ['relaxed', 'simd', 'scalar'];

function decodeBase64(b64: string): Uint8Array<ArrayBuffer> {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

const compiled = new Map<string, WebAssembly.Module>();

async function compileAll(): Promise<void> {
  const jobs: Promise<void>[] = [];
  for (const [name, flavors] of Object.entries(WASM_BINARIES)) {
    for (const [flavor, b64] of Object.entries(flavors)) {
      const bytes = decodeBase64(b64);
      if (!WebAssembly.validate(bytes)) continue;
      jobs.push(
        WebAssembly.compile(bytes).then((mod) => {
          compiled.set(`${name}.${flavor}`, mod);
        })
      );
    }
  }
  await Promise.all(jobs);
}

await compileAll();

/** Flavors of `name` that this runtime accepts, best first. */
export function availableFlavors(name: ModuleName): Flavor[] {
  return PREFERENCE.filter((f) => compiled.has(`${name}.${f}`));
}

/**
 * The flavor used when the caller does not ask for one: relaxed when the runtime accepts it
 * and STRATA_WASM_FLAVOR/`globalThis.STRATA_WASM_FLAVOR` does not say otherwise, then simd,
 * then scalar.
 */
export function defaultFlavor(name: ModuleName): Flavor {
  const forced = forcedFlavor();
  const available = availableFlavors(name);
  if (forced && available.includes(forced)) return forced;
  if (forced === 'simd' && available.includes('scalar') && !available.includes('simd')) return 'scalar';
  const best = available[0];
  if (!best) throw new Error(`wasm module ${name} is not built or not valid in this runtime`);
  return best;
}

function forcedFlavor(): Flavor | undefined {
  const g = globalThis as { STRATA_WASM_FLAVOR?: string; process?: { env?: Record<string, string | undefined> } };
  const v = g.STRATA_WASM_FLAVOR ?? g.process?.env?.STRATA_WASM_FLAVOR;
  return v === 'simd' || v === 'scalar' || v === 'relaxed' ? v : undefined;
}

/**
 * A new instance of module `name` in `flavor` (default: {@link defaultFlavor}).
 * Each instance has its own memory (fixed, except gf256's, which only src/wasm/gf256-arena.ts
 * grows). Throws if the flavor is unavailable here.
 */
export function instantiate(name: ModuleName, flavor: Flavor = defaultFlavor(name)): WebAssembly.Instance {
  const mod = compiled.get(`${name}.${flavor}`);
  if (!mod) throw new Error(`wasm module ${name} has no ${flavor} build valid in this runtime`);
  const instance = new WebAssembly.Instance(mod, {
    env: {
      abort(_msg: number, _file: number, line: number, col: number): never {
        throw new Error(`wasm ${name}.${flavor} aborted at ${line}:${col}`);
      },
    },
  });
  return instance;
}
