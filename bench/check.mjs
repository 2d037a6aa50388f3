// `mcp-provenance check` throughput and memory, npm and native, on three
// captures of a gigabyte: typical requests and the hostile mix (a quarter of
// its messages hostile, one line in a thousand not JSON), written by
// bench/capture.mjs, and a capture that is one line of a gigabyte between
// two small ones; beside them the baseline of Node, a loop that only
// `JSON.parse`s each line (bench/parse-loop.mjs), and npm check's throughput
// as a multiple of it. Prints MB/s (the median of three runs each) and the
// peak resident memory of the runs (GNU time), and asserts only that both
// commands print the same, byte for byte.
//   make bench    (or: make build && cargo build --release --features cli && node bench/check.mjs [megabytes])
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const megabytes = process.argv[2] ?? "1024";
const root = new URL("..", import.meta.url).pathname;
const commands = {
  npm: [process.execPath, [join(root, "pkg/dist/bin/mcp-provenance.mjs")]],
  native: [join(root, "target/release/mcp-provenance"), []],
  "parse loop": [process.execPath, [join(root, "bench/parse-loop.mjs")]],
};
/** GNU time's format: the exit code is the command's, its peak resident memory (KiB) the last line of standard error. */
const PEAK = ["-q", "-f", "%M"];

/** A capture of one line of `megabytes` between two small requests, at `file`. */
function longLine(file) {
  const descriptor = openSync(file, "w");
  const piece = Buffer.alloc(1 << 20, "a");
  writeSync(descriptor, '{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{"rows":"');
  for (let i = 0; i < Number(megabytes); i++) writeSync(descriptor, piece);
  writeSync(descriptor, '"}}}\n{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
  closeSync(descriptor);
}

const dir = mkdtempSync(join(tmpdir(), "check-bench-"));
try {
  console.log(`mcp-provenance check, medians of 3 runs and their peak memory (${megabytes} MB captures):`);
  for (const [name, flags] of [["typical requests", ["--typical"]], ["the hostile mix", []], ["one long line", null]]) {
    const file = join(dir, "capture.jsonl");
    if (flags === null) longLine(file);
    else execFileSync(process.execPath, [join(root, "bench/capture.mjs"), file, megabytes, ...flags]);
    const size = statSync(file).size;
    const printed = {};
    const medians = {};
    // The loop holds a line as a string: one of a gigabyte is more than V8 makes.
    for (const [command, [bin, args]] of Object.entries(commands).filter(([command]) => flags !== null || command !== "parse loop")) {
      const times = [];
      let peak = 0;
      for (let run = 0; run < 3; run++) {
        const start = process.hrtime.bigint();
        const words = command === "parse loop" ? [file] : ["check", file];
        const { stdout, stderr, status } = spawnSync("/usr/bin/time", [...PEAK, bin, ...args, ...words], { maxBuffer: 2 ** 30 });
        times.push(Number(process.hrtime.bigint() - start) / 1e9);
        if (!(status <= 1)) throw new Error(`${command} check failed (${status})`);
        peak = Math.max(peak, Number(stderr.toString().trim().split("\n").pop()));
        printed[command] = stdout;
      }
      const median = times.sort((a, b) => a - b)[1];
      medians[command] = median;
      console.log(`  ${name}: ${command.padEnd(10)} ${median.toFixed(2)} s, ${(size / 1e6 / median).toFixed(0)} MB/s, peak ${(peak / 1024).toFixed(1)} MiB`);
    }
    if (flags !== null) console.log(`  ${name}: npm check at ${(medians["parse loop"] / medians.npm).toFixed(2)}× the throughput of the JSON.parse loop`);
    if (!printed.npm.equals(printed.native)) throw new Error(`npm and native check printed different output on ${name}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
