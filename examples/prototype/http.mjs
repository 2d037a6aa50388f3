// Small HTTP helpers the prototype's processes share.
import { spawn } from "node:child_process";

/** The whole body of an incoming request, as text. */
export async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
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
