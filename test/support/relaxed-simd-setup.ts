// vitest setup file (vitest.config.ts): before a test file imports the wasm loader, turn on
// relaxed SIMD where this Node's V8 needs the flag, as the `strata` command does.
import '../../src/wasm/relaxed-simd.js';
