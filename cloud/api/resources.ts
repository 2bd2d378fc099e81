/**
 * The resource REST API: for each kind, list (cursor pages, filters), create, get, update
 * (PATCH, optional If-Match on the revision) and delete, all in the caller's current team. A
 * record of another team answers 404, unless that team shared it: then GET works (and PATCH
 * with a write share), and DELETE answers 403.
 */
import type { Context, Handler } from "hono";
import type { ResourceKind } from "../store/mod.ts";
import { RESOURCE_KINDS } from "../store/mod.ts";
import { findVisible, KINDS, SCHEMAS, SHARED_SCOPES, SINGULAR } from "../resources/mod.ts";
import { readJson } from "./body.ts";
import type { AppEnv } from "./env.ts";
import { ApiError, notFound } from "./errors.ts";
import { CREATE_EXAMPLES, EXAMPLE_IDS, recordExample, UPDATE_EXAMPLES } from "./examples.ts";
import { requireBearer, userOf } from "./middleware.ts";
import { oneOf, PAGE_QUERY, pageParams } from "./list_params.ts";
import { cachedPage } from "./list_cache.ts";
import type { QueryDoc, Registry, RouteDoc } from "./registry.ts";

/** The statuses a gateway list can be filtered on. */
const GATEWAY_STATUSES = ["pending", "online", "degraded", "offline"] as const;

const NOT_FOUND = (kind: ResourceKind) => ({
  description: `No such ${SINGULAR[kind]} in your team (also for another team's records)`,
  example: { error: { code: "not_found", message: `${SINGULAR[kind]} not found` } },
});

function ifRevision(c: Context<AppEnv>): number | undefined {
  const header = c.req.header("if-match");
  if (!header) return undefined;
  const m = /^"(\d+)"$/.exec(header.trim());
  if (!m) {
    throw new ApiError(422, "validation_failed", 'If-Match: send the ETag of the record, e.g. "3"');
  }
  return Number(m[1]);
}

/** User tokens and API tokens are accepted. */
const auth = requireBearer("user_token", "api_token");

/** Mounts the routes of every kind, one sub-app per kind (`/api/<kind>`). */
export function mountResources(reg: Registry): void {
  for (const kind of RESOURCE_KINDS) {
    reg.group(`/api/${kind}`, (g) => {
      g.add(listDoc(kind), auth, listRecords(kind));
      g.add(createDoc(kind), auth, createRecord(kind));
      g.add(getDoc(kind), auth, getRecord(kind));
      g.add(updateDoc(kind), auth, updateRecord(kind));
      g.add(deleteDoc(kind), auth, deleteRecord(kind));
    });
  }
}

/** Names a kind's routes use: singular, path, OpenAPI tag. */
function naming(kind: ResourceKind): { one: string; base: string; tag: string } {
  return { one: SINGULAR[kind], base: `/api/${kind}`, tag: kind[0].toUpperCase() + kind.slice(1) };
}

/** The list route's query parameters: paging, name, the kind's filter fields, shared records. */
function listQuery(kind: ResourceKind): QueryDoc[] {
  return [
    ...PAGE_QUERY,
    {
      name: "name",
      type: "string",
      description: kind === "gateways"
        ? "Only gateways whose name or code contains this text (case-insensitive)."
        : "Only records whose name contains this text (case-insensitive).",
    },
    ...KINDS[kind].filters.map((f) => ({
      name: f,
      type: "string" as const,
      description: `Only records with this ${f}.`,
    })),
    ...(kind === "gateways"
      ? [{
        name: "status",
        type: "string" as const,
        description: `Only gateways with this status: ${GATEWAY_STATUSES.join(", ")}.`,
      }]
      : []),
    {
      name: "shared",
      type: "string",
      description:
        "`exclude` (default): your team's records only; `include`: yours, then those other teams shared with yours; `only`: the shared ones. With `include` and `only` each record carries `access` and `team_name` (the owning team).",
    },
  ];
}

/** The documentation of the list route of `kind`. */
function listDoc(kind: ResourceKind): RouteDoc {
  const { base, tag } = naming(kind);
  return {
    method: "get",
    path: base,
    tag,
    summary: `List ${kind} of the current team`,
    description:
      "Oldest first (with `shared`, your team's records come before the shared ones). `next_cursor` is present while more pages follow.",
    auth: ["user_token", "api_token"],
    query: listQuery(kind),
    responses: {
      200: {
        description: "A page",
        example: { items: [recordExample(kind)], next_cursor: null },
      },
      422: {
        description: "A bad `limit`, `cursor`, `shared` or `status`",
        example: {
          error: {
            code: "validation_failed",
            message: "shared: one of exclude, include, only",
            fields: [{ field: "shared", message: "one of exclude, include, only" }],
          },
        },
      },
    },
  };
}

/** The documentation of the create route of `kind`. */
function createDoc(kind: ResourceKind): RouteDoc {
  const { one, base, tag } = naming(kind);
  return {
    method: "post",
    path: base,
    tag,
    summary: `Create a ${one}`,
    description: createDescription(kind),
    auth: ["user_token", "api_token"],
    body: { schema: SCHEMAS[kind].create, example: CREATE_EXAMPLES[kind] },
    responses: {
      201: { description: "Created", example: recordExample(kind), headers: { ETag: '"1"' } },
      409: {
        description: "Name already used in this team",
        example: {
          error: {
            code: "name_taken",
            message: `name: a ${one} with name \`x\` already exists in this team`,
          },
        },
      },
      422: {
        description:
          "Invalid body, a missing reference, or a change that would break a gateway's configuration",
        example: {
          error: {
            code: "validation_failed",
            message: "invalid body: name: use letters, digits…",
            fields: [{
              field: "name",
              message: "use letters, digits, `_` and `-`, starting with a letter or digit",
            }],
          },
        },
      },
    },
  };
}

/** The documentation of the get route of `kind`. */
function getDoc(kind: ResourceKind): RouteDoc {
  const { one, base, tag } = naming(kind);
  return {
    method: "get",
    path: `${base}/:id`,
    tag,
    summary: `Get a ${one} (of your team, or shared with it)`,
    description:
      "Records shared with your team carry `access` (`read` or `write`); your own carry `owner`.",
    auth: ["user_token", "api_token"],
    responses: {
      200: {
        description: "The record",
        example: { ...recordExample(kind), access: "owner" },
        headers: { ETag: '"1"' },
      },
      404: NOT_FOUND(kind),
    },
  };
}

/** The documentation of the update route of `kind`. */
function updateDoc(kind: ResourceKind): RouteDoc {
  const { one, base, tag } = naming(kind);
  return {
    method: "patch",
    path: `${base}/:id`,
    tag,
    summary: `Update a ${one} (fields left out stay as they are)`,
    description:
      '`If-Match: "<revision>"` makes the update fail with 409 when the record changed since it was read.',
    auth: ["user_token", "api_token"],
    headers: [{
      name: "If-Match",
      type: "string",
      description: 'The ETag (`"<revision>"`) the change is based on.',
    }],
    body: { schema: SCHEMAS[kind].update, example: UPDATE_EXAMPLES[kind] },
    responses: {
      200: {
        description: "Updated",
        example: {
          ...recordExample(kind),
          ...UPDATE_EXAMPLES[kind],
          revision: 2,
          access: "owner",
        },
      },
      403: {
        description: "Shared with your team read-only",
        example: {
          error: { code: "forbidden", message: `this ${one} is shared with your team read-only` },
        },
      },
      404: NOT_FOUND(kind),
      409: {
        description: "Name taken, or If-Match revision outdated",
        example: { error: { code: "conflict", message: `${one} is at revision 3, not 2` } },
      },
      422: {
        description: "Invalid change",
        example: { error: { code: "validation_failed", message: "…", fields: [] } },
      },
    },
  };
}

/** The documentation of the delete route of `kind`. */
function deleteDoc(kind: ResourceKind): RouteDoc {
  const { one, base, tag } = naming(kind);
  return {
    method: "delete",
    path: `${base}/:id`,
    tag,
    summary: `Delete a ${one}`,
    description:
      "Refused with 409 `in_use` while other records reference it. Deleting a gateway also ends its machine tokens.",
    auth: ["user_token", "api_token"],
    responses: {
      204: { description: "Deleted" },
      403: {
        description: "Shared with your team (shares never grant deletion)",
        example: {
          error: { code: "forbidden", message: `only the owning team can delete this ${one}` },
        },
      },
      404: NOT_FOUND(kind),
      409: {
        description: "Still referenced",
        example: {
          error: {
            code: "in_use",
            message: `${one} \`x\` is used by pipelines/…; remove those references first`,
            used_by: [{ kind: "pipelines", id: EXAMPLE_IDS.pipelines }],
          },
        },
      },
    },
  };
}

/** List the records of a kind: a page, filtered by name and the kind's fields. */
function listRecords(kind: ResourceKind): Handler<AppEnv> {
  return async function listRecords(c: Context<AppEnv>): Promise<Response> {
    const s = c.get("services");
    const p = userOf(c);
    const where = Object.fromEntries(KINDS[kind].filters.map((f) => [f, c.req.query(f)]));
    const status = kind === "gateways" ? oneOf(c, "status", GATEWAY_STATUSES) : undefined;
    const shared = oneOf(c, "shared", SHARED_SCOPES) ?? "exclude";
    const query = { ...pageParams(c), name: c.req.query("name"), where, status };
    if (shared === "exclude") {
      const find = () => s.resources.find(kind, p.team.id, query);
      // A gateway's status moves with time: its pages are listed each time.
      if (kind === "gateways") return c.json(await find());
      const key = JSON.stringify([kind, query]);
      return c.body(await cachedPage(s, p.team.id, key, find), 200, {
        "Content-Type": "application/json",
      });
    }
    const page = await findVisible(s.store, s.resources, kind, p.team.id, { ...query, shared });
    return c.json({
      items: page.items.map((x) => ({ ...x.record, access: x.access, team_name: x.team.name })),
      next_cursor: page.next_cursor,
    });
  };
}

/** Create a record of a kind. */
function createRecord(kind: ResourceKind): Handler<AppEnv> {
  return async function createRecord(c: Context<AppEnv>): Promise<Response> {
    const s = c.get("services");
    const p = userOf(c);
    const body = await readJson(c, SCHEMAS[kind].create) as Record<string, unknown>;
    const record = await s.resources.createFrom(kind, p.team.id, p.actor, body);
    c.header("ETag", `"${record.revision}"`);
    c.header("Location", `/api/${kind}/${record.id}`);
    return c.json(await s.resources.view(kind, record, true), 201);
  };
}

/** Get a record of the team, or shared with it. */
function getRecord(kind: ResourceKind): Handler<AppEnv> {
  return async function getRecord(c: Context<AppEnv>): Promise<Response> {
    const s = c.get("services");
    const p = userOf(c);
    const seen = await s.resources.visible(kind, p.team.id, c.req.param("id")!);
    if (!seen) throw notFound(SINGULAR[kind]);
    c.header("ETag", `"${seen.record.revision}"`);
    const record = await s.resources.view(kind, seen.record, seen.access === "owner");
    return c.json({ ...record, access: seen.access });
  };
}

/** Update a record (PATCH, optional If-Match). */
function updateRecord(kind: ResourceKind): Handler<AppEnv> {
  return async function updateRecord(c: Context<AppEnv>): Promise<Response> {
    const s = c.get("services");
    const p = userOf(c);
    const patch = await readJson(c, SCHEMAS[kind].update) as Record<string, unknown>;
    const updated = await s.resources.update(
      kind,
      p.team.id,
      p.actor,
      c.req.param("id")!,
      patch as never,
      ifRevision(c),
    );
    c.header("ETag", `"${updated.record.revision}"`);
    return c.json({
      ...await s.resources.view(kind, updated.record, updated.access === "owner"),
      access: updated.access,
    });
  };
}

/** Delete a record of the team. */
function deleteRecord(kind: ResourceKind): Handler<AppEnv> {
  return async function deleteRecord(c: Context<AppEnv>): Promise<Response> {
    const s = c.get("services");
    const p = userOf(c);
    await s.resources.delete(kind, p.team.id, p.actor, c.req.param("id")!);
    return c.body(null, 204);
  };
}

function createDescription(kind: ResourceKind): string {
  const texts: Record<ResourceKind, string> = {
    gateways:
      "Usually created by `POST /api/gateway/authorize`; `code` is unique in the team and never changes.",
    services:
      "A protocol definition: the endpoint and backend service types its endpoints and backends may use.",
    endpoints:
      "`type` must be one of the service's `endpoint_types`; `options` are checked against the gateway's schema for that type.",
    backends:
      "`type` must be one of the service's `backend_types`; `options`, `targets` and settings are checked against the gateway's schema.",
    middleware:
      "`transform` and `metadata_transform` middleware need `transform_id`; the cloud writes `spec_path` from it. The security middleware (`api_key`, `basic_auth`, `jwt_auth`, `ip_filter`, `rate_limit`, `request_filter`, `cors`, `headers`) take options only.",
    transforms: "`spec` is a JOLT chain, compiled with the gateway's engine on save.",
    pipelines:
      "Ordered `middleware_ids`; when `gateway_id` is set, the gateway's whole configuration is validated with the change.",
    networks:
      "A listener (bind, port, TLS), optional HTTP/3 (inherits unset keys from the network) and optional tunnel settings (kept by the cloud).",
  };
  return texts[kind];
}
