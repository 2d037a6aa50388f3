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
// Large hostile bodies, near the 1 MiB the targets take (-max_len), each of
// which once held a thread for seconds: every member of _meta compared with
// every earlier one, an envelope's unknown fields dropped one look-up at a
// time, a batch's places summed over every earlier change.
const KEY = "io.modelcontextprotocol/aiInvocation";
const many = (n, item) => Array.from({ length: n }, (_, i) => item(i)).join(",");
const call = (id, meta) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"q","_meta":{${meta}}}}`;
seeds.push(
  ["hostile-meta-members", call(1, many(45_000, (i) => `"m${i}":${i}`))],
  ["hostile-unknown-fields", call(1, `"${KEY}":{"turnId":"t",${many(20_000, (i) => `"x${i}":"v${i}"`)}}`)],
  ["hostile-batch", `[${many(900, (i) => call(i, `"${KEY}":{"turnId":"t${i}","userIntent":{"text":"i${i}"}}`))}]`],
);
for (const target of process.argv.slice(2)) {
  const dir = new URL(`corpus/${target}/`, import.meta.url);
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of seeds) writeFileSync(new URL(`seed-${name}.json`, dir), text);
}
console.log(`${seeds.length} seeds for ${process.argv.slice(2).join(", ")}`);
