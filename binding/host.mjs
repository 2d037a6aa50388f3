// The host module's boundary: the object API's ops (lib/api.mjs), in the
// module built with the crate's feature `host`, its bytes in
// dist/wasm-host.mjs (see object.mjs).
import { wasm } from "../wasm-host.mjs";
import * as glue from "./glue-host.mjs";
import { held } from "./held.mjs";
import { objectModule } from "./object.mjs";

export { glue };

const crossing = objectModule(glue, wasm);
export const { answer, call, guard, handle, instance, start } = crossing;
export const bind = held({ ...crossing, glue });
