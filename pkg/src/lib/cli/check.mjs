// `mcp-provenance check`: a capture (one JSON-RPC message or batch a line)
// through the core's check (src/wire/check.rs), which reads the command
// line, holds what goes on from piece to piece, runs the wire filter on each
// line's bytes and writes what to print: the native command reads and
// prints the same by construction. Streaming in pieces of the stream's own
// size, memory bounded by the longest line checked; optionally each line as
// the filter lets it go on, into another file (an empty line where it does
// not).
import { fstatSync } from "node:fs";
import { open as openFile, stat } from "node:fs/promises";
import { once } from "node:events";

import { Answer } from "../answer.mjs";
import { lineOf } from "../outcome.mjs";
import { call } from "../filter.mjs";
import { UsageError } from "./usage.mjs";

/** How much of a file is read at a time, into one buffer: what a call of the module checks. */
const PIECE = 1 << 18;

/**
 * The capture to read: `pieces`, the bytes of `file` (standard input for
 * "-") a piece at a time, each read into the same buffer once the last was
 * checked, so that nothing piles up for the collector; the file's size;
 * `id`, its device and inode when known; and `close`.
 */
async function open(file, io) {
  if (file === "-") {
    let id;
    try {
      if (io.stdin.fd !== undefined) id = identity(fstatSync(io.stdin.fd, { bigint: true }));
    } catch {
      // Not to be known: not the file --sanitize names.
    }
    return { pieces: io.stdin, total: undefined, id, close: async () => {} };
  }
  const handle = await openFile(file);
  const stats = await handle.stat({ bigint: true });
  async function* pieces() {
    const buffer = Buffer.allocUnsafe(PIECE);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, PIECE, null);
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  }
  return { pieces: pieces(), total: Number(stats.size), id: identity(stats), close: () => handle.close() };
}

/** A file's device and inode, as one string to compare. */
function identity({ dev, ino }) {
  return `${dev}:${ino}`;
}

/**
 * Whether the file at `out`, if there is one yet, is the capture `input`
 * reads: the same device and inode, so through any path or link. Not known
 * (no file there yet, or not to be read): not the capture, and opening it
 * says what is wrong.
 */
async function isInput(input, out) {
  if (input.id === undefined) return false;
  try {
    return identity(await stat(out, { bigint: true })) === input.id;
  } catch {
    return false;
  }
}

/**
 * Runs `check` with `argv` (the words after "check"); `io` holds stdin,
 * stdout, stderr (streams) and whether stderr is a terminal. The exit code.
 */
export async function check(argv, io) {
  const command = call((glue) => new glue.Check(argv.map(String)));
  if (command.help !== undefined) {
    io.stdout.write(command.help);
    return 0;
  }
  if (command.error !== undefined) throw new UsageError(command.error, "check");
  const { file, sanitize } = command;
  let input;
  try {
    input = await open(file, io);
  } catch (error) {
    io.stderr.write(`mcp-provenance check: cannot read ${file}: ${error.code ?? error.message}\n`);
    return 2;
  }
  let out;
  try {
    // Opening the capture itself to write would empty it before it is read.
    if (sanitize !== undefined && await isInput(input, sanitize)) {
      io.stderr.write(`mcp-provenance check: ${command.sameFile}\n`);
      return 2;
    }
    out = sanitize === undefined ? undefined : await openFile(sanitize, "w");
    return await run(command, input, out, io);
  } catch (error) {
    if (error.syscall === "read") io.stderr.write(`mcp-provenance check: cannot read ${file}: ${error.code}\n`);
    else if (["open", "write"].includes(error.syscall)) io.stderr.write(`mcp-provenance check: cannot write: ${error.code}\n`);
    else throw error;
    return 2;
  } finally {
    await input.close();
    await out?.close();
  }
}

/**
 * Reads `input` through the capture `command` holds (a `Check` of the
 * module: each piece's lines and counts, then the end's), printing and
 * writing `out` as it goes; the exit code.
 */
async function run(command, input, out, io) {
  const write = async (piece) => {
    if (piece.out !== "" && !io.stdout.write(piece.out)) await once(io.stdout, "drain");
    if (out && piece.sanitized.length > 0) await out.writeFile(piece.sanitized);
  };
  let read = 0;
  let shown = 0;
  let counts = { messages: 0 };
  const progress = io.progress && input.total ? setInterval(() => {
    io.stderr.write(`\r${(read / 2 ** 20).toFixed(0)} of ${(input.total / 2 ** 20).toFixed(0)} MB, ${counts.messages} messages`);
    shown = 1;
  }, 250) : undefined;
  try {
    for await (const chunk of input.pieces) {
      read += chunk.length;
      const piece = lineOf(new Answer(call(() => command.read(chunk)), 0));
      counts = piece.counts;
      await write(piece);
    }
  } finally {
    clearInterval(progress);
  }
  if (shown) io.stderr.write("\n");
  const end = lineOf(new Answer(call(() => command.end()), 0));
  await write(end);
  if (end.hint !== undefined) io.stderr.write(`mcp-provenance check: ${end.hint}\n`);
  return end.exit;
}
