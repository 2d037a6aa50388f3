// Builds the npm package of a baseline commit, once, for bench/binding.mjs to
// measure the package before and after a change in one process:
//   target/baseline/<commit>/src        the commit's tree (git archive)
//   target/baseline/<commit>/cargo      its CARGO_TARGET_DIR
//   target/baseline/<commit>/pkg        its package (package.json, dist/, ...)
// The build is the baseline's own: the npm steps of its Makefile's `build`
// recipe, run in its tree, with the repository's node_modules linked in
// rather than installed again. Skipped when the package is there already.
//   node tools/baseline.mjs [--commit <rev>]     (make bench runs it)

import { execFileSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// The last commit before the wasm boundary's rewrite (binding/'s tape ABI to
// wasm-bindgen): the package the rewrite's every call is held to.
export const BASELINE = "7408524";

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** `--commit <rev>` of a command line, or the baseline. */
export const commitArgument = (argv) => (argv.includes("--commit") ? argv[argv.indexOf("--commit") + 1] : BASELINE);

/** The baseline's package directory (with package.json and dist/), built first when it is not there. */
export function baseline(rev = BASELINE) {
  const commit = execFileSync("git", ["-C", root, "rev-parse", "--verify", `${rev}^{commit}`], { encoding: "utf8" }).trim();
  const dir = join(root, "target", "baseline", commit);
  const pkg = join(dir, "pkg");
  // pkg/ appears by a rename once the build is done: when it is there, it is whole.
  if (existsSync(join(pkg, "dist", "index.mjs"))) return { commit, pkg };

  const tree = join(dir, "src");
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(tree, { recursive: true });
  execFileSync("sh", ["-c", `git -C "${root}" archive ${commit} | tar -x -C "${tree}"`], { stdio: "inherit" });
  symlinkSync(join(root, "node_modules"), join(tree, "node_modules"));
  // The tree lies inside the repository, whose Cargo.toml is a workspace:
  // cargo would take the baseline's crate for a stray member of it. An empty
  // [workspace] table makes the baseline its own root (as it was in its clone).
  const manifest = join(tree, "Cargo.toml");
  if (!/^\[workspace\]/m.test(readFileSync(manifest, "utf8"))) appendFileSync(manifest, "\n[workspace]\n");

  // The npm steps of the baseline Makefile's `build:` (its build-browser and
  // build-extension steps that follow are not the package), as of its era.
  const cargoTarget = join(dir, "cargo");
  const run = (bin, args) => execFileSync(bin, args, { cwd: tree, stdio: "inherit", env: { ...process.env, CARGO_TARGET_DIR: cargoTarget } });
  const cargo = process.env.CARGO || "cargo";
  const wasm = (name) => join(cargoTarget, "wasm32-unknown-unknown", "release", name);
  if (existsSync(join(tree, "binding", "Cargo.toml"))) {
    // Since the binding crate (wasm-bindgen): a module for the host entry and one for the filter's,
    //   $(CARGO) build -p mcp-provenance-wasm --lib --target $(WASM_TARGET) --release --no-default-features --features host
    //   wasm-bindgen $(BINDGEN_FLAGS) --out-dir $(BINDGEN)/host $(WASM)   (and the same for filter)
    //   node tools/build-pkg.mjs $(BINDGEN)/host $(BINDGEN)/filter
    // Since the outgoing module, a third, built with the profile `size`:
    //   $(CARGO) build ... --profile size --no-default-features --features outgoing
    //   node tools/build-pkg.mjs $(BINDGEN)/host $(BINDGEN)/filter $(BINDGEN)/outgoing
    const bindgen = join(dir, "wasm-bindgen");
    const outgoing = /^outgoing = /m.test(readFileSync(join(tree, "binding", "Cargo.toml"), "utf8"));
    const modules = [["host", "release"], ["filter", "release"], ...(outgoing ? [["outgoing", "size"]] : [])];
    for (const [feature, profile] of modules) {
      run(cargo, ["build", "-p", "mcp-provenance-wasm", "--lib", "--target", "wasm32-unknown-unknown", "--profile", profile, "--no-default-features", "--features", feature]);
      const built = join(cargoTarget, "wasm32-unknown-unknown", profile, "mcp_provenance_wasm.wasm");
      run("wasm-bindgen", ["--target", "web", "--experimental-reset-state-function", "--no-typescript", "--out-name", "mcp_provenance", "--out-dir", join(bindgen, feature), built]);
    }
    run(process.execPath, ["tools/build-pkg.mjs", ...modules.map(([feature]) => join(bindgen, feature))]);
  } else {
    // Before it (as of 7408524), one module:
    //   $(CARGO) build --lib --target wasm32-unknown-unknown --release --no-default-features --features npm
    //   node tools/build-pkg.mjs target/wasm32-unknown-unknown/release/mcp_provenance.wasm
    run(cargo, ["build", "--lib", "--target", "wasm32-unknown-unknown", "--release", "--no-default-features", "--features", "npm"]);
    run(process.execPath, ["tools/build-pkg.mjs", wasm("mcp_provenance.wasm")]);
  }

  // The package beside the tree, whole (its command reads ../../package.json from dist/bin/).
  rmSync(`${pkg}.partial`, { recursive: true, force: true });
  cpSync(join(tree, "pkg"), `${pkg}.partial`, { recursive: true });
  rmSync(pkg, { recursive: true, force: true });
  renameSync(`${pkg}.partial`, pkg);
  return { commit, pkg };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { commit, pkg } = baseline(commitArgument(process.argv));
  console.log(`baseline ${commit}: ${join(pkg, "dist")}`);
}
