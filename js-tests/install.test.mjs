// Installing the package before it is on npm, as both READMEs say: the two
// commands, run as written (the clone's path put in for the placeholder),
// give a project that imports the package and holds no other.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import { exec, root } from "./user.mjs";

const project = mkdtempSync(join(tmpdir(), "mcp-provenance-install-"));
after(() => rmSync(project, { recursive: true, force: true }));

/** The install block of a README: its two commands, each less its comment. */
function installCommands(readme) {
  const block = readFileSync(join(root, readme), "utf8").match(/```sh\n(make pack[^]*?)```/)?.[1];
  assert.ok(block, `${readme} says how to install before publication`);
  return block.trim().split("\n").map((line) => line.replace(/\s+#.*$/, ""));
}

test("the READMEs' two commands build the tarball and install it, and nothing else comes with it", () => {
  const commands = installCommands("README.md");
  assert.deepEqual(installCommands("pkg/README.md"), commands);
  const { version } = JSON.parse(readFileSync(join(root, "pkg", "package.json"), "utf8"));
  const tarball = join(root, "target", "npm", `mcp-provenance-${version}.tgz`);
  assert.deepEqual(commands, ["make pack", `npm install /path/to/mcp-provenance/target/npm/mcp-provenance-${version}.tgz`]);

  rmSync(tarball, { force: true });
  // In the clone. The build is this run's own (make test built it): only the packing is new.
  exec("make", ["--old-file=build", "pack"], root);
  assert.ok(existsSync(tarball));

  // In a project of the user's.
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "user", private: true, type: "module" }));
  const [npm, ...args] = commands[1].replace("/path/to/mcp-provenance", root).split(" ");
  exec(npm, [...args, "--no-audit", "--no-fund"], project);
  assert.deepEqual(readdirSync(join(project, "node_modules")).filter((name) => !name.startsWith(".")), ["mcp-provenance"]);
  const out = exec("node", ["--input-type=module", "-e",
    'import { validate } from "mcp-provenance"; console.log(validate({ method: "tools/call" }).valid);'], project);
  assert.equal(out.trim(), "true");
});
