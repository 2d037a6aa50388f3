// The fuzz targets' seed corpus: each conformance vector's input (and, for
// echoTurnId, its request), as JSON text, in fuzz/corpus/<target>/.
//
//   node fuzz/seed.mjs validate sanitize audit_record json filter
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";

const conformance = new URL("../conformance/", import.meta.url);
const seeds = readdirSync(conformance)
  .filter((name) => name.endsWith(".json"))
  .flatMap((name) => JSON.parse(readFileSync(new URL(name, conformance), "utf8")))
  .flatMap((vector) => [["", vector.input], ["-request", vector.request]].filter(([, value]) => value !== undefined)
    // A filter vector's input is a body's text already.
    .map(([suffix, value]) => [`${vector.id}${suffix}`, vector.op === "filter" && suffix === "" ? value : JSON.stringify(value)]));
for (const target of process.argv.slice(2)) {
  const dir = new URL(`corpus/${target}/`, import.meta.url);
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of seeds) writeFileSync(new URL(`seed-${name}.json`, dir), text);
}
console.log(`${seeds.length} seeds for ${process.argv.slice(2).join(", ")}`);
