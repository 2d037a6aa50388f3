// The functions every ES module entry exports. Nothing here runs wasm at
// load: an entry computes its constants after its own initialization.
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
