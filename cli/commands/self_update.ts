/** `self-update`: replace this gwcli with a release, verified like `gateway:install`. */
import type { Command } from "commander";
import type { CliContext } from "../context.ts";
import { parseVersion, selfUpdate } from "../install/mod.ts";
import { confirm } from "../prompt.ts";
import { formatBytes } from "../time.ts";
import { addYesOption, defineCommand, onAction } from "./common.ts";

/** Options of `self-update`. */
interface SelfUpdateOptions {
  version: string;
  path?: string;
  allowDowngrade?: boolean;
  yes?: boolean;
}

/** Registers `self-update`. */
export function registerSelfUpdate(program: Command, ctx: CliContext): void {
  onAction(
    addYesOption(
      defineCommand(
        program,
        "self-update",
        "Replace this gwcli with a release (signed and checked like gateway:install)",
      )
        .option("--version <VERSION>", "release version", parseVersion, "latest")
        .option(
          "--path <FILE>",
          "the gwcli executable to replace (default: this one; needed when run from source)",
        )
        .option(
          "--allow-downgrade",
          "replace a newer gwcli with the older release named by --version",
        ),
      "replace without asking",
    ),
    ctx,
    async (options: SelfUpdateOptions) => {
      const ask = !options.yes && ctx.prompter.interactive;
      const result = await selfUpdate(ctx, {
        version: options.version,
        path: options.path,
        allowDowngrade: options.allowDowngrade ?? false,
        confirm: ask ? (question) => confirm(ctx.prompter, question) : undefined,
      });
      if (!result.changed) {
        ctx.out.print(`gwcli at ${result.path} is already ${result.version}; nothing to do.`);
        return;
      }
      ctx.out.print(
        `Updated gwcli ${result.from ?? "(unknown version)"} to ${result.version} at ` +
          `${result.path} (${
            formatBytes(result.archiveBytes)
          } archive, signature and checksum verified).`,
      );
    },
  );
}
