#!/usr/bin/env node

import { runAsCli } from './helpers/cliRunner';
import { runScriptedHost } from './helpers/scriptedHost';

/**
 * Non-compliant Host for apps-initiator-host: it forwards the initiator a
 * View wrote as the View wrote it, and stamps "app" only on View calls that
 * carry none. The scenario's apps-initiator-host-overwrites-view-claim check
 * should emit FAILURE against it; every other check passes.
 */
export async function runClient(serverUrl: string): Promise<void> {
  await runScriptedHost(serverUrl, { forwardViewInitiator: true });
}

runAsCli(
  runClient,
  import.meta.url,
  'apps-initiator-host-forwards-view-claim <server-url>'
);
