// Types for scripts/wasm-modules.mjs.
export interface WasmModule {
  name: string;
  entry: string;
  pages: number;
  flavors: string[];
}
export declare const MODULES: WasmModule[];
