// Browsers and bundlers: the module fetched from beside this file and
// instantiated with top-level await, so a module that imports this one runs
// once the API is ready. The module imports nothing.
import { start } from "./lib/boundary.mjs";

const response = await fetch(new URL("./dist/mcp_provenance.wasm", import.meta.url));
start((await WebAssembly.instantiate(await response.arrayBuffer())).instance);

export * from "./lib/api.mjs";
