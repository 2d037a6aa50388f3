// The baseline `mcp-provenance check` is measured against in Node (issue 43:
// npm check at least 1.5× its throughput): a loop that only `JSON.parse`s
// each line of a capture, read as the npm command reads it (pieces of 256
// KiB into one buffer, a line that goes on into the next piece held), and
// prints how many lines held JSON. bench/check.mjs runs it beside the two
// commands.
//   node bench/parse-loop.mjs <capture.jsonl>
import { open } from "node:fs/promises";

const PIECE = 1 << 18;
const file = await open(process.argv[2]);
const buffer = Buffer.allocUnsafe(PIECE);
/** The start of the line the last piece ended in, its bytes (a character may be cut), piece by piece. */
let held = [];
let [json, other] = [0, 0];
const parse = (line) => {
  if (line.trim() === "") return;
  try {
    JSON.parse(line);
    json++;
  } catch {
    other++;
  }
};
for (;;) {
  const { bytesRead } = await file.read(buffer, 0, PIECE, null);
  if (bytesRead === 0) break;
  const piece = buffer.subarray(0, bytesRead);
  let from = 0;
  for (let end = piece.indexOf(10, from); end !== -1; end = piece.indexOf(10, from)) {
    const line = piece.subarray(from, end);
    parse((held.length === 0 ? line : Buffer.concat([...held, line])).toString("utf8"));
    held = [];
    from = end + 1;
  }
  if (from < piece.length) held.push(Buffer.from(piece.subarray(from)));
}
parse(Buffer.concat(held).toString("utf8"));
await file.close();
console.log(`${json} lines of JSON, ${other} not`);
