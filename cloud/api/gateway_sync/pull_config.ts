/** The route GET /api/gateway/config: Pull the desired configuration (versioned; ETag, If-None-Match, long poll). */
import type { Context } from "hono";
import type { Services } from "../../services.ts";
import { K } from "../../store/mod.ts";
import type { VersionedConfig } from "../../resources/mod.ts";
import type { Clock } from "../../clock.ts";
import type { AppEnv } from "../env.ts";
import { ApiError } from "../errors.ts";
import { machineOf } from "../middleware.ts";
import { ability, configEtag, GATEWAY_ID, machine, matches, UNAUTHORIZED } from "./common.ts";
import { type Route, route } from "../registry.ts";

const CONFIG_EXAMPLE = {
  gateway_id: GATEWAY_ID,
  version: 3,
  etag: '"9f2c1e0b7a6d5c4b3a29181706f5e4d3"',
  generated_at: "2025-01-16T08:00:00.000Z",
  toml:
    '# Gateway configuration\n\ntransforms_path = "transforms"\n\n[cloud]\nenabled = true\nurl = "https://cloud.example.com"\n\n[endpoints.fhir_in]\nservice = "fhir"\n\n[endpoints.fhir_in.options]\npath_prefix = "/fhir"\n…',
  transforms: [{
    id: "0190f5e3-aaaa-7bbb-8ccc-dddddddddddd",
    name: "patient_to_fhir",
    file: "0190f5e3-aaaa-7bbb-8ccc-dddddddddddd.json",
    sha256: "3b1f…",
    url: "https://cloud.example.com/api/gateway/transforms/0190f5e3-aaaa-7bbb-8ccc-dddddddddddd",
  }],
  pipelines: ["fhir_ingest"],
  skipped: [],
};

/** Waits until the team's data changes, `ms` pass on the service's clock, or `signal` aborts. */
async function waitForChange(
  s: Services,
  teamId: string,
  seen: string | null,
  ms: number,
  signal: AbortSignal,
) {
  const clock = s.options.clock;
  const reader = s.store.kv.watch([K.revision(teamId)]).getReader();
  let timer: ReturnType<Clock["setTimeout"]> | undefined;
  const stop = new Promise<void>((resolve) => {
    timer = clock.setTimeout(resolve, ms);
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
  try {
    while (!signal.aborted) {
      const next = await Promise.race([reader.read(), stop.then(() => null)]);
      if (!next || next.done) return;
      if (next.value[0].versionstamp !== seen) return;
    }
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
    await reader.cancel().catch(() => {});
  }
}

/** A configuration's answer as JSON text, and the parts it was rendered from. */
interface Rendered {
  from: VersionedConfig;
  text: string;
}

/** Rendered answers by gateway id (bounded: the oldest goes first). */
const rendered = new Map<string, Rendered>();
const RENDERED_LIMIT = 1000;

/**
 * The JSON text of a configuration's answer, rendered once per configuration: the generated
 * configuration is cached per team revision (resources), so a pull of an unchanged one gets the
 * same parts (the same strings and arrays) and is sent the text made for them before.
 */
function configJson(s: Services, gatewayId: string, config: VersionedConfig): string {
  const hit = rendered.get(gatewayId);
  const f = hit?.from;
  if (
    f && f.toml === config.toml && f.sha256 === config.sha256 && f.version === config.version &&
    f.generated_at === config.generated_at && f.transforms === config.transforms &&
    f.pipelines === config.pipelines && f.skipped === config.skipped
  ) {
    return hit!.text;
  }
  const text = JSON.stringify(configBody(s, gatewayId, config));
  rendered.delete(gatewayId);
  if (rendered.size >= RENDERED_LIMIT) rendered.delete(rendered.keys().next().value!);
  rendered.set(gatewayId, { from: config, text });
  return text;
}

function configBody(s: Services, gatewayId: string, config: VersionedConfig) {
  return {
    gateway_id: gatewayId,
    version: config.version,
    etag: configEtag(config),
    generated_at: config.generated_at,
    toml: config.toml,
    transforms: config.transforms.map((t) => ({
      ...t,
      url: `${s.options.baseUrl}/api/gateway/transforms/${t.id}`,
    })),
    pipelines: config.pipelines,
    skipped: config.skipped,
  };
}

/** GET /api/gateway/config: its documentation, its middleware and its handler. */
export const pullConfigRoute: Route = route(
  {
    method: "get",
    path: "/api/gateway/config",
    tag: "Gateway sync",
    summary: "Pull the desired configuration (versioned; ETag, If-None-Match, long poll)",
    description:
      "The TOML is generated from the pipelines placed on this gateway and validated with the gateway's own validator. With `If-None-Match` equal to the current ETag the answer is 304; with `wait=N` as well, the request is held up to N seconds (at most 60) and answers as soon as the configuration changes. `Accept: application/toml` answers the TOML text alone (headers `ETag` and `X-Config-Version`).",
    auth: ["machine"],
    query: [{
      name: "wait",
      type: "integer",
      description: "Long poll: seconds to wait for a change when If-None-Match matches (0-60).",
    }],
    headers: [{
      name: "If-None-Match",
      type: "string",
      description: "The ETag of the configuration the gateway runs.",
    }],
    responses: {
      200: {
        description: "The configuration",
        example: CONFIG_EXAMPLE,
        headers: { ETag: CONFIG_EXAMPLE.etag, "X-Config-Version": "3" },
      },
      304: { description: "Not modified (after the wait, if any)" },
      401: UNAUTHORIZED,
      409: {
        description: "The records do not form a valid configuration",
        example: {
          error: {
            code: "config_invalid",
            message: "endpoints.a.options.path_prefix: …",
            problems: [],
          },
        },
      },
    },
  },
  machine,
  ability("config:read"),
  pullConfig,
);

/**
 * GET /api/gateway/config:
 * Pull the desired configuration (versioned; ETag, If-None-Match, long poll).
 */
async function pullConfig(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const m = machineOf(c);
  await s.store.gatewayState.seen(m.teamId, m.gatewayId);
  const waitText = c.req.query("wait");
  const wait = waitText === undefined ? 0 : Number(waitText);
  if (!Number.isInteger(wait) || wait < 0 || wait > s.options.maxLongPollSeconds) {
    throw new ApiError(
      422,
      "validation_failed",
      `wait: an integer 0-${s.options.maxLongPollSeconds}`,
      {
        fields: [{ field: "wait", message: `an integer 0-${s.options.maxLongPollSeconds}` }],
      },
    );
  }
  const deadline = s.options.clock.now() + wait * 1000;
  // The request's signal aborts when the client goes away (ending the wait early).
  const signal = AbortSignal.any([c.req.raw.signal, s.shutdown]);
  while (true) {
    const rev = (await s.store.revision(m.teamId)).versionstamp;
    const config = await s.resources.gatewayConfig(m.teamId, m.gatewayId, rev ?? "0");
    const etag = configEtag(config);
    c.header("ETag", etag);
    c.header("X-Config-Version", String(config.version));
    c.header("Cache-Control", "no-cache");
    if (matches(c.req.header("if-none-match"), etag)) {
      const left = deadline - s.options.clock.now();
      if (left <= 0 || signal.aborted) return c.body(null, 304);
      await waitForChange(s, m.teamId, rev, left, signal);
      continue;
    }
    if (config.toml === null) {
      throw new ApiError(
        409,
        "config_invalid",
        `the gateway's records do not form a valid configuration: ${config.problems[0]?.path}: ${
          config.problems[0]?.message
        }`,
        { details: { problems: config.problems } },
      );
    }
    if (/application\/toml/i.test(c.req.header("accept") ?? "")) {
      return c.body(config.toml, 200, { "Content-Type": "application/toml; charset=utf-8" });
    }
    return c.body(configJson(s, m.gatewayId, config), 200, {
      "Content-Type": "application/json",
    });
  }
}
