/**
 * A gateway's configuration history over MCP, as the web UI's versions page offers it: list the
 * kept versions, roll back (pin the gateway to one version's snapshot; it pulls that content as a
 * new version) and resume (unpin: it follows its pipelines again).
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { UserPrincipal } from "../auth/mod.ts";
import { StoreError } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { gatewayPinNote, notesOut, pinOf, pinOut } from "./pins.ts";
import { addTool, CHANGE, DESTROY, READ } from "./tool.ts";

const gatewayId = z.uuid("must be a UUID").describe("Id of the gateway (list-gateways).");

async function ownGateway(s: Services, p: UserPrincipal, id: string) {
  const gw = await s.resources.get("gateways", p.team.id, id);
  if (!gw) throw new StoreError("not_found", "gateway not found", { field: "gateway_id" });
  return gw;
}

const versionOut = z.object({
  version: z.number(),
  generated_at: z.string(),
  source: z.string().describe('"records", or "rollback to N" for a version made by a rollback.'),
  pipelines: z.array(z.string()).describe("Pipelines (names) in this version."),
  applied_at: z.string().nullable().describe("When the gateway reported applying it."),
  failed_at: z.string().nullable().describe("When the gateway reported failing to apply it."),
  can_roll_back: z.boolean().describe("A snapshot is kept: rollback-gateway-config can use it."),
});

/** Registers list-gateway-config-versions, rollback-gateway-config and resume-gateway-config. */
export function addVersionTools(server: McpServer, s: Services): void {
  addTool(server, s, {
    name: "list-gateway-config-versions",
    title: "List a gateway's configuration versions",
    description:
      "The kept versions of a gateway's configuration (newest first, up to 50): when each was generated, from what, its pipelines, and when the gateway applied it; the desired and applied versions; and the rollback pin, if any (a pinned gateway does not get pipeline changes).",
    input: z.strictObject({ gateway_id: gatewayId }),
    output: z.object({
      gateway_id: z.string(),
      desired_version: z.number().describe("The version the gateway pulls next."),
      applied_version: z.number().nullable(),
      pin: pinOut,
      versions: z.array(versionOut),
      notes: notesOut,
    }),
    hints: READ,
    run: async (args, p) => {
      const gw = await ownGateway(s, p, args.gateway_id);
      // Reading the desired configuration records a new version when the records changed.
      const desired = await s.resources.gatewayConfig(p.team.id, gw.id);
      const [versions, state, pin] = await Promise.all([
        s.store.configHistory.list(p.team.id, gw.id),
        s.store.gatewayState.get(p.team.id, gw.id),
        pinOf(s, gw),
      ]);
      return {
        gateway_id: gw.id,
        desired_version: desired.version,
        applied_version: state.applied_version,
        pin,
        versions: versions.map((v) => ({
          version: v.version,
          generated_at: v.generated_at,
          source: v.source,
          pipelines: v.pipelines,
          applied_at: v.applied_at,
          failed_at: v.failed_at,
          can_roll_back: v.snapshot_bytes > 0,
        })),
        notes: pin ? [gatewayPinNote(pin)] : [],
      };
    },
  });

  addTool(server, s, {
    name: "rollback-gateway-config",
    title: "Roll a gateway back to a configuration version",
    description:
      "Pins a gateway to an earlier version's stored snapshot (list-gateway-config-versions, can_roll_back): it pulls that configuration as a new version and keeps it while pipelines change. Until resume-gateway-config, pipelines created or changed since are not published to it (their routes answer 404 there).",
    input: z.strictObject({
      gateway_id: gatewayId,
      version: z.int().min(1).describe("The version to go back to (list-gateway-config-versions)."),
    }),
    output: z.object({
      gateway_id: z.string(),
      pin: pinOut,
      desired_version: z.number().describe("The new version the gateway pulls (the snapshot)."),
      notes: notesOut,
    }),
    hints: DESTROY,
    run: async (args, p) => {
      const gw = await ownGateway(s, p, args.gateway_id);
      const pinned = await s.store.configHistory.pinTo(
        p.team.id,
        gw.id,
        gw.code,
        args.version,
        p.actor,
      );
      if (!pinned) {
        throw new StoreError(
          "not_found",
          `version ${args.version} of gateway ${gw.code} has no stored snapshot (only the newest ` +
            "50 versions are kept, and a configuration over 512 KiB is versioned without one); " +
            "see list-gateway-config-versions (can_roll_back)",
          { field: "version" },
        );
      }
      const desired = await s.resources.gatewayConfig(p.team.id, gw.id);
      const pin = await pinOf(s, gw);
      return {
        gateway_id: gw.id,
        pin,
        desired_version: desired.version,
        notes: pin ? [gatewayPinNote(pin)] : [],
      };
    },
  });

  addTool(server, s, {
    name: "resume-gateway-config",
    title: "Resume a rolled-back gateway",
    description:
      "Ends a gateway's rollback pin: it follows its pipelines again and pulls their current configuration as a new version. No change when it is not pinned (resumed = false).",
    input: z.strictObject({ gateway_id: gatewayId }),
    output: z.object({
      gateway_id: z.string(),
      resumed: z.boolean().describe("False when the gateway was not rolled back."),
      pin: pinOut,
      desired_version: z.number().describe("The version the gateway pulls next."),
      pipelines: z.array(z.string()).describe("Pipelines (names) in that version."),
    }),
    hints: CHANGE,
    run: async (args, p) => {
      const gw = await ownGateway(s, p, args.gateway_id);
      const resumed = await s.store.configHistory.unpin(p.team.id, gw.id, gw.code, p.actor);
      const desired = await s.resources.gatewayConfig(p.team.id, gw.id);
      return {
        gateway_id: gw.id,
        resumed,
        pin: await pinOf(s, gw),
        desired_version: desired.version,
        pipelines: desired.pipelines,
      };
    },
  });
}
