// Node, imported as an ES module: the web glue, instantiated synchronously
// from the .wasm beside it, so the API is ready on import.
import { readFileSync } from "node:fs";
import { aiInvocationKey, initSync, uiKey } from "./dist/mcp_provenance.js";

initSync({ module: readFileSync(new URL("./dist/mcp_provenance_bg.wasm", import.meta.url)) });

export const AI_INVOCATION_KEY = aiInvocationKey();
export const UI_KEY = uiKey();
export {
  attachInvocation,
  auditRecord,
  clearInitiator,
  echoTurnId,
  isReservedMetaKey,
  isValidMetaKey,
  liftLegacyArguments,
  sanitize,
  stampInitiator,
  validate,
} from "./dist/mcp_provenance.js";
