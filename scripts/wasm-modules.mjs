// The AssemblyScript modules of assembly/ that scripts/build-wasm.mjs compiles into
// wasm-build/, shared with the freshness check (scripts/wasm-stamp.mjs) so both agree on what
// a module is and how it is built.

/**
 * Each module: entry file and its fixed memory size in 64 KiB pages (initial = maximum: the
 * loader never grows memory). Flavors are the asconfig.json targets it is built for; each
 * gives wasm-build/<name>.<flavor>.wasm (and a .wat beside it).
 */
export const MODULES = [
  { name: 'gf256', entry: 'assembly/gf256/index.ts', pages: 128, flavors: ['simd', 'scalar', 'relaxed'] },
  { name: 'checksum', entry: 'assembly/checksum/index.ts', pages: 2, flavors: ['simd', 'scalar'] },
  { name: 'pack', entry: 'assembly/pack/index.ts', pages: 8, flavors: ['simd', 'scalar'] },
];
