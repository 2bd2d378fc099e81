/**
 * What the MCP server offers besides tools, so that an agent builds pipelines with the right
 * context: resources (the configuration reference of the gateway, each gateway's configuration
 * as the cloud serves it and the one it applied last), a prompt with the build workflow, completions of its arguments and of
 * the resource's gateway id, and `logging/setLevel` (tool failures are logged to the client).
 */
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CompleteRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import {
  BACKEND_SERVICES,
  configReferenceMarkdown,
  ENDPOINT_SERVICES,
} from "../../shared/gateway_config/mod.ts";
import type { UserPrincipal } from "../auth/mod.ts";
import type { GatewayRecord } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { principalOf } from "./results.ts";

/** Endpoint and backend types the prompts offer: the gateway's registry, so a new type is in. */
const INBOUND: string[] = [...ENDPOINT_SERVICES];
const OUTBOUND: string[] = [...BACKEND_SERVICES];

/** URI of the configuration reference resource. */
export const REFERENCE_URI = "docs://gateway/configuration-reference";
/** URI template of a gateway's configuration. */
export const GATEWAY_CONFIG_URI = "gateway://{gateway_id}/configuration";
/** URI template of the configuration a gateway applied last. */
export const APPLIED_CONFIG_URI = "gateway://{gateway_id}/applied-configuration";

/** Up to `limit` gateways of the caller's team (names and ids), for lists and completions. */
async function teamGateways(s: Services, p: UserPrincipal, limit = 100): Promise<GatewayRecord[]> {
  const page = await s.resources.list("gateways", p.team.id, { limit });
  return page.items as GatewayRecord[];
}

/** The caller's principal from a callback's `extra`, or undefined (completions ask without one). */
function callerOf(extra: unknown): UserPrincipal | undefined {
  try {
    return principalOf(extra as Parameters<typeof principalOf>[0]);
  } catch {
    return undefined;
  }
}

/** `resources/list` of a per-gateway resource: one `gateway://<id>/<suffix>` per team gateway. */
function listGateways(s: Services, suffix: string, title: (g: GatewayRecord) => string) {
  return async (extra: unknown) => {
    const p = callerOf(extra);
    if (!p) return { resources: [] };
    return {
      resources: (await teamGateways(s, p)).map((g) => ({
        uri: `gateway://${g.id}/${suffix}`,
        name: `${g.name} ${suffix.replace("-", " ")}`,
        title: title(g),
        mimeType: "application/toml",
      })),
    };
  };
}

/** Registers the resources, the prompt (with completions) of the cloud's MCP server. */
export function addContextFeatures(server: McpServer, s: Services): void {
  server.registerResource(
    "configuration-reference",
    REFERENCE_URI,
    {
      title: "Gateway configuration reference",
      description:
        "Every table and key of a gateway configuration: type, default, example, meaning (the reference of docs/configuration.md).",
      mimeType: "text/markdown",
    },
    (uri: URL) => ({
      contents: [{ uri: uri.href, mimeType: "text/markdown", text: configReferenceMarkdown() }],
    }),
  );

  server.registerResource(
    "gateway-configuration",
    new ResourceTemplate(GATEWAY_CONFIG_URI, {
      list: listGateways(
        s,
        "configuration",
        (g) => `Configuration of gateway ${g.name} (${g.code})`,
      ),
    }),
    {
      title: "A gateway's configuration",
      description:
        "The TOML configuration the cloud serves to a gateway of your team (what it pulls next), with its version in the first line; compare with get-gateway-config-versions for what it applied.",
      mimeType: "application/toml",
    },
    async (uri: URL, vars: Record<string, string | string[]>, extra: unknown) => {
      const p = principalOf(extra as Parameters<typeof principalOf>[0]);
      const id = String(vars.gateway_id);
      const gw = await s.resources.get("gateways", p.team.id, id);
      if (!gw) throw new Error(`no gateway ${id} in your team (list-gateways)`);
      const c = await s.resources.gatewayConfig(p.team.id, gw.id);
      const view = await s.resources.gatewayView(gw);
      const header = `# gateway ${gw.name} (${gw.code}): configuration version ${c.version}` +
        `, applied by the gateway: ${view.applied_version ?? "none yet"}\n` +
        (c.pinnedTo
          ? `# rolled back: the content of version ${c.pinnedTo}; pipeline changes are not ` +
            "published until resume-gateway-config\n"
          : "");
      return { contents: [{ uri: uri.href, mimeType: "application/toml", text: header + c.toml }] };
    },
  );

  server.registerResource(
    "gateway-applied-configuration",
    new ResourceTemplate(APPLIED_CONFIG_URI, {
      list: listGateways(
        s,
        "applied-configuration",
        (g) => `Configuration gateway ${g.name} (${g.code}) applied last`,
      ),
    }),
    {
      title: "The configuration a gateway applied",
      description:
        "The TOML of the configuration version the gateway reported applying last (from the cloud's version history), with that version and when in the first line; compare with the gateway's configuration resource to see what it has not applied yet.",
      mimeType: "application/toml",
    },
    async (uri: URL, vars: Record<string, string | string[]>, extra: unknown) => {
      const p = principalOf(extra as Parameters<typeof principalOf>[0]);
      const id = String(vars.gateway_id);
      const gw = await s.resources.get("gateways", p.team.id, id);
      if (!gw) throw new Error(`no gateway ${id} in your team (list-gateways)`);
      const state = await s.store.gatewayState.get(p.team.id, gw.id);
      const applied = state.applied_version;
      const snapshot = applied === null
        ? null
        : await s.store.configHistory.snapshot(p.team.id, gw.id, applied);
      const text = applied === null
        ? `# gateway ${gw.name} (${gw.code}) has not applied a configuration from the cloud yet\n`
        : snapshot === null
        ? `# gateway ${gw.name} (${gw.code}) applied version ${applied}, which is no longer kept\n`
        : `# gateway ${gw.name} (${gw.code}): applied version ${applied} at ${
          state.last_apply?.reported_at ?? "an unknown time"
        }\n${snapshot.toml ?? ""}`;
      return { contents: [{ uri: uri.href, mimeType: "application/toml", text }] };
    },
  );

  server.registerPrompt(
    "build-pipeline",
    {
      title: "Build a pipeline",
      description:
        "The steps to build a pipeline on a gateway from an empty team: service, endpoint, backend, optional JOLT middleware, pipeline, review of the generated TOML.",
      argsSchema: {
        gateway: z.string().describe(
          "Name of the gateway the pipeline runs on (an existing one, or a new name).",
        ),
        inbound: z.string().describe(
          `What the gateway receives: ${INBOUND.join(", ")}.`,
        ),
        outbound: z.string().describe(
          `Where it sends: ${OUTBOUND.join(", ")}.`,
        ),
        service: z.string().optional().describe("Name of an existing service to reuse."),
        transform: z.string().optional().describe(
          "Name of an existing transform to apply on the way in.",
        ),
      },
    },
    (
      { gateway, inbound, outbound, service, transform }: {
        gateway: string;
        inbound: string;
        outbound: string;
        service?: string;
        transform?: string;
      },
    ) => ({
      messages: [{
        role: "user",
        content: {
          type: "text",
          text: buildWorkflow(gateway, inbound, outbound, service, transform),
        },
      }],
    }),
  );

  // Completions read the caller's team (the SDK's own completers are not told who asks).
  server.server.setRequestHandler(
    CompleteRequestSchema,
    (async (request: { params: CompletionParams }, extra: unknown) => {
      const values = await completionsFor(s, callerOf(extra), request.params);
      return {
        completion: {
          values: values.slice(0, 100),
          total: values.length,
          hasMore: values.length > 100,
        },
      };
    }) as never,
  );
}

/** What `completion/complete` asks about. */
interface CompletionParams {
  ref: { type: string; name?: string; uri?: string };
  argument: { name: string; value: string };
}

/** Values of one argument that start with what was typed, from the team where they are names. */
async function completionsFor(
  s: Services,
  p: UserPrincipal | undefined,
  params: CompletionParams,
): Promise<string[]> {
  const typed = params.argument.value.toLowerCase();
  const starting = (values: string[]) =>
    [...new Set(values)].filter((v) => v.toLowerCase().startsWith(typed)).sort();
  const names = async (kind: "gateways" | "services" | "transforms", field: "name" | "id") => {
    if (!p) return [];
    const page = await s.resources.list(kind, p.team.id, { limit: 500 });
    return page.items.map((r) => String((r as unknown as Record<string, unknown>)[field]));
  };
  const { ref, argument } = params;
  if (ref.type === "ref/prompt" && ref.name === "build-pipeline") {
    switch (argument.name) {
      case "gateway":
        return starting(await names("gateways", "name"));
      case "service":
        return starting(await names("services", "name"));
      case "transform":
        return starting(await names("transforms", "name"));
      case "inbound":
        return starting(INBOUND);
      case "outbound":
        return starting(OUTBOUND);
    }
  }
  if (
    ref.type === "ref/resource" &&
    (ref.uri === GATEWAY_CONFIG_URI || ref.uri === APPLIED_CONFIG_URI) &&
    argument.name === "gateway_id"
  ) {
    return starting(await names("gateways", "id"));
  }
  return [];
}

/** The SPEC's build workflow as a prompt. */
export function buildWorkflow(
  gateway: string,
  inbound: string,
  outbound: string,
  service?: string,
  transform?: string,
): string {
  return [
    `Build a pipeline on gateway "${gateway}" that receives ${inbound} and sends to ${outbound}.`,
    "Use the gateway-cloud tools of this server, in this order, and check each answer before going on:",
    `1. list-gateways; if "${gateway}" is missing, create-gateway with that name.`,
    service
      ? `2. Reuse the service "${service}" (list-services gives its id); it must allow endpoint type "${inbound}" and backend type "${outbound}" (update-service otherwise).`
      : `2. list-services; reuse a service whose endpoint_types include "${inbound}" and whose backend_types include "${outbound}", or create-service with them.`,
    `3. create-endpoint of type "${inbound}" (options per the resource ${REFERENCE_URI}).`,
    `4. create-backend of type "${outbound}" with its options (secrets only as \${VARIABLE} references).`,
    transform
      ? `5. Apply the transform "${transform}": create-middleware of type transform with its transform_id (list-transforms), try it first with preview-transform, then attach-middleware.`
      : "5. If the data must change on the way: create-transform with the JOLT spec, try it with preview-transform, then create-middleware of type transform and attach-middleware.",
    "6. create-pipeline with the gateway_id, then attach-endpoint and attach-backend.",
    "7. generate-pipeline-toml, and fix every problem it lists; then generate-gateway-toml to review the whole file the gateway will pull.",
    "Report the pipeline's id and the TOML you reviewed.",
  ].join("\n");
}
