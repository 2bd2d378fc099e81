/** `gateway:add`, `gateway:list`, `gateway:remove`: the local registry of gateway instances. */
import { resolve } from "node:path";
import { type Command, Option } from "commander";
import type { CliContext } from "../context.ts";
import { usageError } from "../errors.ts";
import {
  addInstance,
  DEFAULT_IP,
  DEFAULT_PORT,
  DEFAULT_PREFIX,
  describeInstance,
  type Instance,
  managementBase,
  matchInstances,
  normalizePrefix,
  parseIp,
  parseLabel,
  parsePort,
} from "../instances.ts";
import { renderTable } from "../table.ts";
import { defineCommand, onAction } from "./common.ts";

/** The rows of `gateway:list`. */
export function instanceRows(instances: Instance[]): string[][] {
  return instances.map((i) => [
    i.id,
    i.gateway_id ?? "-",
    i.label,
    i.ip,
    String(i.port),
    i.prefix,
  ]);
}

/** Headers of `gateway:list` (SPEC). */
export const LIST_HEADERS = ["ID", "GATEWAY_ID", "LABEL", "IP", "PORT", "PREFIX"];

/**
 * The absolute path of `-t/--token-file`, once it is known to hold a token: a missing, unreadable
 * or empty file is refused now (exit 2) rather than at the first call (only its path is stored).
 */
async function checkTokenFile(file: string): Promise<string> {
  const path = resolve(file);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw usageError(
      `-t/--token-file: cannot read ${path}: ${(err as Error).message}; nothing was registered`,
      "Name the gateway's management token file (<state_dir>/management-token, or its " +
        "[management] token_file), or leave -t out for a gateway on this host.",
    );
  }
  if (text.trim() === "") {
    throw usageError(`-t/--token-file: ${path} is empty; nothing was registered`);
  }
  return path;
}

/** Registers the registry commands. */
export function registerRegistryCommands(program: Command, ctx: CliContext): void {
  onAction(
    defineCommand(program, "gateway:add", "Register a gateway instance (its management API)")
      .option("-i, --ip <IP>", "address of the management API", parseIp, DEFAULT_IP)
      .option("-p, --port <PORT>", "port of the management API", parsePort, DEFAULT_PORT)
      .option("-l, --label <LABEL>", "unique label (default: ip:port)", parseLabel)
      .option(
        "-x, --path-prefix <PREFIX>",
        "management path prefix",
        normalizePrefix,
        DEFAULT_PREFIX,
      )
      .option(
        "-t, --token-file <FILE>",
        "file holding the gateway's management token (default: found on this host)",
      )
      .option("--https", "the management API speaks HTTPS")
      .addOption(new Option("-k, --key <KEY>", "deprecated and ignored").hideHelp()),
    ctx,
    async (
      o: {
        ip: string;
        port: number;
        label?: string;
        pathPrefix: string;
        tokenFile?: string;
        https?: boolean;
        key?: string;
      },
    ) => {
      if (o.key !== undefined) {
        ctx.out.warn("-k/--key is deprecated and ignored: instances no longer have keys");
      }
      const tokenFile = o.tokenFile === undefined ? undefined : await checkTokenFile(o.tokenFile);
      const { instances, added } = addInstance(await ctx.instances(), {
        ip: o.ip,
        port: o.port,
        label: o.label,
        prefix: o.pathPrefix,
        token_file: tokenFile,
        https: o.https,
      });
      await ctx.saveInstances(instances);
      ctx.out.print(`Registered instance ${describeInstance(added)}: ${managementBase(added)}`);
    },
  );

  onAction(
    defineCommand(program, "gateway:list", "List the registered gateway instances"),
    ctx,
    async () => {
      const instances = await ctx.instances();
      if (instances.length === 0) {
        ctx.out.info("No gateway instance is registered. Add one with: gwcli gateway:add -p 9090");
        return;
      }
      ctx.out.print(renderTable(LIST_HEADERS, instanceRows(instances), { color: ctx.out.color }));
    },
  );

  onAction(
    defineCommand(program, "gateway:remove", "Remove a registered gateway instance")
      .addOption(new Option("--id <ID>", "instance id").conflicts(["label", "ip", "port"]))
      .addOption(
        new Option("-l, --label <LABEL>", "instance label").conflicts(["id", "ip", "port"]),
      )
      .addOption(new Option("-i, --ip <IP>", "address (requires -p)").argParser(parseIp))
      .addOption(new Option("-p, --port <PORT>", "port (requires -i)").argParser(parsePort)),
    ctx,
    async (o: { id?: string; label?: string; ip?: string; port?: number }) => {
      if (o.ip !== undefined && o.port === undefined) {
        throw usageError("option '-i, --ip <IP>' requires option '-p, --port <PORT>'");
      }
      if (o.port !== undefined && o.ip === undefined) {
        throw usageError("option '-p, --port <PORT>' requires option '-i, --ip <IP>'");
      }
      if (o.id === undefined && o.label === undefined && o.ip === undefined) {
        throw usageError("choose the instance to remove with --id, -l/--label, or -i with -p");
      }
      const instances = await ctx.instances();
      const removed = matchInstances(instances, o);
      const ids = new Set(removed.map((i) => i.id));
      await ctx.saveInstances(instances.filter((i) => !ids.has(i.id)));
      for (const i of removed) ctx.out.print(`Removed instance ${describeInstance(i)}.`);
    },
  );
}
