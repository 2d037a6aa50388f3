// Browsers and bundlers: ready on import (top-level await; a module that imports
// this one runs after the .wasm is instantiated).
import "./init/web.mjs";
import { aiInvocationKey, uiKey } from "./dist/mcp_provenance.js";

export const AI_INVOCATION_KEY = aiInvocationKey();
export const UI_KEY = uiKey();
export * from "./api.mjs";
