// Every vector of conformance/ through the built package, under import and
// under require: the very outputs the Rust core gives natively.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import { isDeepStrictEqual } from "node:util";

import * as gateway from "../pkg/dist/gateway.mjs";
import * as esm from "../pkg/dist/index.mjs";
import * as outgoing from "../pkg/dist/outgoing.mjs";
import { vectors } from "./conformance.mjs";
import { runVector } from "./vectors.mjs";

const require = createRequire(import.meta.url);
const cjs = { ...require("../pkg/dist/index.cjs"), ...require("../pkg/dist/gateway.cjs") };

for (const [entry, api] of [["import", { ...esm, ...gateway }], ["require", cjs]]) {
  test(`all ${vectors.length} vectors give their expected output (${entry})`, () => {
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

// The outgoing entry's three calls, in their own module: the same outputs.
const OUTGOING = ["stampInitiator", "clearInitiator", "attachInvocation"];
const outgoingVectors = vectors.filter((vector) => OUTGOING.includes(vector.op));
for (const [entry, api] of [["import", outgoing], ["require", require("../pkg/dist/outgoing.cjs")]]) {
  test(`the outgoing entry's ${outgoingVectors.length} vectors give their expected output (${entry})`, () => {
    const failures = outgoingVectors.filter((vector) => !isDeepStrictEqual(runVector(api, structuredClone(vector)), vector.expect));
    assert.deepEqual(failures.map((vector) => vector.id), []);
  });
}

test("there are vectors to run", () => assert.ok(vectors.length >= 120 && outgoingVectors.length >= 20));
