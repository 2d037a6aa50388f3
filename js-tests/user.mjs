// What the tests of the package as users meet it share: a fresh project
// with the package installed from its packed tarball, and Debian's Chromium.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { chromium } from "playwright-core";

import { serve } from "../examples/browser/serve.mjs";

export const root = fileURLToPath(new URL("..", import.meta.url));

/** Runs a command; its standard output. When it fails, the error says what it printed. */
export function exec(command, args, cwd) {
  try {
    return execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (failure) {
    failure.message += `\n${failure.stdout ?? ""}${failure.stderr ?? ""}`;
    throw failure;
  }
}

/** A new project (an ES module package) in a temporary directory, with the packed package installed; its path. */
export function userProject(name) {
  const project = mkdtempSync(join(tmpdir(), `mcp-provenance-${name}-`));
  const tarball = exec("npm", ["pack", "--silent", "--pack-destination", project], join(root, "pkg")).trim().split("\n").pop();
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "user", private: true, type: "module" }));
  exec("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", join(project, tarball)], project);
  return project;
}

/**
 * The workspace's packages of `scope` (e.g. "@modelcontextprotocol") in the
 * project, as a user who installed them beside this one has them; those the
 * package's own install brought stay as they are.
 */
export function linkScope(project, scope) {
  const into = join(project, "node_modules", scope);
  mkdirSync(into, { recursive: true });
  for (const name of readdirSync(join(root, "node_modules", scope))) {
    if (!existsSync(join(into, name))) symlinkSync(join(root, "node_modules", scope, name), join(into, name));
  }
}

/** Headless Chromium, as the machine has it. */
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/**
 * Opens `page` of a browser build (served from `dir`) in Chromium: what the
 * app left on the page (`data-result` of the body), with no page error.
 */
export async function runInChromium(dir, page) {
  const server = await serve(0, dir);
  const browser = await launchChromium();
  try {
    const tab = await browser.newPage();
    const errors = [];
    tab.on("pageerror", (error) => errors.push(error.message));
    await tab.goto(`http://127.0.0.1:${server.address().port}/${page}`);
    const result = await tab.waitForSelector("body[data-result]", { state: "attached" }).then((body) => body.getAttribute("data-result"));
    assert.deepEqual(errors, []);
    return JSON.parse(result);
  } finally {
    await browser.close();
    server.close();
  }
}

/** `npx mcp-provenance ...args` in `project`: its exit code, standard output and standard error. */
export function npx(project, args, input) {
  const run = spawnSync("npx", ["--no-install", "mcp-provenance", ...args], { cwd: project, encoding: "utf8", input, timeout: 120_000, maxBuffer: 2 ** 26 });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

/** The native command (`cargo build --features cli`, into CARGO_TARGET_DIR when set), built once; its path. */
export function nativeCommand() {
  execFileSync("cargo", ["build", "--quiet", "--release", "--features", "cli", "--bin", "mcp-provenance"], { cwd: root, stdio: "inherit" });
  return resolve(root, process.env.CARGO_TARGET_DIR ?? "target", "release", "mcp-provenance");
}

/**
 * Runs `command args` in `cwd` and measures it: its exit code, standard
 * output and error, and its peak resident memory in KiB, as GNU time
 * (`make test` installs it) reads it from the kernel.
 */
export function measured(command, args, cwd) {
  const run = spawnSync("/usr/bin/time", ["-q", "-f", "\nmaxrss %M", command, ...args], { cwd, encoding: "utf8", maxBuffer: 2 ** 26 });
  const at = run.stderr.lastIndexOf("\nmaxrss ");
  return { code: run.status, out: run.stdout, err: run.stderr.slice(0, at), maxRssKib: Number(run.stderr.slice(at + 8)) };
}
