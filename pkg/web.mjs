// Browsers and bundlers: the web glue, instantiated with top-level await
// from the .wasm beside it, so the API is ready on import.
import init, { aiInvocationKey, uiKey } from "./dist/mcp_provenance.js";

await init({ module_or_path: new URL("./dist/mcp_provenance_bg.wasm", import.meta.url) });

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
