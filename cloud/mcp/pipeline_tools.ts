/** Pipeline composition: attach and detach endpoints, backends and middleware (at a position). */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { UserPrincipal } from "../auth/mod.ts";
import type { PipelineRecord } from "../store/mod.ts";
import { StoreError } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { notesOut, pinOut, pipelinePin } from "./pins.ts";
import { addTool, CHANGE, DESTROY, recordOut } from "./tool.ts";

type Part = "endpoint" | "backend" | "middleware";
const FIELD = {
  endpoint: "endpoint_ids",
  backend: "backend_ids",
  middleware: "middleware_ids",
} as const;
const KIND = { endpoint: "endpoints", backend: "backends", middleware: "middleware" } as const;

const pipelineId = z.uuid("must be a UUID").describe("Id of the pipeline (list-pipelines).");
// The same shape as get-/create-/update-pipeline: the pipeline is the `record`.
const output = z.object({
  record: recordOut.describe("The pipeline after the change."),
  access: z.enum(["owner", "read", "write"]),
  gateway_pin: pinOut,
  notes: notesOut,
});

/** Registers attach-* and detach-* for endpoints, backends and middleware. */
export function addPipelineTools(server: McpServer, s: Services): void {
  for (const part of ["endpoint", "backend", "middleware"] as const) {
    addAttach(server, s, part);
    addDetach(server, s, part);
  }
}

async function change(
  s: Services,
  p: UserPrincipal,
  pipelineId: string,
  part: Part,
  fn: (ids: string[]) => string[],
): Promise<Record<string, unknown>> {
  const seen = await s.resources.visible("pipelines", p.team.id, pipelineId);
  if (!seen) throw new StoreError("not_found", "pipeline not found");
  const field = FIELD[part];
  const current = (seen.record as PipelineRecord)[field];
  const next = fn([...current]);
  if (next.join() === current.join()) {
    const record = seen.record as PipelineRecord;
    return { record, access: seen.access, ...await pipelinePin(s, record, p.team.id) };
  }
  const updated = await s.resources.update(
    "pipelines",
    p.team.id,
    p.actor,
    pipelineId,
    { [field]: next } as Partial<PipelineRecord>,
    seen.record.revision,
  );
  const record = updated.record as PipelineRecord;
  return { record, access: updated.access, ...await pipelinePin(s, record, p.team.id) };
}

const article = (part: Part) => part === "endpoint" ? "an endpoint" : `a ${part}`;

function addAttach(server: McpServer, s: Services, part: Part): void {
  const ordered = part === "middleware";
  addTool(server, s, {
    name: `attach-${part}`,
    title: `Attach ${article(part)} to a pipeline`,
    description: `Adds ${article(part)} of your team to a pipeline` +
      (ordered
        ? " at a position in the middleware order (0 = applied first; default: last). Attaching middleware already in the pipeline moves it to the position."
        : " (no change when it is already attached).") +
      " If the pipeline runs on a gateway, the gateway's configuration is validated with the change.",
    input: z.strictObject({
      pipeline_id: pipelineId,
      [`${part}_id`]: z.uuid("must be a UUID").describe(
        `Id of the ${part} (list-${KIND[part]}).`,
      ),
      ...(ordered
        ? {
          position: z.int().min(0).optional().describe(
            "0-based index in the middleware order; omit to append.",
          ),
        }
        : {}),
    }),
    output,
    hints: CHANGE,
    run: (args, p) => {
      const a = args as Record<string, unknown>;
      const id = a[`${part}_id`] as string;
      return change(s, p, a.pipeline_id as string, part, (ids) => {
        if (!ordered) return ids.includes(id) ? ids : [...ids, id];
        const rest = ids.filter((x) => x !== id);
        const at = Math.min((a.position as number | undefined) ?? rest.length, rest.length);
        rest.splice(at, 0, id);
        return rest;
      });
    },
  });
}

function addDetach(server: McpServer, s: Services, part: Part): void {
  addTool(server, s, {
    name: `detach-${part}`,
    title: `Detach ${article(part)} from a pipeline`,
    description: `Removes ${
      article(part)
    } from a pipeline (the ${part} itself is kept; delete-${part} removes it).`,
    input: z.strictObject({
      pipeline_id: pipelineId,
      [`${part}_id`]: z.uuid("must be a UUID").describe(
        `Id of the attached ${part} (see the pipeline's ${FIELD[part]}).`,
      ),
    }),
    output,
    hints: DESTROY,
    run: (args, p) => {
      const a = args as Record<string, unknown>;
      const id = a[`${part}_id`] as string;
      return change(s, p, a.pipeline_id as string, part, (ids) => {
        if (!ids.includes(id)) {
          throw new StoreError(
            "invalid",
            `${part}_id: ${id} is not attached to this pipeline (see its ${FIELD[part]})`,
            { field: `${part}_id` },
          );
        }
        return ids.filter((x) => x !== id);
      });
    },
  });
}
