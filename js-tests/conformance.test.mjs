// Every vector of conformance/ through the built package, under import and
// under require: the very outputs the Rust core gives natively.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";

import * as gateway from "../pkg/dist/gateway.mjs";
import * as esm from "../pkg/dist/index.mjs";
import { vectors as all } from "./conformance.mjs";
import { runVector, UNBOUND_OPS } from "./vectors.mjs";

const vectors = all.filter((vector) => !UNBOUND_OPS.has(vector.op));

const require = createRequire(import.meta.url);
const cjs = { ...require("../pkg/dist/index.cjs"), ...require("../pkg/dist/gateway.cjs") };

for (const [entry, api] of [["import", { ...esm, ...gateway }], ["require", cjs]]) {
  test(`all ${vectors.length} vectors give their expected output (${entry}; ${all.length - vectors.length} of unbound ops run natively)`, () => {
    const failures = vectors.flatMap((vector) => {
      const got = runVector(api, structuredClone(vector));
      try {
        assert.deepStrictEqual(got, vector.expect);
        return [];
      } catch {
        return [`${vector.id} (${vector.file})\n  expected: ${JSON.stringify(vector.expect)}\n  got:      ${JSON.stringify(got)}`];
      }
    });
    assert.equal(failures.length, 0, `${failures.length} vectors failed:\n${failures.join("\n")}`);
  });
}

test("there are vectors to run", () => assert.ok(vectors.length >= 120));
