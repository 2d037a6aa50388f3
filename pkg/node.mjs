// Node, imported as an ES module: the module read from disk and
// instantiated synchronously, so the API is ready on import.
import { readFileSync } from "node:fs";
import { start } from "./lib/boundary.mjs";

start(new WebAssembly.Instance(new WebAssembly.Module(readFileSync(new URL("./dist/mcp_provenance.wasm", import.meta.url)))));

export * from "./lib/api.mjs";
