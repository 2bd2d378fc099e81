/** The route POST /api/transforms/preview: Run a JOLT spec on a sample input (nothing is stored). */
import { transformPreview } from "../../resources/mod.ts";
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { readJson } from "../body.ts";
import { ApiError } from "../errors.ts";
import { specSizeProblem } from "../../../shared/jolt/mod.ts";
import { userOf } from "../middleware.ts";
import { AUTH, auth } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** POST /api/transforms/preview: its documentation, its middleware and its handler. */
export const previewTransformRoute: Route = route(
  {
    method: "post",
    path: "/api/transforms/preview",
    tag: "Transforms",
    summary: "Run a JOLT spec on a sample input (nothing is stored)",
    auth: [...AUTH],
    body: {
      schema: transformPreview,
      example: { spec: [{ operation: "shift", spec: { a: "b" } }], input: { a: 1 } },
    },
    responses: {
      200: { description: "The output", example: { output: { b: 1 } } },
      400: {
        description: "The spec is nested deeper than 128 levels or has more than 200,000 values",
        example: {
          error: {
            code: "spec_too_large",
            message: "spec: the spec is nested deeper than 128 levels",
          },
        },
      },
      422: {
        description:
          "Invalid spec, or the transform failed on this input: `validation_failed` with the " +
          "fields at fault; `transform_budget_exceeded` when the run needs more work steps " +
          "than one run may take (`budget_steps`); `preview_deadline_exceeded` when it ran " +
          "longer than the preview deadline (`deadline_ms`) and was stopped",
        example: {
          error: {
            code: "validation_failed",
            message: 'spec.0: JOLT spec operation 0: unknown operation "shiftt"…',
            fields: [{ field: "spec", message: "…" }],
          },
        },
      },
      503: {
        description: "Too many previews are waiting for a worker (`preview_busy`, Retry-After)",
        example: {
          error: {
            code: "preview_busy",
            message: "16 previews are waiting already: try again in a second",
            retry_after_s: 1,
          },
        },
      },
    },
  },
  auth,
  previewTransform,
);

/** POST /api/transforms/preview: Run a JOLT spec on a sample input (nothing is stored). */
async function previewTransform(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  userOf(c);
  const body = await readJson(c, transformPreview, 256 * 1024);
  // Too deep or too large to compile at all: a 400 with its own stable code.
  const tooLarge = specSizeProblem(body.spec);
  if (tooLarge) throw new ApiError(400, "spec_too_large", `spec: ${tooLarge}`);
  // In a worker with a deadline: a spec that does too much work on its sample stops there.
  return c.json(await s.resources.preview(body.spec, body.input));
}
