/**
 * A gateway's rollback pin as the MCP tools show it. A pinned gateway serves one stored version's
 * snapshot instead of its records, so pipelines created or changed since are not published to it
 * and their routes answer 404 there: every tool result about such a gateway or its pipelines
 * says so, with the tool that ends the pin (resume-gateway-config).
 */
import { z } from "zod";
import type { GatewayRecord, PipelineRecord } from "../store/mod.ts";
import type { Services } from "../services.ts";

/** A pin as tool results show it. */
export interface PinView {
  gateway_id: string;
  gateway_code: string;
  /** The version whose snapshot the gateway serves. */
  version: number;
  pinned_at: string;
  pinned_by: string;
  /** The pipelines (names) of that snapshot: the only ones the gateway runs. */
  pipelines: string[];
}

/** Output schema of a pin (or null). */
export const pinOut = z.object({
  gateway_id: z.string(),
  gateway_code: z.string(),
  version: z.number().describe("The configuration version the gateway is rolled back to."),
  pinned_at: z.string(),
  pinned_by: z.string(),
  pipelines: z.array(z.string()).describe("Pipelines of that version: the only ones it runs."),
}).nullable().describe(
  "Set when the gateway is rolled back (pinned) to an earlier configuration version: changes to its pipelines are not published until resume-gateway-config. Null when it follows its pipelines.",
);

/** Output schema of the notes that explain a pin's consequences. */
export const notesOut = z.array(z.string()).describe(
  "What the caller should know about this result, e.g. why a gateway does not run a pipeline.",
);

/** The pin of `gateway`, or null when it follows its records. */
export async function pinOf(s: Services, gateway: GatewayRecord): Promise<PinView | null> {
  const pin = await s.store.configHistory.pin(gateway.team_id, gateway.id);
  if (!pin) return null;
  const snapshot = await s.store.configHistory.snapshot(gateway.team_id, gateway.id, pin.version);
  return {
    gateway_id: gateway.id,
    gateway_code: gateway.code,
    version: pin.version,
    pinned_at: pin.pinned_at,
    pinned_by: pin.pinned_by,
    pipelines: snapshot?.pipelines ?? [],
  };
}

/** What a pin means for the gateway as a whole. */
export function gatewayPinNote(pin: PinView): string {
  return `Gateway ${pin.gateway_code} is rolled back: it serves configuration version ` +
    `${pin.version} (pinned by ${pin.pinned_by} at ${pin.pinned_at}), not its current ` +
    "pipelines. Pipelines created or changed since are not published to it, so requests to " +
    "routes added since answer 404 on the gateway. Call resume-gateway-config with gateway_id " +
    `${pin.gateway_id} to publish the pipelines again (list-gateway-config-versions shows the history).`;
}

/** What a pin means for one pipeline placed on the pinned gateway. */
export function pipelinePinNote(pin: PinView, pipeline: PipelineRecord): string {
  const runs = pin.pipelines.includes(pipeline.name);
  return `Pipeline ${pipeline.name} is not published: its gateway ${pin.gateway_code} is ` +
    `rolled back to configuration version ${pin.version} (pinned by ${pin.pinned_by} at ` +
    `${pin.pinned_at}). ` +
    (runs
      ? `The gateway runs this pipeline as it was in version ${pin.version}; changes since do not reach it. `
      : `That version has no pipeline ${pipeline.name}, so requests to its endpoints answer 404 on the gateway. `) +
    `Call resume-gateway-config with gateway_id ${pin.gateway_id} to publish it.`;
}

/**
 * The pin of a pipeline's gateway and the note it needs, for a caller in `teamId`: none when the
 * pipeline is on no gateway or the gateway is not pinned, and none for a pipeline another team
 * shared (its gateway and who pinned it are that team's business).
 */
export async function pipelinePin(
  s: Services,
  pipeline: PipelineRecord,
  teamId: string,
): Promise<{ gateway_pin: PinView | null; notes: string[] }> {
  if (!pipeline.gateway_id || pipeline.team_id !== teamId) return { gateway_pin: null, notes: [] };
  const gateway = await s.resources.get("gateways", pipeline.team_id, pipeline.gateway_id);
  const pin = gateway ? await pinOf(s, gateway) : null;
  return { gateway_pin: pin, notes: pin ? [pipelinePinNote(pin, pipeline)] : [] };
}
