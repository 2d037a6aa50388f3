// Usage errors of the mcp-provenance command, printed as the native command
// prints them (src/bin/mcp-provenance.rs): one line, where to read more,
// exit code 2.

/** A usage error of the command, or of its subcommand `command`. */
export class UsageError extends Error {
  constructor(message, command) {
    super(message);
    this.command = command;
  }
}

/** What a usage error prints on standard error. */
export function usageText(error) {
  const name = error.command === undefined ? "mcp-provenance" : `mcp-provenance ${error.command}`;
  return `${name}: ${error.message}\nTry '${name} --help'.\n`;
}
