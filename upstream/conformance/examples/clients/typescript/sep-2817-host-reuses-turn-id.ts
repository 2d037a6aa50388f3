#!/usr/bin/env node

import { runAsCli } from './helpers/cliRunner';
import { runScriptedHost } from './helpers/scriptedHost';

/**
 * Non-compliant Host for sep-2817-client-audit-context: it sends one turnId
 * with every user turn, so a turnId no longer groups the requests of one
 * turn. The scenario's sep-2817-client-turn-id-per-turn check should emit
 * WARNING against it; every other check passes.
 */
export async function runClient(serverUrl: string): Promise<void> {
  await runScriptedHost(serverUrl, { reuseTurnId: true });
}

runAsCli(
  runClient,
  import.meta.url,
  'sep-2817-host-reuses-turn-id <server-url>'
);
