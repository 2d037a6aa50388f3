// Node: instantiate the .wasm synchronously, so the API is ready on import.
import { readFileSync } from "node:fs";
import { initSync } from "../dist/mcp_provenance.js";

initSync({ module: readFileSync(new URL("../dist/mcp_provenance_bg.wasm", import.meta.url)) });
