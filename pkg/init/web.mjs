// Browsers and bundlers: instantiate the .wasm with top-level await, so the
// API is ready on import.
import init from "../dist/mcp_provenance.js";

await init({ module_or_path: new URL("../dist/mcp_provenance_bg.wasm", import.meta.url) });
