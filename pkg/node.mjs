// Node, imported as an ES module: ready on import (synchronous instantiation).
import "./init/node.mjs";
import { aiInvocationKey, uiKey } from "./dist/mcp_provenance.js";

export const AI_INVOCATION_KEY = aiInvocationKey();
export const UI_KEY = uiKey();
export * from "./api.mjs";
