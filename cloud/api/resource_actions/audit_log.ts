/** The route GET /api/audit: The audit log of the current team, newest first. */
import { listAudit } from "../../store/mod.ts";
import type { Context } from "hono";
import type { AppEnv } from "../env.ts";
import { EXAMPLE_IDS } from "../examples.ts";
import { userOf } from "../middleware.ts";
import { pageParams } from "../list_params.ts";
import { AUTH, auth } from "./common.ts";
import { type Route, route } from "../registry.ts";

/** GET /api/audit: its documentation, its middleware and its handler. */
export const auditLogRoute: Route = route(
  {
    method: "get",
    path: "/api/audit",
    tag: "Audit",
    summary: "The audit log of the current team, newest first",
    auth: [...AUTH],
    query: [
      {
        name: "limit",
        type: "integer",
        description: "Entries per page, 1-1000 (default 100).",
      },
      {
        name: "cursor",
        type: "string",
        description: "The `next_cursor` of the previous page.",
      },
      {
        name: "action",
        type: "string",
        description:
          "Only actions starting with this text, e.g. `pipeline.` or `api_token.revoked`.",
      },
      {
        name: "name",
        type: "string",
        description:
          "Only entries whose actor or record name contains this text (case-insensitive).",
      },
    ],
    responses: {
      200: {
        description: "Entries",
        example: {
          items: [{
            id: "0190f600-0000-7000-8000-000000000001",
            at: "2025-01-16T09:00:00.000Z",
            actor: {
              type: "user",
              id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f10",
              label: "ada@example.com",
              user_id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f10",
            },
            action: "pipeline.updated",
            resource: { kind: "pipelines", id: EXAMPLE_IDS.pipelines, name: "fhir_ingest" },
            changed: ["middleware_ids"],
          }],
          next_cursor: null,
        },
      },
    },
  },
  auth,
  auditLog,
);

/** GET /api/audit: The audit log of the current team, newest first. */
async function auditLog(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const page = await listAudit(s.store.kv, p.team.id, {
    ...pageParams(c),
    action: c.req.query("action") || undefined,
    text: c.req.query("name") || undefined,
  });
  return c.json({ items: page.items, next_cursor: page.next_cursor ?? null });
}
