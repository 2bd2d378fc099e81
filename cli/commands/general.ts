/** `list` (the commands) and `test-browser` (can gwcli open a browser here?). */
import type { Command } from "commander";
import type { CliContext } from "../context.ts";
import { CliError } from "../errors.ts";
import { renderColumns } from "../table.ts";
import { defineCommand, onAction } from "./common.ts";

/** Names and descriptions of `program`'s commands, in order (without commander's `help`). */
export function commandList(program: Command): string[][] {
  return program.commands
    .filter((c) => c.name() !== "help")
    .map((c) => [c.name(), c.description()]);
}

/** Registers `list` and `test-browser`. */
export function registerGeneralCommands(program: Command, ctx: CliContext): void {
  onAction(defineCommand(program, "list", "List the commands"), ctx, () => {
    ctx.out.print(renderColumns([["COMMAND", "DESCRIPTION"], ...commandList(program)]));
  });

  onAction(
    defineCommand(
      program,
      "test-browser",
      "Test that a browser can be opened here (development only)",
    ),
    ctx,
    async () => {
      const { value: apiUrl } = await ctx.apiUrl();
      const result = await ctx.openBrowser(apiUrl);
      if (!result.opened) {
        throw new CliError(`could not open a browser: ${result.reason}`, {
          hint: "Set BROWSER to your browser's command, or open URLs yourself.",
        });
      }
      ctx.out.info(`Opened ${apiUrl} in a browser (${result.command}).`);
    },
  );
}
