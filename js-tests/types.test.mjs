// pkg/src/index.d.ts is written by hand. These tests tie its unions of stable
// strings to the core's enums, as the module describes them
// (pkg/dist/table.mjs, from binding/src/describe.rs), and its two code unions
// to the codes the conformance vectors expect of diagnostics and of errors:
// a rule or code added, renamed or removed in Rust fails here until the
// declarations follow.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

import { table } from "../pkg/dist/table.mjs";

const declarations = readFileSync(new URL("../pkg/src/index.d.ts", import.meta.url), "utf8");

/** The string literals of a declaration: `export type Name = ...;` or a member `name: ...;`. */
function literals(pattern) {
  const found = declarations.match(pattern);
  assert.ok(found, `index.d.ts declares ${pattern}`);
  return [...found[1].matchAll(/"([^"]*)"/g)].map((match) => match[1]).sort();
}

const sorted = (values) => [...new Set(values)].sort();

const vectors = readdirSync(new URL("../conformance/", import.meta.url))
  .filter((name) => name.endsWith(".json"))
  .flatMap((name) => JSON.parse(readFileSync(new URL(`../conformance/${name}`, import.meta.url), "utf8")));

test("RuleId is every rule of the core", () => {
  assert.deepEqual(literals(/export type RuleId =([^;]*);/), sorted(table.rules));
});

test("DiagnosticCode, ErrorCode and WireCode together are every code of the core", () => {
  const declared = ["DiagnosticCode", "ErrorCode", "WireCode"].flatMap((name) => literals(new RegExp(`export type ${name} =([^;]*);`)));
  assert.deepEqual(sorted(declared), sorted(table.codes));
});

test("every code a vector expects of a diagnostic or an error is in its union", () => {
  const diagnostic = new Set(literals(/export type DiagnosticCode =([^;]*);/));
  const error = new Set(literals(/export type ErrorCode =([^;]*);/));
  let checked = 0;
  for (const { id, expect } of vectors) {
    if (typeof expect?.error?.code === "string") {
      assert.ok(error.has(expect.error.code), `${id}: ErrorCode lacks ${expect.error.code}`);
      checked++;
    }
    for (const { code } of expect?.diagnostics ?? []) {
      assert.ok(diagnostic.has(code), `${id}: DiagnosticCode lacks ${code}`);
      checked++;
    }
  }
  assert.ok(checked > 100, `${checked} codes checked`);
});

test("a diagnostic's severity and a change's action are the core's", () => {
  assert.deepEqual(literals(/readonly severity:([^;]*);/), sorted(table.severities));
  assert.deepEqual(literals(/readonly action:([^;]*);/), sorted(table.actions));
});
