// The conformance vectors of conformance/, read once for the Node suites
// (js-tests/vectors.mjs, which runs them, also loads in the browser).
import { readFileSync, readdirSync } from "node:fs";

const dir = new URL("../conformance/", import.meta.url);

/**
 * Every vector of the core's API, with the file it comes from. The
 * `metrics` vectors (metrics.json) are a middleware's, with its metrics:
 * js-tests/http-metrics.test.mjs runs them through the middlewares.
 */
export const vectors = readdirSync(dir)
  .filter((name) => name.endsWith(".json"))
  .flatMap((name) => JSON.parse(readFileSync(new URL(name, dir), "utf8")).map((vector) => ({ ...vector, file: name })))
  .filter((vector) => vector.op !== "metrics");

/** The `metrics` vectors: exchanges through a middleware with metrics, and the samples they made grow. */
export const metricsVectors = JSON.parse(readFileSync(new URL("metrics.json", dir), "utf8"));
