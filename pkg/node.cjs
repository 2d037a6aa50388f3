// Node, required as CommonJS: wasm-bindgen's nodejs glue, which loads the
// same .wasm synchronously (see tools/build-pkg.mjs).
"use strict";
const wasm = require("./dist/cjs/mcp_provenance.js");

module.exports = {
  AI_INVOCATION_KEY: wasm.aiInvocationKey(),
  UI_KEY: wasm.uiKey(),
  attachInvocation: wasm.attachInvocation,
  auditRecord: wasm.auditRecord,
  clearInitiator: wasm.clearInitiator,
  echoTurnId: wasm.echoTurnId,
  isReservedMetaKey: wasm.isReservedMetaKey,
  isValidMetaKey: wasm.isValidMetaKey,
  liftLegacyArguments: wasm.liftLegacyArguments,
  sanitize: wasm.sanitize,
  stampInitiator: wasm.stampInitiator,
  validate: wasm.validate,
};
