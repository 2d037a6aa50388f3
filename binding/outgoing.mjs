// The outgoing module's boundary: what a host does to the requests it sends
// (stampInitiator, clearInitiator, attachInvocation: lib/requests.mjs), in
// the module built with the crate's feature `outgoing` alone, for size, its
// bytes in dist/wasm-outgoing.mjs (see object.mjs). The `mcp-provenance/outgoing`
// entry loads it, and nothing else of the package.
import { wasm } from "../wasm-outgoing.mjs";
import * as glue from "./glue-outgoing.mjs";
import { objectModule } from "./object.mjs";

export const { call, handle, instance } = objectModule(glue, wasm);
