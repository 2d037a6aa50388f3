// A static file server for the repository on 127.0.0.1, so the browser page
// can load the package (module scripts do not load from file://).
//
//   node examples/browser/serve.mjs
// prints "listening on http://127.0.0.1:<port>/examples/browser/" once ready, and
// the line that imports the package from any page's console.

import { createReadStream, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const types = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".json": "application/json", ".wasm": "application/wasm" };

/** Serves `dir` (the repository by default) on 127.0.0.1 (port 0: any free one); resolves with the server. */
export function serve(port = 0, dir = root) {
  const server = createServer((req, res) => {
    const path = normalize(join(dir, decodeURIComponent(new URL(req.url, "http://x").pathname)));
    let file = path;
    try {
      if (statSync(file).isDirectory()) file = join(file, "index.html");
      if (!path.startsWith(dir) || path.split(sep).includes("node_modules") || !statSync(file).isFile()) throw new Error("not served");
    } catch {
      res.writeHead(404).end("not found");
      return;
    }
    // The View runs in a sandboxed iframe (an opaque origin): let it load its modules.
    res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream", "access-control-allow-origin": "*" });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await serve(Number(process.env.PORT ?? 0));
  const at = `http://127.0.0.1:${server.address().port}`;
  console.log(`listening on ${at}/examples/browser/`);
  console.log(`in any page's devtools console: const mcpProvenance = await import("${at}/pkg/dist/index.mjs")`);
}
