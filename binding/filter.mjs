// The filter module's boundary: the wire ops (the gateway's filter and
// echo, `check`, the text shown of the wire), in the module built with them,
// its bytes in dist/wasm-filter.mjs. Only the gateway, http and the command
// import it; the object API stays in the host module (lib/host.mjs).
import { wasm } from "../wasm-filter.mjs";
import { boundary } from "./boundary.mjs";
import * as glue from "./glue-filter.mjs";

export const { call, instance, start } = boundary(glue, wasm);
