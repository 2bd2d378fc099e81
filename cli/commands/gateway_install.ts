/** `gateway:install --version V -d DIR`: download and install a gateway release. */
import type { Command } from "commander";
import type { CliContext } from "../context.ts";
import {
  defaultInstallDir,
  installGateway,
  parseVersion,
  releasePlatform,
  reportInstall,
} from "../install/mod.ts";
import { defineCommand, onAction } from "./common.ts";

/** Registers `gateway:install`. */
export function registerInstall(program: Command, ctx: CliContext): void {
  onAction(
    defineCommand(
      program,
      "gateway:install",
      "Download and install the gateway release for this OS and CPU",
    )
      .option("--version <VERSION>", "release version", parseVersion, "latest")
      .option(
        "-d, --dir <DIR>",
        "install directory (default ~/.local/bin; %APPDATA%\\gwcli\\bin on Windows)",
      )
      .option(
        "--allow-downgrade",
        "replace a newer gateway in DIR with the older release named by --version",
      ),
    ctx,
    async (options: { version: string; dir?: string; allowDowngrade?: boolean }) => {
      const platform = releasePlatform(Deno.build.os, Deno.build.arch);
      const dir = options.dir ?? defaultInstallDir(platform.os, ctx.env);
      const installed = await installGateway(ctx, {
        version: options.version,
        dir,
        platform,
        allowDowngrade: options.allowDowngrade ?? false,
      });
      reportInstall(ctx, installed, dir);
    },
  );
}
