// Small HTTP helpers the prototype's processes share.
import { spawn } from "node:child_process";

/** How many bytes of request body the prototype's servers read, unless told otherwise (nginx's default). */
export const MAX_BODY_BYTES = 1 << 20;

/**
 * The whole body of an incoming request, as text; rejects with a `RangeError`
 * whose code is "body-too-large" once it passes `limit` bytes (by its
 * Content-Length or as it arrives). The rest of the body is then read and
 * dropped, so the 413 answer can still reach the client.
 */
export function readBody(req, limit = Infinity) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    const tooLarge = () => {
      chunks.length = 0;
      req.removeAllListeners("data").resume();
      reject(Object.assign(new RangeError(`the body is larger than ${limit} bytes`), { code: "body-too-large" }));
    };
    if (Number(req.headers["content-length"]) > limit) return tooLarge();
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > limit) tooLarge();
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/**
 * Starts `node script ...args` and resolves with the URL it prints as
 * "listening on <url>", and the child to stop later.
 */
export function start(script, args = [], env = {}) {
  const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stdout.on("data", (chunk) => {
      seen += chunk;
      const match = /listening on (\S+)/.exec(seen);
      if (match) resolve({ url: match[1], child });
    });
    child.on("exit", (code) => reject(new Error(`${script} exited with ${code} before listening`)));
  });
}

/** Stops a child started with `start` and waits for it to exit. */
export function stop(child) {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", resolve);
    child.kill("SIGTERM");
  });
}
