// The inputs the benchmarks share, built one way for all of them: the SEP-2817
// example request of docs/reference.md (its JSON text and the message), and
// the same request whose `arguments` hold ~0.7 MB of rows (an array of
// objects), as JSON text.

import { readFileSync } from "node:fs";

const reference = readFileSync(new URL("../docs/reference.md", import.meta.url), "utf8");
/** The SEP-2817 example request, as docs/reference.md shows it. */
export const example = reference.match(/A request a model made[^]*?```json\n([^]*?)```/)[1].trim();
/** The example, parsed. */
export const sep = JSON.parse(example);
/** 5,600 rows of an employees table. */
export const rows = Array.from({ length: 5600 }, (_, id) => ({ id, name: `Employee ${id}`, department: ["Support", "Engineering", "Sales"][id % 3], title: "Engineer", salary: 50_000 + id, active: id % 2 === 0, tags: ["a", "b"] }));
/** The example with the rows in `arguments`, as JSON text (0.69 MB). */
export const big = JSON.stringify({ ...sep, params: { ...sep.params, arguments: { ...sep.params.arguments, rows } } });
