/** Pieces every command shares: the global options, the action wrapper, instance selection. */
import { type Command, Option } from "commander";
import type { CliContext } from "../context.ts";
import { usageError } from "../errors.ts";
import { findInstance, type Instance } from "../instances.ts";

/** `-v` repeats: each one adds a level. */
export function increaseVerbosity(_value: string, previous: number): number {
  return previous + 1;
}

/** Adds the global `-v/--verbose` (repeatable) and `-q/--quiet` to `cmd`. */
export function addGlobalOptions(cmd: Command): Command {
  return cmd
    .option(
      "-v, --verbose",
      "more diagnostics on stderr (repeat: -vv, -vvv)",
      increaseVerbosity,
      0,
    )
    .option("-q, --quiet", "print results only, no status lines");
}

/**
 * Adds `--token-file FILE` to a command that calls the cloud: an API token instead of the login
 * (GWCLI_API_TOKEN does the same without the option).
 */
export function addCredentialOptions(cmd: Command): Command {
  return cmd.option(
    "--token-file <FILE>",
    "file holding a cloud API token (gwc_…) to use instead of the login (or set GWCLI_API_TOKEN)",
  );
}

/** Adds `-y/--yes` to a command that asks before it acts: every such command takes both. */
export function addYesOption(cmd: Command, what: string): Command {
  return cmd.option("-y, --yes", what);
}

/** Creates subcommand `name` of `program` with the global options. */
export function defineCommand(program: Command, name: string, description: string): Command {
  return addGlobalOptions(program.command(name).description(description));
}

/** The verbosity and quietness of a run: the program's options plus the subcommand's. */
export function globalLevels(cmd: Command): { verbose: number; quiet: boolean } {
  const parent = cmd.parent?.opts() ?? {};
  const own = cmd.opts();
  const verbose = (Number(parent.verbose) || 0) + (Number(own.verbose) || 0);
  const quiet = Boolean(parent.quiet || own.quiet);
  return { verbose, quiet };
}

/** Sets `action` on `cmd`, configuring the output from the global options first. */
export function onAction<O>(
  cmd: Command,
  ctx: CliContext,
  action: (options: O, args: string[]) => Promise<void> | void,
): Command {
  return cmd.action(async (...params: unknown[]) => {
    const command = params[params.length - 1] as Command;
    const { verbose, quiet } = globalLevels(command);
    if (quiet && verbose > 0) {
      throw usageError("-q/--quiet cannot be used with -v/--verbose");
    }
    ctx.out.configure(verbose, quiet);
    await action(command.opts() as O, command.args);
  });
}

/** Options that pick one instance: `--id` or `-l/--label`, mutually exclusive. */
export interface InstanceOptions {
  id?: string;
  label?: string;
}

/** Adds `--id` and `-l/--label` (mutually exclusive) to `cmd`. */
export function addInstanceOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option("--id <ID>", "instance id (see gateway:list)").conflicts("label"))
    .addOption(new Option("-l, --label <LABEL>", "instance label").conflicts("id"));
}

/** The instance that `--id`/`-l` name (or the only one registered). */
export async function selectInstance(
  ctx: CliContext,
  options: InstanceOptions,
): Promise<{ instance: Instance; instances: Instance[] }> {
  const instances = await ctx.instances();
  const instance = findInstance(instances, options);
  ctx.out.debug(
    1,
    `instance ${instance.id} '${instance.label}' at ${instance.ip}:${instance.port}`,
  );
  return { instance, instances };
}
