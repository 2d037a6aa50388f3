// Bundles what examples/browser needs from the MCP packages into
// examples/browser/vendor/: the host side (AppBridge, the SDK's client and
// server) with esbuild, and ext-apps' own self-contained App build for the View.

import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { build } from "esbuild";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const vendor = join(root, "examples", "browser", "vendor");
mkdirSync(vendor, { recursive: true });
await build({
  entryPoints: [join(root, "examples", "browser", "apps-deps.mjs")],
  outfile: join(vendor, "apps-host.js"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  logLevel: "warning",
});
copyFileSync(join(root, "node_modules", "@modelcontextprotocol", "ext-apps", "dist", "src", "app-with-deps.js"), join(vendor, "app-with-deps.js"));
console.log("examples/browser/vendor: apps-host.js, app-with-deps.js");
