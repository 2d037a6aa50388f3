// `mcp-provenance check` throughput, npm and native, on two captures written
// by bench/capture.mjs: typical requests, and the hostile mix (a quarter of
// its messages hostile, one line in a thousand not JSON). Prints MB/s (the
// median of three runs each) and asserts only that both commands print the
// same, byte for byte.
//   make bench    (or: make build && cargo build --release --features cli && node bench/check.mjs [megabytes])
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const megabytes = process.argv[2] ?? "256";
const root = new URL("..", import.meta.url).pathname;
const commands = {
  npm: [process.execPath, [join(root, "pkg/bin/mcp-provenance.mjs")]],
  native: [join(root, "target/release/mcp-provenance"), []],
};
const dir = mkdtempSync(join(tmpdir(), "check-bench-"));
try {
  console.log(`mcp-provenance check, medians of 3 runs (${megabytes} MB captures):`);
  for (const [name, flags] of [["typical requests", ["--typical"]], ["the hostile mix", []]]) {
    const file = join(dir, `${flags.length ? "typical" : "hostile"}.jsonl`);
    execFileSync(process.execPath, [join(root, "bench/capture.mjs"), file, megabytes, ...flags]);
    const size = statSync(file).size;
    const printed = {};
    for (const [command, [bin, args]] of Object.entries(commands)) {
      const times = [];
      for (let run = 0; run < 3; run++) {
        const start = process.hrtime.bigint();
        const { stdout, status } = spawnSync(bin, [...args, "check", file], { maxBuffer: 2 ** 30 });
        times.push(Number(process.hrtime.bigint() - start) / 1e9);
        if (status > 1 || stdout === null) throw new Error(`${command} check failed (${status})`);
        printed[command] = stdout;
      }
      const median = times.sort((a, b) => a - b)[1];
      console.log(`  ${name}: ${command.padEnd(6)} ${median.toFixed(2)} s, ${(size / 1e6 / median).toFixed(0)} MB/s`);
    }
    if (!printed.npm.equals(printed.native)) throw new Error(`npm and native check printed different output on ${name}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
