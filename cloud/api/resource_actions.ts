/**
 * Routes beside the plain resource CRUD: a gateway's desired and reported configuration and its
 * machine tokens, a pipeline's TOML for review, JOLT previews, shares, and the audit log.
 */
import { type GatewayRecord, listAudit } from "../store/mod.ts";
import { shareCreate, transformPreview } from "../resources/mod.ts";
import type { Context } from "hono";
import type { Services } from "../services.ts";
import type { AppEnv } from "./env.ts";
import { readJson } from "./body.ts";
import { ApiError, notFound } from "./errors.ts";
import { specSizeProblem } from "../../shared/jolt/mod.ts";
import { EXAMPLE_IDS } from "./examples.ts";
import { configEtag } from "./gateway.ts";
import { requireBearer, userOf } from "./middleware.ts";
import type { Registry } from "./registry.ts";
import { pageParams } from "./list_params.ts";

const AUTH = ["user_token", "api_token"] as const;
const GATEWAY_404 = {
  description: "No such gateway in your team",
  example: { error: { code: "not_found", message: "gateway not found" } },
};
const SHARE_EXAMPLE = {
  id: "0190f5f0-1111-7222-8333-444455556666",
  team_id: EXAMPLE_IDS.team,
  resource_kind: "transforms",
  resource_id: EXAMPLE_IDS.transforms,
  resource_name: "patient_to_fhir",
  target_team_id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f22",
  access: "read",
  created_at: "2025-01-16T09:00:00.000Z",
  created_by: "ada@example.com",
};

/** The team's gateway `id`; 404 when the team has none. */
async function ownGateway(s: Services, teamId: string, id: string): Promise<GatewayRecord> {
  const gw = await s.store.repos.gateways.get(teamId, id);
  if (!gw) throw notFound("gateway");
  return gw;
}

/** The routes of this module accept user tokens and API tokens. */
const auth = requireBearer("user_token", "api_token");

/** Mounts the extra routes. */
export function mountResourceActions(reg: Registry): void {
  reg.group("/api", (g) => {
    g.add(
      {
        method: "get",
        path: "/api/gateways/:id/config",
        tag: "Gateways",
        summary: "The desired configuration of a gateway (what it pulls), for review",
        auth: [...AUTH],
        responses: {
          200: {
            description:
              "The generated configuration and its version; `toml` is null and `problems` lists why when the records do not form a valid configuration",
            example: {
              gateway_id: EXAMPLE_IDS.gateways,
              version: 3,
              etag: '"9f2c…"',
              generated_at: "2025-01-16T08:00:00.000Z",
              toml: "# Gateway configuration\n…",
              problems: [],
              transforms: [],
              pipelines: ["fhir_ingest"],
              skipped: [],
            },
          },
          404: GATEWAY_404,
        },
      },
      auth,
      desiredConfig,
    );
    g.add(
      {
        method: "get",
        path: "/api/gateways/:id/reported-config",
        tag: "Gateways",
        summary: "The configuration the gateway uploaded last (TOML text)",
        auth: [...AUTH],
        responses: {
          200: {
            description: "The TOML",
            contentType: "application/toml",
            example: '[endpoints.api]\nservice = "http"\n…',
          },
          404: {
            description: "No such gateway, or it never uploaded",
            example: { error: { code: "not_found", message: "reported configuration not found" } },
          },
        },
      },
      auth,
      reportedConfig,
    );
    g.add(
      {
        method: "get",
        path: "/api/gateways/:id/tokens",
        tag: "Gateways",
        summary: "Machine tokens issued to a gateway (never the token text)",
        auth: [...AUTH],
        responses: {
          200: {
            description: "Tokens, newest first",
            example: {
              items: [{
                jti: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
                team_id: EXAMPLE_IDS.team,
                gateway_id: EXAMPLE_IDS.gateways,
                issued_at: "2025-01-15T10:00:00.000Z",
                expires_at: "2025-02-14T10:00:00.000Z",
                revoked_at: null,
                renewed_from: null,
                issued_by: "ci-deploy (ada@example.com)",
                last_used_at: "2025-01-16T08:01:00.000Z",
              }],
            },
          },
          404: GATEWAY_404,
        },
      },
      auth,
      machineTokens,
    );
    g.add(
      {
        method: "delete",
        path: "/api/gateways/:id/tokens/:jti",
        tag: "Gateways",
        summary: "Revoke a machine token of a gateway",
        auth: [...AUTH],
        responses: {
          200: {
            description: "Revoked",
            example: {
              jti: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
              revoked_at: "2025-01-17T12:00:00.000Z",
            },
          },
          404: {
            description: "No such gateway or token in your team",
            example: { error: { code: "not_found", message: "machine token not found" } },
          },
        },
      },
      auth,
      revokeMachineToken,
    );
    g.add(
      {
        method: "get",
        path: "/api/pipelines/:id/toml",
        tag: "Pipelines",
        summary: "The configuration of one pipeline on its own, for review",
        auth: [...AUTH],
        responses: {
          200: {
            description: "TOML (null with problems when invalid)",
            example: {
              pipeline_id: EXAMPLE_IDS.pipelines,
              toml: "# Gateway configuration\n…",
              problems: [],
              transforms: [],
              skipped: [],
            },
          },
          404: {
            description: "No such pipeline in your team",
            example: { error: { code: "not_found", message: "pipeline not found" } },
          },
        },
      },
      auth,
      pipelineToml,
    );
    g.add(
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
            description:
              "The spec is nested deeper than 128 levels or has more than 200,000 values",
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
    g.add(
      {
        method: "get",
        path: "/api/shares",
        tag: "Shares",
        summary: "Shares your team granted",
        description: "Each share names the receiving team (`target_team_name`).",
        auth: [...AUTH],
        responses: {
          200: {
            description: "Shares",
            example: { items: [{ ...SHARE_EXAMPLE, target_team_name: "Cardiology" }] },
          },
        },
      },
      auth,
      outgoingShares,
    );
    g.add(
      {
        method: "get",
        path: "/api/shares/incoming",
        tag: "Shares",
        summary: "Shares other teams granted to your team",
        description:
          "Each share names the owning team (`team_name`). Read a shared record with `GET /api/<kind>/<resource_id>` (or list them with `GET /api/<kind>?shared=only`); change it with PATCH when `access` is `write`.",
        auth: [...AUTH],
        responses: {
          200: {
            description: "Shares",
            example: { items: [{ ...SHARE_EXAMPLE, team_name: "Radiology" }] },
          },
        },
      },
      auth,
      incomingShares,
    );
    g.add(
      {
        method: "post",
        path: "/api/shares",
        tag: "Shares",
        summary: "Share a record with another team (read, or read and write; never delete)",
        auth: [...AUTH],
        body: {
          schema: shareCreate,
          example: {
            resource_kind: "transforms",
            resource_id: EXAMPLE_IDS.transforms,
            team_id: SHARE_EXAMPLE.target_team_id,
            access: "read",
          },
        },
        responses: {
          201: { description: "Shared", example: SHARE_EXAMPLE },
          404: {
            description: "No such record in your team, or no such team",
            example: { error: { code: "not_found", message: "transform not found" } },
          },
          409: {
            description: "Already shared with that team",
            example: {
              error: {
                code: "conflict",
                message:
                  "this record is already shared with that team; delete that share to change it",
              },
            },
          },
        },
      },
      auth,
      createShare,
    );
    g.add(
      {
        method: "delete",
        path: "/api/shares/:id",
        tag: "Shares",
        summary: "Revoke a share your team granted",
        auth: [...AUTH],
        responses: {
          204: { description: "Revoked" },
          404: {
            description: "No such share of your team",
            example: { error: { code: "not_found", message: "share not found" } },
          },
        },
      },
      auth,
      revokeShare,
    );
    g.add(
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
  });
}

/**
 * GET /api/gateways/:id/config:
 * The desired configuration of a gateway (what it pulls), for review.
 */
async function desiredConfig(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const gw = await ownGateway(s, p.team.id, c.req.param("id")!);
  const config = await s.resources.gatewayConfig(p.team.id, gw.id);
  return c.json({
    gateway_id: gw.id,
    version: config.version,
    etag: configEtag(config),
    generated_at: config.generated_at,
    toml: config.toml,
    problems: config.problems,
    transforms: config.transforms,
    pipelines: config.pipelines,
    skipped: config.skipped,
  });
}

/**
 * GET /api/gateways/:id/reported-config:
 * The configuration the gateway uploaded last (TOML text).
 */
async function reportedConfig(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const gw = await ownGateway(s, p.team.id, c.req.param("id")!);
  const text = await s.store.gatewayState.reportedConfig(p.team.id, gw.id);
  if (text === null) throw notFound("reported configuration");
  return c.body(text, 200, { "Content-Type": "application/toml; charset=utf-8" });
}

/** GET /api/gateways/:id/tokens: Machine tokens issued to a gateway (never the token text). */
async function machineTokens(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const gw = await ownGateway(s, p.team.id, c.req.param("id")!);
  return c.json({ items: await s.store.tokens.listMachineTokens(p.team.id, gw.id) });
}

/** DELETE /api/gateways/:id/tokens/:jti: Revoke a machine token of a gateway. */
async function revokeMachineToken(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const gw = await ownGateway(s, p.team.id, c.req.param("id")!);
  const revoked = await s.store.tokens.revokeMachineToken(
    p.team.id,
    gw.id,
    c.req.param("jti")!,
    p.actor,
  );
  if (!revoked) throw notFound("machine token");
  return c.json(revoked);
}

/** GET /api/pipelines/:id/toml: The configuration of one pipeline on its own, for review. */
async function pipelineToml(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const pipeline = await s.store.repos.pipelines.get(p.team.id, c.req.param("id")!);
  if (!pipeline) throw notFound("pipeline");
  const config = await s.resources.pipelineConfig(p.team.id, pipeline);
  return c.json({
    pipeline_id: pipeline.id,
    toml: config.toml,
    problems: config.problems,
    transforms: config.transforms,
    skipped: config.skipped,
  });
}

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

/** GET /api/shares: Shares your team granted. */
async function outgoingShares(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const name = teamNames(s);
  const items = await s.shares.outgoing(userOf(c).team.id);
  return c.json({
    items: await Promise.all(
      items.map(async (x) => ({ ...x, target_team_name: await name(x.target_team_id) })),
    ),
  });
}

/** GET /api/shares/incoming: Shares other teams granted to your team. */
async function incomingShares(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const name = teamNames(s);
  const items = await s.shares.incoming(userOf(c).team.id);
  return c.json({
    items: await Promise.all(items.map(async (x) => ({ ...x, team_name: await name(x.team_id) }))),
  });
}

/** Looks up team names, each once. */
function teamNames(s: Services): (id: string) => Promise<string> {
  const seen = new Map<string, Promise<string>>();
  return (id) => {
    if (!seen.has(id)) {
      seen.set(id, s.store.identity.team(id).then((t) => t?.name ?? "(deleted team)"));
    }
    return seen.get(id)!;
  };
}

/** POST /api/shares: Share a record with another team (read, or read and write; never delete). */
async function createShare(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  return c.json(await s.shares.share(p.team.id, p.actor, await readJson(c, shareCreate)), 201);
}

/** DELETE /api/shares/:id: Revoke a share your team granted. */
async function revokeShare(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  await s.shares.revoke(p.team.id, p.actor, c.req.param("id")!);
  return c.body(null, 204);
}

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
