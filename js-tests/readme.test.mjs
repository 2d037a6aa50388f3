// The package README's examples run, against the built package.
import { readFileSync } from "node:fs";
import { test } from "node:test";

const readme = readFileSync(new URL("../pkg/README.md", import.meta.url), "utf8");
const examples = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((match) => match[1]);
const entry = new URL("../pkg/index.mjs", import.meta.url).href;

test("the README has examples", (t) => t.assert.ok(examples.length >= 3));

examples.forEach((source, index) => {
  test(`README example ${index + 1} runs and its assertions hold`, async () => {
    const code = source.replaceAll('from "mcp-provenance"', `from ${JSON.stringify(entry)}`);
    const failures = [];
    const assert = console.assert;
    console.assert = (condition, ...rest) => { if (!condition) failures.push(rest.join(" ") || "an assertion"); };
    try {
      await import(`data:text/javascript,${encodeURIComponent(code)}`);
    } finally {
      console.assert = assert;
    }
    if (failures.length) throw new Error(`failed: ${failures.join(", ")}`);
  });
});
