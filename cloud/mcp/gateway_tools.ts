/** A gateway's status, health and configuration versions, and TOML generated for review. */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { UserPrincipal } from "../auth/mod.ts";
import { StoreError } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { gatewayPinNote, notesOut, pinOf, pinOut, pipelinePin } from "./pins.ts";
import { addTool, READ } from "./tool.ts";

const gatewayId = z.uuid("must be a UUID").describe("Id of the gateway (list-gateways).");
const problem = z.looseObject({ path: z.string(), message: z.string() });
const tomlOut = {
  toml: z.string().nullable().describe(
    "The gateway configuration file (TOML); null when problems is not empty.",
  ),
  problems: z.array(problem).describe("Why the records do not form a valid configuration."),
  transforms: z.array(z.looseObject({ id: z.string(), file: z.string() })).describe(
    "Transform files the configuration needs under transforms_path (<id>.json).",
  ),
  skipped: z.array(z.object({ pipeline: z.string(), reason: z.string() })).describe(
    "Pipelines left out because they are not complete yet.",
  ),
};

async function ownGateway(s: Services, p: UserPrincipal, id: string) {
  const gw = await s.resources.get("gateways", p.team.id, id);
  if (!gw) throw new StoreError("not_found", "gateway not found", { field: "gateway_id" });
  return gw;
}

/** The pin of a gateway and the note that explains it (empty when it follows its records). */
async function pinAndNotes(s: Services, gw: Awaited<ReturnType<typeof ownGateway>>) {
  const pin = await pinOf(s, gw);
  return { pin, notes: pin ? [gatewayPinNote(pin)] : [] };
}

/** Registers get-gateway-status, get-gateway-config-versions and the two TOML generators. */
export function addGatewayTools(server: McpServer, s: Services): void {
  addTool(server, s, {
    name: "get-gateway-status",
    title: "Gateway status and health",
    description:
      "The derived status of a gateway (pending: never seen; online; degraded: unhealthy report or failed apply; offline: silent over 3 minutes), when it was last seen, its last health report (health, checks, uptime, per-pipeline request and error counts), and its rollback pin (pin, notes), which keeps pipeline changes from reaching it.",
    input: z.strictObject({ gateway_id: gatewayId }),
    output: z.object({
      gateway_id: z.string(),
      code: z.string(),
      status: z.enum(["pending", "online", "degraded", "offline"]),
      last_seen_at: z.string().nullable(),
      health: z.string().nullable().describe(
        "healthy, degraded or unhealthy; null before a report.",
      ),
      last_status: z.looseObject({}).nullable().describe("The last status report, or null."),
      pin: pinOut,
      notes: notesOut,
    }),
    hints: READ,
    run: async (args, p) => {
      const gw = await ownGateway(s, p, args.gateway_id);
      const v = await s.resources.gatewayView(gw);
      return {
        gateway_id: v.id,
        code: v.code,
        status: v.status,
        last_seen_at: v.last_seen_at,
        health: v.last_status?.health ?? null,
        last_status: v.last_status,
        ...await pinAndNotes(s, gw),
      };
    },
  });

  addTool(server, s, {
    name: "get-gateway-config-versions",
    title: "Gateway configuration versions",
    description:
      "The desired configuration version of a gateway (what it pulls next), the version it applied last, the outcome of its last apply (with errors), the metadata of the configuration it uploaded, and its rollback pin (pin: the version it is held at; list-gateway-config-versions has the history).",
    input: z.strictObject({ gateway_id: gatewayId }),
    output: z.object({
      gateway_id: z.string(),
      desired_version: z.number().describe("Version of the configuration generated now."),
      desired_sha256: z.string(),
      generated_at: z.string(),
      applied_version: z.number().nullable(),
      last_apply: z.looseObject({}).nullable(),
      reported_config: z.looseObject({}).nullable(),
      pin: pinOut,
      notes: notesOut,
    }),
    hints: READ,
    run: async (args, p) => {
      const gw = await ownGateway(s, p, args.gateway_id);
      const config = await s.resources.gatewayConfig(p.team.id, gw.id);
      const v = await s.resources.gatewayView(gw);
      return {
        gateway_id: gw.id,
        desired_version: config.version,
        desired_sha256: config.sha256,
        generated_at: config.generated_at,
        applied_version: v.applied_version,
        last_apply: v.last_apply,
        reported_config: v.reported_config,
        ...await pinAndNotes(s, gw),
      };
    },
  });

  addTool(server, s, {
    name: "generate-gateway-toml",
    title: "Generate a gateway's TOML",
    description:
      "The whole configuration file a gateway pulls: every complete pipeline placed on it (gateway_id), validated with the gateway's own validator; for a rolled-back gateway (pin), the pinned version's file instead. Review it before the gateway applies it.",
    input: z.strictObject({ gateway_id: gatewayId }),
    output: z.object({
      gateway_id: z.string(),
      version: z.number(),
      ...tomlOut,
      pin: pinOut,
      notes: notesOut,
    }),
    hints: READ,
    run: async (args, p) => {
      const gw = await ownGateway(s, p, args.gateway_id);
      const c = await s.resources.gatewayConfig(p.team.id, gw.id);
      return {
        gateway_id: gw.id,
        version: c.version,
        toml: c.toml,
        problems: c.problems,
        transforms: c.transforms,
        skipped: c.skipped,
        ...await pinAndNotes(s, gw),
      };
    },
  });

  addTool(server, s, {
    name: "generate-pipeline-toml",
    title: "Generate a pipeline's TOML",
    description:
      "One pipeline on its own as a gateway configuration file, for review (needs at least one endpoint and one backend; see skipped otherwise). gateway_pin and notes say when its gateway is rolled back and does not run it as generated.",
    input: z.strictObject({
      pipeline_id: z.uuid("must be a UUID").describe("Id of the pipeline (list-pipelines)."),
    }),
    output: z.object({
      pipeline_id: z.string(),
      ...tomlOut,
      gateway_pin: pinOut,
      notes: notesOut,
    }),
    hints: READ,
    run: async (args, p) => {
      const pipeline = await s.resources.get("pipelines", p.team.id, args.pipeline_id);
      if (!pipeline) {
        throw new StoreError("not_found", "pipeline not found", { field: "pipeline_id" });
      }
      const c = await s.resources.pipelineConfig(p.team.id, pipeline);
      return {
        pipeline_id: pipeline.id,
        toml: c.toml,
        problems: c.problems,
        transforms: c.transforms,
        skipped: c.skipped,
        ...await pipelinePin(s, pipeline, p.team.id),
      };
    },
  });
}
