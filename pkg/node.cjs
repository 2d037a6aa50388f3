// Node, required as CommonJS: the same functions (pkg/lib bundled as
// dist/api.cjs) over the same module, ready on require.
"use strict";
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const { start, ...api } = require("./dist/api.cjs");

start(new WebAssembly.Instance(new WebAssembly.Module(readFileSync(join(__dirname, "dist", "mcp_provenance.wasm")))));

module.exports = api;
