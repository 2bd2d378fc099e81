/**
 * `gateway:info`, `gateway:pipelines`, `gateway:routes`, `gateway:reload`, `gateway:update`: calls of
 * a registered instance's management API.
 */
import type { Command } from "commander";
import type { CliContext } from "../context.ts";
import { CliError } from "../errors.ts";
import { describeInstance, type Instance, managementBase } from "../instances.ts";
import { errorCode, ManagementClient } from "../management_client.ts";
import { formatBytes } from "../time.ts";
import {
  addInstanceOptions,
  defineCommand,
  type InstanceOptions,
  onAction,
  selectInstance,
} from "./common.ts";
import { renderInfo, renderPipelines, renderRoutes } from "./gateway_views.ts";

/** The fix for a gateway whose cloud integration is disabled (SPEC Errors). */
export function cloudDisabledHint(instance: Instance): string {
  return "Enable it: set `[cloud] enabled = true` in the gateway's configuration, run " +
    `\`gwcli gateway:reload --id ${instance.id}\`, then \`gwcli gateway:authorize --id ${instance.id}\` again.`;
}

/** The hint for a gateway that cannot reach its cloud service. */
export const CLOUD_UNREACHABLE_HINT =
  "The gateway cannot reach the cloud service at its [cloud] url: check that address and the " +
  "gateway's network.";

/** One problem the cloud's validator found in an uploaded configuration. */
interface UploadProblem {
  path?: string;
  line?: number;
  message?: string;
}

/** `POST /{prefix}/update` and its report; shared with `gateway:authorize --update`. */
export async function uploadConfiguration(
  ctx: CliContext,
  client: ManagementClient,
): Promise<void> {
  const instance = client.instance;
  const res = await client.update();
  if (res.status === 200) {
    const body = (res.body ?? {}) as Record<string, unknown>;
    const bytes = typeof body.uploaded_bytes === "number" ? body.uploaded_bytes : undefined;
    const size = bytes === undefined
      ? "its configuration"
      : `${formatBytes(bytes)} (${bytes} bytes)`;
    ctx.out.print(
      `Uploaded ${size} of ${describeInstance(instance)}'s configuration to the cloud service.`,
    );
    const files = Array.isArray(body.files) ? body.files.map(String) : [];
    if (files.length) ctx.out.info(`Files: ${files.join(", ")}`);
    const problems = Array.isArray(body.problems) ? body.problems as UploadProblem[] : [];
    if (problems.length) {
      ctx.out.warn(
        `the cloud's validator found ${problems.length} problem(s) in the upload (stored anyway):\n` +
          problems.map((p) =>
            `  ${p.path ?? ""}${p.line ? ` (line ${p.line})` : ""}: ${p.message ?? ""}`
          ).join("\n"),
      );
    }
    return;
  }
  const what = `POST /${instance.prefix}/update`;
  switch (errorCode(res)) {
    case "not_authorized":
      throw client.failure(
        what,
        res,
        `Authorize it first: gwcli gateway:authorize --id ${instance.id}`,
      );
    case "cloud_disabled":
      throw client.failure(what, res, cloudDisabledHint(instance));
    case "no_config_file":
      throw client.failure(
        what,
        res,
        "The gateway runs its embedded default configuration: start it with --config FILE.",
      );
    case "cloud_unreachable":
      throw client.failure(what, res, CLOUD_UNREACHABLE_HINT);
    default:
      throw client.failure(what, res);
  }
}

interface ReloadProblem {
  file?: string;
  line?: number;
  path?: string;
  message?: string;
}

/** Registers the management API commands. */
export function registerGatewayApiCommands(program: Command, ctx: CliContext): void {
  const client = async (options: InstanceOptions) =>
    new ManagementClient(ctx.http, (await selectInstance(ctx, options)).instance, ctx.env);

  onAction(
    addInstanceOptions(defineCommand(program, "gateway:info", "Show an instance's information")),
    ctx,
    async (options: InstanceOptions) => {
      const c = await client(options);
      const info = await c.info();
      const where = `${describeInstance(c.instance)} ${managementBase(c.instance)}`;
      ctx.out.print(renderInfo(info, where, { color: ctx.out.color }));
    },
  );

  onAction(
    addInstanceOptions(
      defineCommand(program, "gateway:pipelines", "Show an instance's pipelines"),
    ),
    ctx,
    async (options: InstanceOptions) => {
      const body = await (await client(options)).pipelines();
      if (!Array.isArray(body.pipelines) || body.pipelines.length === 0) {
        ctx.out.info("The instance has no pipelines.");
        return;
      }
      ctx.out.print(renderPipelines(body, { color: ctx.out.color }));
    },
  );

  onAction(
    addInstanceOptions(
      defineCommand(program, "gateway:routes", "Show an instance's routes (table, or --json)"),
    ).option("--json", "print the raw JSON answer"),
    ctx,
    async (options: InstanceOptions & { json?: boolean }) => {
      const body = await (await client(options)).routes();
      if (options.json) {
        ctx.out.print(JSON.stringify(body, null, 2));
        return;
      }
      if (!Array.isArray(body.routes) || body.routes.length === 0) {
        ctx.out.info("The instance has no routes.");
        return;
      }
      ctx.out.print(renderRoutes(body, { color: ctx.out.color }));
    },
  );

  onAction(
    addInstanceOptions(
      defineCommand(
        program,
        "gateway:reload",
        "Reload an instance's configuration (POST /api/reload)",
      ),
    ),
    ctx,
    async (options: InstanceOptions) => {
      const c = await client(options);
      const res = await c.reload();
      const body = (res.body ?? {}) as {
        generation?: number;
        duration_ms?: number;
        errors?: ReloadProblem[];
      };
      if (res.status === 200) {
        const ms = typeof body.duration_ms === "number" ? ` in ${body.duration_ms} ms` : "";
        ctx.out.print(
          `Reloaded ${describeInstance(c.instance)}: generation ${
            body.generation ?? "?"
          } is serving${ms}.`,
        );
        return;
      }
      const problems = (body.errors ?? []).map((p) => {
        const where = [p.file, p.line].filter((x) => x !== undefined).join(":");
        return `  ${where ? `${where}: ` : ""}${p.path ? `${p.path}: ` : ""}${p.message ?? ""}`;
      });
      throw new CliError(
        `${describeInstance(c.instance)} refused the new configuration; generation ` +
          `${body.generation ?? "?"} keeps running:\n${problems.join("\n")}`,
        { hint: "Fix the configuration file, then run gateway:reload again." },
      );
    },
  );
}

/** Registers `gateway:update`. */
export function registerUpdate(program: Command, ctx: CliContext): void {
  const client = async (options: InstanceOptions) =>
    new ManagementClient(ctx.http, (await selectInstance(ctx, options)).instance, ctx.env);

  onAction(
    addInstanceOptions(
      defineCommand(
        program,
        "gateway:update",
        "Upload an instance's local configuration to the cloud service",
      ),
    ),
    ctx,
    async (options: InstanceOptions) => {
      await uploadConfiguration(ctx, await client(options));
    },
  );
}
