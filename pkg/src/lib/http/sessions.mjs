// Witnessed sessions shared by a gateway's processes and hosts, through
// Redis (`sessions: "redis://…"`): what the core's exchange says an answer
// taught of sessions goes to Redis before the answer's head goes on, and a
// session a request names that this process has not seen issued is looked
// up there before the body is read. The core decides; this file moves keys
// (src/wire/store.rs: a key is the prefix and the SHA-256 of the session's
// id, never the id, kept a day). The npm package `redis` is an optional
// peer, loaded with the first request that needs it, and only then.
import { SESSION_STORE } from "../../gateway.mjs";

/** The most milliseconds one operation of the store may take; past it, it has not answered. */
export const SESSIONS_TIMEOUT_MS = 500;

/** The package a store is reached through, by a name a bundler leaves to the runtime (an optional peer). */
const REDIS = "redis";

/** A `RangeError` with a code, as the core's own are. */
const badOption = (message) => Object.assign(new RangeError(message), { code: "invalid-option" });

/**
 * Whether the npm package `redis` can be loaded from here, asked without
 * loading it; undefined where the runtime cannot say (it is found, or not,
 * when first used).
 */
function installed() {
  // `require.resolve` in the package's CommonJS build; the ESM build's own `import.meta.resolve`.
  const resolve = typeof require === "function" ? require.resolve : import.meta.resolve;
  if (typeof resolve !== "function") return undefined;
  try {
    resolve(REDIS);
    return true;
  } catch {
    return false;
  }
}

/**
 * The store the middleware's `sessions` option names: undefined when not
 * given; a Redis URL (`redis://`, `rediss://`), or `{ url, prefix,
 * timeoutMs }`, checked now (a `RangeError` with code `invalid-option`,
 * which never quotes the URL: it may hold a password); an `Error` with code
 * `missing-dependency` when the package `redis` is not installed. Nothing
 * connects until a request needs it.
 */
export function sessionsOf(sessions) {
  if (sessions === undefined) return undefined;
  const { url, prefix = SESSION_STORE.prefix, timeoutMs = SESSIONS_TIMEOUT_MS } = typeof sessions === "string" ? { url: sessions } : (sessions ?? {});
  let scheme;
  try {
    scheme = typeof url === "string" ? new URL(url).protocol : undefined;
  } catch {
    scheme = undefined;
  }
  if (scheme !== "redis:" && scheme !== "rediss:") throw badOption("options.sessions must be a Redis URL: redis:// or rediss://");
  if (typeof prefix !== "string") throw badOption("options.sessions.prefix must be a string");
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > 60_000) throw badOption("options.sessions.timeoutMs must be a number of milliseconds, above 0 and at most 60000");
  if (installed() === false) {
    throw Object.assign(new Error("options.sessions needs the npm package redis, an optional peer dependency of mcp-provenance: npm install redis"), { code: "missing-dependency" });
  }
  return new RedisSessions(url, prefix, timeoutMs);
}

/** `promise`, or a rejection once `ms` have passed. */
function bounded(promise, ms) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error("the session store did not answer in time"), { name: "TimeoutError" })), ms);
    timer.unref?.();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Redis, as the middleware's sessions store. Redis down or slow: the
 * witness fails closed (the record names no session its process did not
 * see issued), the request goes on as ever, and stderr says so once an
 * outage, not once a request.
 */
class RedisSessions {
  #url;
  #prefix;
  #timeoutMs;
  #client;
  #connecting;
  #down = false;

  constructor(url, prefix, timeoutMs) {
    this.#url = url;
    this.#prefix = prefix;
    this.#timeoutMs = timeoutMs;
  }

  /** Before the body is read: a session the request names, not seen issued here, witnessed when the store holds it. */
  async recall(core) {
    const key = core.unknownSession;
    if (key === undefined) return;
    const held = await this.#run((client) => client.sendCommand(["EXISTS", this.#prefix + key]));
    if (held === 1) core.issuedElsewhere();
  }

  /** Once the app's answer began, before its head goes on: what it taught of sessions, kept in the store or removed from it. */
  async learn(core) {
    const news = core.sessionNews;
    if (news === undefined) return;
    const [kind, key] = news;
    const command = kind === "issued" ? ["SET", this.#prefix + key, "1", "EX", String(SESSION_STORE.ttlSeconds)] : ["DEL", this.#prefix + key];
    await this.#run((client) => client.sendCommand(command));
  }

  /** `command(client)`, bounded; undefined when the store did not answer, said once an outage. */
  async #run(command) {
    let answer;
    try {
      const client = await this.#open();
      answer = await bounded(command(client), this.#timeoutMs);
    } catch (failure) {
      // A client whose command did not come back in time is dropped, with what waits behind it: the next request connects anew.
      if (failure?.name === "TimeoutError") this.#drop();
      if (!this.#down) {
        this.#down = true;
        const kind = failure?.code === "missing-dependency" ? "code missing-dependency" : (failure?.name ?? typeof failure);
        console.error(`mcp-provenance: the session store (Redis) does not answer (${kind}): until it does, a session is witnessed only through the process that saw the app issue it`);
      }
      return undefined;
    }
    if (this.#down) {
      this.#down = false;
      console.error("mcp-provenance: the session store (Redis) answers again");
    }
    return answer;
  }

  /**
   * The client, connected: made with the first request that needs it (the
   * package loaded then), and made again by a request after it lost its
   * connection (it does not reconnect by itself: no timer of its keeps the
   * process alive, nor a queue of commands grows while Redis is away). One
   * connection is made at a time; a request waits for it, bounded.
   */
  #open() {
    if (this.#client?.isReady) return this.#client;
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return bounded(this.#connecting, this.#timeoutMs);
  }

  /** Drops the client (its commands still waiting fail), if any. */
  #drop() {
    const client = this.#client;
    this.#client = undefined;
    try {
      client?.destroy();
    } catch {
      // Closed already.
    }
  }

  async #connect() {
    let createClient;
    try {
      ({ createClient } = await import(REDIS));
    } catch {
      throw Object.assign(new Error("the npm package redis is not installed"), { code: "missing-dependency" });
    }
    const client = createClient({
      url: this.#url,
      // A command while it is not connected fails at once; a lost connection is made again by the next request.
      disableOfflineQueue: true,
      socket: { connectTimeout: this.#timeoutMs, reconnectStrategy: false },
    });
    // Each failure is said by `#run`, once an outage.
    client.on("error", () => {});
    // Its socket does not keep the process alive.
    client.unref();
    await client.connect();
    this.#client = client;
    return client;
  }
}
