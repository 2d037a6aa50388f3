#!/usr/bin/env node
// The mcp-provenance command: `check` a capture of MCP traffic, `probe` a
// running MCP server. `mcp-provenance --help` says how.
import { CHECK_USAGE, UsageError, check } from "../lib/cli/check.mjs";
import { PROBE_USAGE, probe } from "../lib/cli/probe.mjs";

const USAGE = `usage: mcp-provenance <command> [options]

commands:
  check <file.jsonl | ->   check each message of a capture against every rule
  probe --url <url>        run the wire conformance scenarios against a running MCP server

${CHECK_USAGE}

${PROBE_USAGE}`;

const [command, ...argv] = process.argv.slice(2);
const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, progress: process.stderr.isTTY === true };
const commands = { check, probe };

try {
  if (command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(`${USAGE}\n`);
    process.exitCode = 0;
  } else if (!(command in commands)) {
    throw new UsageError(command === undefined ? "a command is needed" : "no such command");
  } else {
    process.exitCode = await commands[command](argv, io);
  }
} catch (error) {
  process.exitCode = 2;
  if (error instanceof UsageError) process.stderr.write(`mcp-provenance: ${error.message}\n\n${USAGE}\n`);
  else process.stderr.write(`mcp-provenance ${command}: ${error?.code ?? error?.name ?? "error"}: ${error?.message}\n`);
}
