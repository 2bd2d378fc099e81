/** JOLT transforms: validate a spec and preview it on a sample input (nothing is stored). */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { checkTransformSpec } from "../resources/mod.ts";
import { StoreError } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { addTool, READ } from "./tool.ts";

const spec = z.array(z.unknown()).describe(
  'A JOLT chain: [{"operation": "shift" | "default" | …, "spec": {…}}, …].',
);

/** Registers validate-transform-spec and preview-transform. */
export function addTransformTools(server: McpServer, s: Services): void {
  addTool(server, s, {
    name: "validate-transform-spec",
    title: "Validate a JOLT spec",
    description:
      "Compiles a JOLT chain with the gateway's engine and lists its problems by field (valid: true when there are none). Nothing is stored.",
    input: z.strictObject({ spec }),
    output: z.object({
      valid: z.boolean(),
      problems: z.array(z.object({ field: z.string(), message: z.string() })),
    }),
    hints: READ,
    run: (args) => {
      const problems = checkTransformSpec(args.spec);
      return Promise.resolve({ valid: problems.length === 0, problems });
    },
  });

  addTool(server, s, {
    name: "preview-transform",
    title: "Preview a JOLT spec on a sample",
    description:
      "Runs a JOLT chain (or a stored transform, by transform_id) on a sample JSON input and returns the output. Nothing is stored. A run that needs more work than one transform may take fails with transform_budget_exceeded, one that runs past the preview deadline with preview_deadline_exceeded.",
    input: z.strictObject({
      spec: spec.optional().describe("The chain to run; or pass transform_id instead."),
      transform_id: z.uuid("must be a UUID").optional().describe(
        "Id of a transform of your team (list-transforms) whose spec to run.",
      ),
      input: z.unknown().describe("The sample JSON document to transform."),
    }),
    output: z.object({ output: z.unknown().describe("The transformed document (null: nothing).") }),
    hints: READ,
    run: async (args, p) => {
      let chain: unknown = args.spec;
      if (args.transform_id) {
        const seen = await s.resources.visible("transforms", p.team.id, args.transform_id);
        if (!seen) throw new StoreError("not_found", "transform not found");
        chain = seen.record.spec;
      }
      if (chain === undefined) {
        throw new StoreError(
          "invalid",
          "spec: pass spec (a JOLT chain) or transform_id",
          { field: "spec" },
        );
      }
      // In a worker with a deadline, as POST /api/transforms/preview.
      return await s.resources.preview(chain, args.input ?? null);
    },
  });
}
