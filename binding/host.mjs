// The host module's boundary: the object API's ops (lib/api.mjs), in the
// module built without the wire filter, its bytes in dist/wasm-host.mjs.
import { wasm } from "../wasm-host.mjs";
import { boundary } from "./boundary.mjs";
import * as glue from "./glue-host.mjs";

export const { call, instance, start } = boundary(glue, wasm);
