// Builds the DevTools extension, ready to load unpacked, in target/extension/:
// its own files from extension/, and the package's ES modules as npm ships
// them (pkg/dist, the host module inside wasm-host.mjs) in mcp-provenance/.
// Usage: node tools/build-extension.mjs (after tools/build-pkg.mjs)

import { cpSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = join(root, "target", "extension");
const dist = join(root, "pkg", "dist");
/** What the package's ES entry imports, and nothing else of dist (no CommonJS, no command). */
const MODULES = ["index.mjs", "table.mjs", "lib/api.mjs", "lib/requests.mjs", "lib/answer.mjs", "lib/boundary.mjs", "lib/object.mjs", "lib/host.mjs", "lib/held.mjs", "lib/report.mjs", "lib/glue-host.mjs", "wasm-host.mjs", "lib/writer.mjs"];

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
cpSync(join(root, "extension"), out, { recursive: true });
for (const module of MODULES) cpSync(join(dist, module), join(out, "mcp-provenance", module), { recursive: true });
console.log("target/extension: the DevTools extension, to load unpacked");
