// make bench times the package against a hand-written JS implementation of
// the same rules (bench/handwritten.mjs), which is only a fair baseline while
// it gives the package's outputs. The bench asserts that before timing; this
// test asserts it on every run of make test, so the baseline never rots.
import assert from "node:assert/strict";
import { test } from "node:test";
import { isDeepStrictEqual } from "node:util";

import * as hand from "../bench/handwritten.mjs";
import * as api from "../pkg/dist/index.mjs";
import { vectors } from "./conformance.mjs";
import { runVector } from "./vectors.mjs";

test("the hand-written baseline gives the package's output on every vector it covers", () => {
  const covered = vectors.filter((v) => ["validate", "sanitize", "stampInitiator"].includes(v.op) && v.options === undefined && (v.initiator ?? "app") === "app");
  assert.ok(covered.length > 150);
  const differ = covered.filter((v) => !isDeepStrictEqual(runVector(hand, v), runVector(api, v)));
  assert.deepEqual(differ.map((v) => v.id), []);
});
