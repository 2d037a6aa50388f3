// The `mcp-provenance/outgoing` entry: what a host does to the requests it
// sends (stampInitiator, clearInitiator, attachInvocation, and the two
// standard keys), each the same call as the main entry's, in a WebAssembly
// module that holds only what they need (dist/wasm-outgoing.mjs, built for
// size): for a front end that ships nothing else of the package.
import { table } from "./table.mjs";
import { call, handle } from "./lib/outgoing.mjs";
import { requestCalls } from "./lib/requests.mjs";

export const AI_INVOCATION_KEY = table.keys.invocation;
export const UI_KEY = table.keys.ui;

export const { stampInitiator, clearInitiator, attachInvocation } = requestCalls(call, (reads, options) => () => handle(reads, options));
