/**
 * `gateway:set-key`, `gateway:show-key`, `gateway:delete-key`: instance keys are gone (gateways
 * authorize with machine tokens). The commands change and show nothing and say what to do instead.
 */
import type { Command } from "commander";
import type { CliContext } from "../context.ts";
import { defineCommand, onAction } from "./common.ts";

/** The guidance printed by the deprecated key commands. */
export function keyGuidance(name: string, id?: string): string {
  const target = id ? ` --id ${id}` : "";
  return `${name} is deprecated and does nothing: gateway instances no longer have keys.\n` +
    "Gateways authorize with a machine token instead:\n" +
    "  gwcli login\n" +
    `  gwcli gateway:authorize${target}\n` +
    "or, for a gateway started with GATEWAY_MACHINE_TOKEN:\n" +
    "  gwcli token:get -g <GATEWAY_CODE>";
}

/** Registers the deprecated key commands. */
export function registerDeprecatedCommands(program: Command, ctx: CliContext): void {
  const commands: [string, string, boolean][] = [
    ["gateway:set-key", "Deprecated: prints guidance, stores nothing", true],
    ["gateway:show-key", "Deprecated: prints guidance, shows nothing", false],
    ["gateway:delete-key", "Deprecated: prints guidance, deletes nothing", false],
  ];
  for (const [name, description, takesKey] of commands) {
    const cmd = defineCommand(program, name, description).option("--id <ID>", "instance id");
    if (takesKey) cmd.option("--key <KEY>", "ignored");
    onAction(cmd, ctx, (options: { id?: string }) => {
      ctx.out.stderr(`warning: ${keyGuidance(name, options.id)}\n`);
    });
  }
}
