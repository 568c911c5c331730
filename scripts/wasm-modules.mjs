// The AssemblyScript modules of assembly/ that scripts/build-wasm.mjs compiles into
// wasm-build/, shared with the freshness check (scripts/wasm-stamp.mjs) so both agree on what
// a module is and how it is built.

/**
 * Each module: entry file and its initial memory size in 64 KiB pages; the maximum is
 * `maxPages` when given, else the same (fixed memory). Only gf256 may grow: its resident
 * arenas (src/wasm/gf256-arena.ts) hold whole stripes in place, 1 GiB at most per instance
 * (their pool's byte budget is far lower). Flavors are the asconfig.json targets it is built
 * for; each gives wasm-build/<name>.<flavor>.wasm (and a .wat beside it).
 */
export const MODULES = [
  { name: 'gf256', entry: 'assembly/gf256/index.ts', pages: 128, maxPages: 16384, flavors: ['simd', 'scalar', 'relaxed'] },
  { name: 'checksum', entry: 'assembly/checksum/index.ts', pages: 2, flavors: ['simd', 'scalar'] },
  { name: 'pack', entry: 'assembly/pack/index.ts', pages: 8, flavors: ['simd', 'scalar'] },
];
