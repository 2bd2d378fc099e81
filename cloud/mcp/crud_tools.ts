/** list-*, get-*, create-*, update-*, delete-* for every resource kind, over ResourceService. */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { KINDS, SCHEMAS, SINGULAR } from "../resources/mod.ts";
import type { AnyRecord, GatewayRecord, PipelineRecord, ResourceKind } from "../store/mod.ts";
import { RESOURCE_KINDS, StoreError } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { described } from "./fields.ts";
import { gatewayPinNote, notesOut, pinOf, pinOut, pipelinePin } from "./pins.ts";
import { fail } from "./results.ts";
import { addTool, CHANGE, CREATE, DESTROY, pageInput, READ, recordOut } from "./tool.ts";

/** Singular names of the kinds (tool names and messages), as the REST API uses them. */
export const ONE: Record<ResourceKind, string> = SINGULAR;

const idInput = (kind: ResourceKind) =>
  z.uuid("must be a UUID").describe(`Id of the ${ONE[kind]} (from list-${kind}).`);

/** Registers the CRUD tools of every kind. */
export function addCrudTools(server: McpServer, s: Services): void {
  for (const kind of RESOURCE_KINDS) addKind(server, s, kind);
}

/**
 * What a single-record result carries besides the record: for a pipeline, its gateway's rollback
 * pin and what it means; for a gateway, the note of its pin (the pin itself is in the record).
 */
const extrasOut = (kind: ResourceKind) =>
  kind === "pipelines"
    ? { gateway_pin: pinOut, notes: notesOut }
    : kind === "gateways"
    ? { notes: notesOut }
    : {};

/**
 * A record as the tools show it: a gateway with its status and its rollback `pin`. `owned` (the
 * caller's team owns it) also rebuilds the configuration; a shared gateway's pin stays its
 * owners' business (null).
 */
async function viewOf(
  s: Services,
  kind: ResourceKind,
  r: AnyRecord,
  owned: boolean,
): Promise<AnyRecord> {
  const viewed = await s.resources.view(kind, r, owned);
  if (kind !== "gateways") return viewed;
  const pin = owned ? await pinOf(s, r as GatewayRecord) : null;
  return { ...viewed, pin } as unknown as AnyRecord;
}

/** The extras of {@link extrasOut} for `record` (as viewed). */
async function extrasOf(
  s: Services,
  kind: ResourceKind,
  record: AnyRecord,
  teamId: string,
): Promise<Record<string, unknown>> {
  if (kind === "pipelines") return await pipelinePin(s, record as PipelineRecord, teamId);
  if (kind !== "gateways") return {};
  const pin = (record as { pin?: Awaited<ReturnType<typeof pinOf>> }).pin ?? null;
  return { notes: pin ? [gatewayPinNote(pin)] : [] };
}

function addKind(server: McpServer, s: Services, kind: ResourceKind): void {
  const one = ONE[kind];
  const aOne = /^[aeiou]/.test(one) ? `an ${one}` : `a ${one}`;
  const view = (r: AnyRecord, owned: boolean) => viewOf(s, kind, r, owned);
  const extras = extrasOut(kind);
  const filters = KINDS[kind].filters;
  const createSchema = SCHEMAS[kind].create as z.ZodObject;
  const updateSchema = SCHEMAS[kind].update as z.ZodObject;

  addTool(server, s, {
    name: `list-${kind}`,
    title: `List ${kind}`,
    description:
      `Lists the ${KINDS[kind].what} of your current team, oldest first, a page at a time. ` +
      "Pass next_cursor back as cursor while it is not null. Filter with name (substring)" +
      (filters.length ? ` and ${filters.join(", ")} (exact).` : "."),
    input: z.strictObject({
      ...pageInput,
      name: z.string().max(200).optional().describe(
        kind === "gateways"
          ? "Only gateways whose name or code contains this text (case-insensitive)."
          : `Only ${kind} whose name contains this text (case-insensitive).`,
      ),
      ...Object.fromEntries(
        filters.map((f) => [f, z.string().optional().describe(`Only ${kind} with this ${f}.`)]),
      ),
    }),
    output: z.object({
      items: z.array(recordOut).describe(`The ${kind} of this page.`),
      next_cursor: z.string().nullable().describe(
        "Pass as cursor for the next page; null at the end.",
      ),
    }),
    hints: READ,
    run: async (args, p) => {
      const a = args as Record<string, unknown>;
      const where = Object.fromEntries(filters.map((f) => [f, a[f] as string | undefined]));
      const page = await s.resources.find(kind, p.team.id, {
        limit: args.limit as number,
        cursor: args.cursor as string | undefined,
        name: a.name as string | undefined,
        where,
      });
      if (kind !== "gateways") return page;
      // Gateways show their rollback pin in lists too: a pinned one does not get pipeline changes.
      const items = await Promise.all(
        page.items.map(async (g) => ({ ...g, pin: await pinOf(s, g as GatewayRecord) })),
      );
      return { ...page, items };
    },
  });

  addTool(server, s, {
    name: `get-${one}`,
    title: `Get ${aOne}`,
    description: `Reads one ${one} of your current team (or shared with it) by id. ` +
      "`access` says owner, read or write.",
    input: z.strictObject({ id: idInput(kind) }),
    output: z.object({
      record: recordOut,
      access: z.enum(["owner", "read", "write"]),
      ...extras,
    }),
    hints: READ,
    run: async (args, p) => {
      const seen = await s.resources.visible(kind, p.team.id, args.id as string);
      if (!seen) throw new StoreError("not_found", `${one} not found`);
      const record = await view(seen.record, seen.access === "owner");
      return { record, access: seen.access, ...await extrasOf(s, kind, record, p.team.id) };
    },
  });

  addTool(server, s, {
    name: `create-${one}`,
    title: `Create ${aOne}`,
    description: `Creates ${aOne} in your current team. ${CREATE_NOTES[kind]}`,
    input: z.strictObject(described(createSchema.shape, kind)),
    output: z.object({ record: recordOut, ...extras }),
    hints: CREATE,
    run: async (args, p) => {
      const parsed = createSchema.safeParse(args);
      if (!parsed.success) return invalidInput(parsed.error);
      const body = parsed.data as Record<string, unknown>;
      const created = await s.resources.createFrom(kind, p.team.id, p.actor, body);
      const record = await view(created, true);
      return { record, ...await extrasOf(s, kind, record, p.team.id) };
    },
  });

  addTool(server, s, {
    name: `update-${one}`,
    title: `Update ${aOne}`,
    description: `Changes fields of ${aOne}; fields left out stay as they are. ` +
      "Pass if_revision (the revision you read) to fail instead of overwriting a newer change.",
    input: z.strictObject({
      id: idInput(kind),
      if_revision: z.int().min(1).optional().describe(
        "Only update if the record is still at this revision.",
      ),
      ...described(updateSchema.shape, kind),
    }),
    output: z.object({
      record: recordOut,
      access: z.enum(["owner", "read", "write"]),
      ...extras,
    }),
    hints: CHANGE,
    run: async (args, p) => {
      const { id, if_revision, ...rest } = args as Record<string, unknown>;
      const parsed = updateSchema.safeParse(rest);
      if (!parsed.success) return invalidInput(parsed.error);
      const updated = await s.resources.update(
        kind,
        p.team.id,
        p.actor,
        id as string,
        parsed.data as never,
        if_revision as number | undefined,
      );
      const record = await view(updated.record, updated.access === "owner");
      return { record, access: updated.access, ...await extrasOf(s, kind, record, p.team.id) };
    },
  });

  addTool(server, s, {
    name: `delete-${one}`,
    title: `Delete ${aOne}`,
    description: `Deletes ${aOne} of your current team for good. Refused while other records ` +
      "use it (the error lists them: detach or update those first)." +
      (kind === "gateways" ? " Also ends the gateway's machine tokens." : ""),
    input: z.strictObject({ id: idInput(kind) }),
    output: z.object({
      deleted: z.object({ kind: z.string(), id: z.string(), name: z.string() }),
    }),
    hints: DESTROY,
    run: async (args, p) => {
      const r = await s.resources.delete(kind, p.team.id, p.actor, args.id as string);
      return { deleted: { kind, id: r.id, name: r.name } };
    },
  });
}

/** A tool error listing zod's problems by field. */
export function invalidInput(error: z.ZodError) {
  const lines = error.issues.map((i) => `- ${i.path.join(".") || "(input)"}: ${i.message}`);
  return fail(
    `validation_failed: invalid input\n${
      lines.join("\n")
    }\nHow to fix: correct these fields and call again.`,
  );
}

const CREATE_NOTES: Record<ResourceKind, string> = {
  gateways:
    "`code` is how the gateway identifies itself when it authorizes; creating a gateway that exists fails with name_taken (list-gateways with name=<code> first to ensure one).",
  services:
    "A protocol definition: endpoint_types and backend_types constrain the endpoints and backends that use it.",
  endpoints:
    "`type` must be one of the service's endpoint_types; options are checked against the gateway's schema.",
  backends:
    "`type` must be one of the service's backend_types; options, targets and settings are checked against the gateway's schema.",
  middleware:
    "transform and metadata_transform middleware need transform_id (create-transform first); options apply, fail_on_error, max_steps (the run budget), debug. Security middleware take options only (no transform_id): api_key, basic_auth, jwt_auth (smart = true for SMART scopes), ip_filter, rate_limit, request_filter, cors, headers; put cors first and authentication before the rest.",
  transforms:
    "`spec` is a JOLT chain compiled with the gateway's engine on save (try validate-transform-spec and preview-transform first).",
  pipelines:
    "Give endpoint_ids, middleware_ids (in order) and backend_ids now or attach them later; with gateway_id set, the gateway's whole configuration is validated with the change.",
  networks: "A listener with optional HTTP/3 and tunnel settings; endpoints reference it by id.",
};
