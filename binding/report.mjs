// What only the host module answers (binding/src/answer.rs): a report of
// `validate`, the changes of `sanitize`.

import { table } from "../table.mjs";

/** `valid:u8 diagnostics`: a report. */
export function reportOf(answer) {
  const valid = answer.u8() === 1;
  const diagnostics = [];
  for (let n = answer.u32(); n > 0; n--) {
    const code = table.codes[answer.u8()];
    const severity = table.severities[answer.u8()];
    const rule = table.rules[answer.u8()];
    diagnostics.push({ code, severity, rule, path: answer.str(), message: answer.str() });
  }
  return { valid, diagnostics };
}

/** `count:u32 (action:u8 path:str rule:u8){count}`: what `sanitize` changed. */
export function changesOf(answer) {
  const changes = [];
  for (let n = answer.u32(); n > 0; n--) {
    const action = table.actions[answer.u8()];
    const path = answer.str();
    changes.push({ action, path, rule: table.rules[answer.u8()] });
  }
  return changes;
}
