// The conformance vectors of conformance/, read once for the Node suites
// (js-tests/vectors.mjs, which runs them, also loads in the browser).
import { readFileSync, readdirSync } from "node:fs";

const dir = new URL("../conformance/", import.meta.url);

/** Every vector, with the file it comes from. */
export const vectors = readdirSync(dir)
  .filter((name) => name.endsWith(".json"))
  .flatMap((name) => JSON.parse(readFileSync(new URL(name, dir), "utf8")).map((vector) => ({ ...vector, file: name })));
