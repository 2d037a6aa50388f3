// The reference chapter's wire examples are what they say they are: every
// JSON example in docs/reference.md passes validate with no diagnostic.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { validate } from "../pkg/dist/index.mjs";

const chapter = readFileSync(new URL("../docs/reference.md", import.meta.url), "utf8");
const examples = [...chapter.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1]));

test("the chapter has wire examples", () => assert.ok(examples.length >= 3));

examples.forEach((example, index) => {
  test(`example ${index + 1} (${example.method ?? "a response"}) is valid and clean`, () => {
    assert.deepEqual(validate(example), { valid: true, diagnostics: [] });
  });
});
