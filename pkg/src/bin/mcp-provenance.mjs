#!/usr/bin/env node
// The mcp-provenance command: `check` a capture of MCP traffic, `probe` a
// running MCP server. Its help, words, messages and exit codes are the
// native command's (src/bin/mcp-provenance.rs): `mcp-provenance --help`.
import { readFileSync } from "node:fs";

import { check } from "../lib/cli/check.mjs";
import { probe } from "../lib/cli/probe.mjs";
import { UsageError, usageText } from "../lib/cli/usage.mjs";

const USAGE = readFileSync(new URL("../usage.txt", import.meta.url), "utf8");
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));

const [command, ...argv] = process.argv.slice(2);
const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, progress: process.stderr.isTTY === true };
const commands = { check, probe };

try {
  if (command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(USAGE);
    process.exitCode = 0;
  } else if (command === "--version" || command === "-v") {
    process.stdout.write(`mcp-provenance ${version}\n`);
    process.exitCode = 0;
  } else if (command === undefined) {
    throw new UsageError("a command is needed");
  } else if (!Object.hasOwn(commands, command)) {
    throw new UsageError(`no such command ${command}`);
  } else {
    process.exitCode = await commands[command](argv, io);
  }
} catch (error) {
  process.exitCode = 2;
  if (error instanceof UsageError) process.stderr.write(usageText(error));
  else process.stderr.write(`mcp-provenance ${command}: ${error?.code ?? error?.name ?? "error"}: ${error?.message}\n`);
}
