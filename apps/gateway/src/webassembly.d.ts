// Node 20 has the WebAssembly global, but @types/node 20 does not declare it (TypeScript's lib.dom
// does, which no Node project here loads): the subset wasm-json-rewriter.ts uses.
declare namespace WebAssembly {
  class Module {
    constructor(bytes: Uint8Array);
  }
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, unknown>>);
    readonly exports: Record<string, unknown>;
  }
  class Memory {
    readonly buffer: ArrayBuffer;
    grow(pages: number): number;
  }
}
