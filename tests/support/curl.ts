/** The Debian `curl` client as a test peer. */

import { type CommandResult, runCommand } from "./process.ts";

/** Runs `curl` with `args` (no shell) and returns its exit code, stdout and stderr. */
export function curl(args: string[], timeoutMs = 120_000): Promise<CommandResult> {
  return runCommand("curl", args, { timeoutMs });
}
