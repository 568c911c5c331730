// Types for scripts/wasm-stamp.mjs (plain JavaScript: it runs before anything is compiled).
import type { WasmModule } from './wasm-modules.mjs';

export declare const STAMP_FILE: string;
export declare function moduleSources(root: string, entry: string): string[];
export declare function moduleHash(root: string, mod: WasmModule): string;
export declare function moduleOutputs(out: string, mod: WasmModule): string[];
export declare function readStamp(out: string): Record<string, string>;
export declare function recordStamp(out: string, name: string, hash: string | undefined): void;
export declare function staleModules(
  root: string,
  out: string,
  modules: readonly WasmModule[]
): { name: string; reason: string; hash: string }[];
