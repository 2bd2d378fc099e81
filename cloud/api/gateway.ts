/**
 * The gateway side: `POST /api/gateway/authorize` (SPEC) exchanges an API or user token and a
 * gateway code for a 30-day machine token; every other `/api/gateway/*` route is called by the
 * gateway with that machine token: pull the desired configuration (ETag, long poll), report apply
 * outcomes and status, upload the local configuration, download transforms, renew the token.
 */
import type { Context, MiddlewareHandler } from "hono";
import { z } from "zod";
import { issueMachineToken } from "../auth/mod.ts";
import { iso } from "../clock.ts";
import type { Services } from "../services.ts";
import {
  describeUrlCredentials,
  redactConfigText,
  validateConfigText,
} from "../../shared/gateway_config/mod.ts";
import { GATEWAY_CODE_PATTERN, type MachineAbility } from "../../shared/mod.ts";
import { K, MAX_REPORTED_CONFIG_BYTES, type StatusReport } from "../store/mod.ts";
import { transformText, urlCredentialMessage, type VersionedConfig } from "../resources/mod.ts";
import { readBytes, readJson } from "./body.ts";
import type { AppEnv } from "./env.ts";
import { ApiError, forbidden, notFound } from "./errors.ts";
import { machineOf, requireBearer, userOf } from "./middleware.ts";
import type { Registry } from "./registry.ts";

const GATEWAY_ID = "0190f5e1-2b3c-7d4e-8f5a-6b7c8d9e0f1a";
const PAYLOAD_EXAMPLE = {
  machine_token: "eyJhbGciOiJSUzI1NiIsImtpZCI6Ims…",
  expires_at: "2025-02-14T10:00:00.000Z",
  gateway_id: GATEWAY_ID,
  gateway_code: "edge-berlin-1",
  abilities: [
    "config:read",
    "config:report",
    "config:upload",
    "status:write",
    "transforms:read",
    "token:renew",
  ],
};
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
const UNAUTHORIZED = {
  description: "Missing, malformed, expired or revoked token",
  example: { error: { code: "unauthorized", message: "machine token revoked" } },
};

const authorizeBody = z.strictObject({
  gateway_code: z.string().regex(
    GATEWAY_CODE_PATTERN,
    "1-64 letters, digits, `.`, `_` or `-`, starting with a letter or digit",
  ),
  name: z.string().min(1).max(200).optional(),
});
const applyBody = z.strictObject({
  version: z.int().min(1),
  status: z.enum(["applied", "failed"]),
  errors: z.array(
    z.strictObject({ path: z.string().max(500).optional(), message: z.string().max(2000) }),
  ).max(100).default([]),
});
const statusBody = z.strictObject({
  health: z.enum(["healthy", "degraded", "unhealthy"]),
  software_version: z.string().min(1).max(100),
  uptime_secs: z.number().min(0),
  config_version: z.int().min(0).nullable().default(null),
  pipelines: z.array(
    z.strictObject({
      name: z.string().max(100),
      requests: z.int().min(0),
      errors: z.int().min(0),
      /** Cumulative milliseconds spent on the pipeline's requests (mean latency over time). */
      duration_ms_sum: z.number().min(0).optional(),
    }),
  ).max(500).default([]),
  error_counts: z.record(z.string().max(100), z.int().min(0)).default({}),
  checks: z.array(z.strictObject({
    name: z.string().max(100),
    status: z.enum(["pass", "warn", "fail"]),
    message: z.string().max(1000).optional(),
  })).max(100).default([]),
});
const uploadJson = z.strictObject({ toml: z.string() });

/** Requires `ability` on the caller's machine token. */
function ability(a: MachineAbility): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!machineOf(c).abilities.includes(a)) {
      throw forbidden(`this machine token lacks the ${a} ability`);
    }
    await next();
  };
}

/** The ETag of a configuration. */
export function configEtag(config: { sha256: string }): string {
  return `"${config.sha256.slice(0, 32)}"`;
}

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.trim() === "*" ||
    ifNoneMatch.split(",").map((t) => t.trim().replace(/^W\//, "")).includes(etag);
}

/** Waits until the team's data changes, `ms` pass, or `signal` aborts. */
async function waitForChange(
  s: Services,
  teamId: string,
  seen: string | null,
  ms: number,
  signal: AbortSignal,
) {
  const reader = s.store.kv.watch([K.revision(teamId)]).getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
  try {
    while (!signal.aborted) {
      const next = await Promise.race([reader.read(), stop.then(() => null)]);
      if (!next || next.done) return;
      if (next.value[0].versionstamp !== seen) return;
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => {});
  }
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

/** Authorize accepts user tokens and API tokens; every other route a machine token. */
const users = requireBearer("api_token", "user_token");
const machine = requireBearer("machine");

/** Mounts the authorize route and the machine-token routes. */
export function mountGateway(reg: Registry): void {
  reg.group("/api/gateway", (g) => {
    g.add(
      {
        method: "post",
        path: "/api/gateway/authorize",
        tag: "Gateway authorization",
        summary:
          "Exchange an API token or user token and a gateway code for a 30-day machine token",
        description:
          "Creates the gateway in the caller's current team when no gateway has this code (201), else issues a new token for the existing one (200). Earlier tokens of the gateway stay valid until they expire or are revoked.",
        auth: ["api_token", "user_token"],
        body: { schema: authorizeBody, example: { gateway_code: "edge-berlin-1" } },
        responses: {
          200: { description: "Machine token for an existing gateway", example: PAYLOAD_EXAMPLE },
          201: { description: "Gateway created; machine token", example: PAYLOAD_EXAMPLE },
          401: UNAUTHORIZED,
          422: {
            description: "Bad gateway code",
            example: {
              error: {
                code: "validation_failed",
                message: "invalid body: gateway_code: 1-64 letters…",
                fields: [{ field: "gateway_code", message: "1-64 letters…" }],
              },
            },
          },
        },
      },
      users,
      authorize,
    );
    g.add(
      {
        method: "get",
        path: "/api/gateway/self",
        tag: "Gateway sync",
        summary:
          "The gateway and token the machine token stands for (check a token before storing it)",
        auth: ["machine"],
        responses: {
          200: {
            description: "The gateway",
            example: {
              gateway_id: GATEWAY_ID,
              gateway_code: "edge-berlin-1",
              name: "edge-berlin-1",
              team_id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f11",
              token: {
                issued_at: "2025-01-15T10:00:00.000Z",
                expires_at: PAYLOAD_EXAMPLE.expires_at,
                abilities: PAYLOAD_EXAMPLE.abilities,
              },
            },
          },
          401: UNAUTHORIZED,
        },
      },
      machine,
      gatewaySelf,
    );
    g.add(
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
    g.add(
      {
        method: "post",
        path: "/api/gateway/config/apply",
        tag: "Gateway sync",
        summary: "Report the outcome of applying a configuration version",
        auth: ["machine"],
        body: {
          schema: applyBody,
          example: {
            version: 3,
            status: "failed",
            errors: [{ path: "backends.pacs.options.port", message: "connection refused" }],
          },
        },
        responses: {
          200: {
            description: "Recorded",
            example: {
              gateway_id: GATEWAY_ID,
              status: "degraded",
              applied_version: 2,
              last_apply: {
                version: 3,
                status: "failed",
                errors: [{ path: "backends.pacs.options.port", message: "connection refused" }],
                reported_at: "2025-01-16T08:00:05.000Z",
              },
            },
          },
          409: {
            description: "A version the cloud never issued",
            example: {
              error: {
                code: "unknown_version",
                message: "version 9 was never issued; the latest is 3",
              },
            },
          },
        },
      },
      machine,
      ability("config:report"),
      reportApply,
    );
    g.add(
      {
        method: "post",
        path: "/api/gateway/status",
        tag: "Gateway sync",
        summary: "Report health and status (software version, uptime, pipelines, error counts)",
        auth: ["machine"],
        body: {
          schema: statusBody,
          example: {
            health: "healthy",
            software_version: "0.12.0",
            uptime_secs: 86400,
            config_version: 3,
            pipelines: [{ name: "fhir_ingest", requests: 1520, errors: 3 }],
            error_counts: { backend_timeout: 2, payload_too_large: 1 },
            checks: [{ name: "pacs", status: "pass" }],
          },
        },
        responses: {
          200: {
            description: "Recorded; the gateway's derived status",
            example: {
              gateway_id: GATEWAY_ID,
              status: "online",
              last_seen_at: "2025-01-16T08:01:00.000Z",
            },
          },
        },
      },
      machine,
      ability("status:write"),
      reportStatus,
    );
    g.add(
      {
        method: "put",
        path: "/api/gateway/config/local",
        tag: "Gateway sync",
        summary: "Upload the gateway's local configuration (stored as its reported configuration)",
        description:
          'Send the TOML as `application/toml` or `text/plain` (or JSON `{"toml": …}`), at most 512 KiB. It is stored whatever it holds, except credentials: a literal value of a secret field, and the userinfo or secret-looking query parameters of any URL, are replaced by `<redacted>` first; `problems` lists what the cloud\'s validator found, and names each URL it redacted.',
        auth: ["machine"],
        body: {
          contentType: "application/toml",
          example: '[endpoints.api]\nservice = "http"\noptions = { path_prefix = "/api" }\n',
        },
        responses: {
          200: {
            description: "Stored",
            example: {
              size: 1234,
              sha256: "5d41402abc4b2a76b9719d911017c592…",
              uploaded_at: "2025-01-16T08:02:00.000Z",
              problems: [],
            },
          },
          413: {
            description: "Over 512 KiB",
            example: {
              error: { code: "payload_too_large", message: "the body is larger than 524288 bytes" },
            },
          },
        },
      },
      machine,
      ability("config:upload"),
      uploadLocalConfig,
    );
    g.add(
      {
        method: "get",
        path: "/api/gateway/transforms/:id",
        tag: "Gateway sync",
        summary: "Download a transform (JOLT spec) that the gateway's configuration uses",
        description:
          "Saved by the gateway as `<id>.json` under `transforms_path`. Only transforms of the gateway's current configuration are served. ETag/If-None-Match supported.",
        auth: ["machine"],
        responses: {
          200: {
            description: "The spec (JSON)",
            contentType: "application/json",
            example: [{ operation: "shift", spec: { name: "patient.name" } }],
          },
          304: { description: "Not modified" },
          404: {
            description: "Not a transform of this gateway's configuration",
            example: { error: { code: "not_found", message: "transform not found" } },
          },
        },
      },
      machine,
      ability("transforms:read"),
      downloadTransform,
    );
    g.add(
      {
        method: "post",
        path: "/api/gateway/token/renew",
        tag: "Gateway sync",
        summary: "Renew the machine token before it expires (a new 30-day token)",
        description:
          "The token used for the call stays valid for one more hour at most (in case the answer is lost), then ends.",
        auth: ["machine"],
        responses: {
          200: { description: "The new token", example: PAYLOAD_EXAMPLE },
          401: UNAUTHORIZED,
        },
      },
      machine,
      ability("token:renew"),
      renewToken,
    );
  });
}

/**
 * POST /api/gateway/authorize:
 * Exchange an API token or user token and a gateway code for a 30-day machine token.
 */
async function authorize(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const body = await readJson(c, authorizeBody);
  let gateway = await s.store.repos.gateways.findByUnique(p.team.id, body.gateway_code);
  let created = false;
  if (!gateway) {
    try {
      gateway = await s.resources.create("gateways", p.team.id, p.actor, {
        code: body.gateway_code,
        name: body.name ?? body.gateway_code,
        description: "",
      });
      created = true;
    } catch (err) {
      gateway = await s.store.repos.gateways.findByUnique(p.team.id, body.gateway_code);
      if (!gateway) throw err;
    }
  }
  const payload = await issueMachineToken(s, gateway, p.actor);
  c.header("Cache-Control", "no-store");
  return c.json(payload, created ? 201 : 200);
}

/**
 * GET /api/gateway/self:
 * The gateway and token the machine token stands for (check a token before storing it).
 */
async function gatewaySelf(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const m = machineOf(c);
  const gw = (await s.store.repos.gateways.get(m.teamId, m.gatewayId))!;
  await s.store.gatewayState.seen(m.teamId, m.gatewayId);
  return c.json({
    gateway_id: gw.id,
    gateway_code: gw.code,
    name: gw.name,
    team_id: gw.team_id,
    token: {
      issued_at: m.token.issued_at,
      expires_at: m.token.expires_at,
      abilities: m.abilities,
    },
  });
}

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
  const deadline = Date.now() + wait * 1000;
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
      const left = deadline - Date.now();
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
    return c.json(configBody(s, m.gatewayId, config));
  }
}

/** POST /api/gateway/config/apply: Report the outcome of applying a configuration version. */
async function reportApply(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const m = machineOf(c);
  const body = await readJson(c, applyBody);
  const current = await s.store.gatewayState.currentVersion(m.teamId, m.gatewayId);
  if (!current || body.version > current.version) {
    throw new ApiError(
      409,
      "unknown_version",
      `version ${body.version} was never issued; the latest is ${
        current?.version ?? "none (pull first)"
      }`,
    );
  }
  const reportedAt = iso(s.options.clock.now());
  await s.store.gatewayState.reportApply(m.teamId, m.gatewayId, {
    ...body,
    reported_at: reportedAt,
  });
  await s.store.configHistory.markApplied(
    m.teamId,
    m.gatewayId,
    body.version,
    body.status,
    reportedAt,
  );
  const view = await s.resources.gatewayView(
    (await s.store.repos.gateways.get(m.teamId, m.gatewayId))!,
  );
  return c.json({
    gateway_id: m.gatewayId,
    status: view.status,
    applied_version: view.applied_version,
    last_apply: view.last_apply,
  });
}

/**
 * POST /api/gateway/status:
 * Report health and status (software version, uptime, pipelines, error counts).
 */
async function reportStatus(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const m = machineOf(c);
  const body = await readJson(c, statusBody);
  if (Object.keys(body.error_counts).length > 200) {
    throw new ApiError(422, "validation_failed", "error_counts: at most 200 keys", {
      fields: [{ field: "error_counts", message: "at most 200 keys" }],
    });
  }
  const now = s.options.clock.now();
  const report: StatusReport = { ...body, reported_at: iso(now) };
  await s.store.gatewayState.reportStatus(m.teamId, m.gatewayId, report);
  await s.store.statusSeries.add(m.teamId, m.gatewayId, {
    at: now,
    uptime_secs: body.uptime_secs,
    health: body.health,
    pipelines: body.pipelines,
  });
  const view = await s.resources.gatewayView(
    (await s.store.repos.gateways.get(m.teamId, m.gatewayId))!,
  );
  return c.json({
    gateway_id: m.gatewayId,
    status: view.status,
    last_seen_at: view.last_seen_at,
  });
}

/**
 * PUT /api/gateway/config/local:
 * Upload the gateway's local configuration (stored as its reported configuration).
 */
async function uploadLocalConfig(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const m = machineOf(c);
  const uploaded = await uploadedText(c);
  // Credentials are never stored: a literal one (an old or a careless gateway) is redacted,
  // in a secret field or inside a URL anywhere, and each is named among the problems.
  const { text, redactions } = redactConfigText(uploaded);
  const result = validateConfigText(text, "reported.toml");
  const problems = result.problems.map((p) => ({
    path: p.path,
    ...(p.line ? { line: p.line } : {}),
    message: p.message,
  }));
  if (redactions.some((r) => r.reason === "secret")) {
    problems.unshift({
      path: "",
      message: "literal credentials were replaced by <redacted> and not stored: " +
        "write environment references such as ${S3_SECRET} in the gateway's files",
    });
  }
  const urls = redactions.filter((r) => r.reason === "url");
  problems.unshift(...urls.map((r) => ({
    path: r.path,
    message: `replaced by <redacted> and not stored: ${
      urlCredentialMessage(describeUrlCredentials(r.found ?? []))
    }`,
  })));
  const meta = await s.store.gatewayState.storeReportedConfig(
    m.teamId,
    m.gatewayId,
    text,
    problems,
  );
  return c.json(meta);
}

/**
 * GET /api/gateway/transforms/:id:
 * Download a transform (JOLT spec) that the gateway's configuration uses.
 */
async function downloadTransform(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const m = machineOf(c);
  const id = c.req.param("id")!;
  const config = await s.resources.gatewayConfig(m.teamId, m.gatewayId);
  const needed = config.transforms.find((t) => t.id === id);
  if (!needed) throw notFound("transform");
  // A rolled-back gateway gets the transform as it was at that version.
  const pinnedText = config.transformTexts?.[id];
  if (pinnedText !== undefined) {
    const etag = `"${needed.sha256.slice(0, 32)}"`;
    c.header("ETag", etag);
    if (matches(c.req.header("if-none-match"), etag)) return c.body(null, 304);
    return c.body(pinnedText, 200, { "Content-Type": "application/json; charset=utf-8" });
  }
  const t = await s.store.repos.transforms.get(m.teamId, id);
  if (!t) throw notFound("transform");
  const etag = `"${t.sha256.slice(0, 32)}"`;
  c.header("ETag", etag);
  if (matches(c.req.header("if-none-match"), etag)) return c.body(null, 304);
  return c.body(transformText(t.spec), 200, {
    "Content-Type": "application/json; charset=utf-8",
  });
}

/**
 * POST /api/gateway/token/renew:
 * Renew the machine token before it expires (a new 30-day token).
 */
async function renewToken(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const m = machineOf(c);
  const gw = (await s.store.repos.gateways.get(m.teamId, m.gatewayId))!;
  const payload = await issueMachineToken(s, gw, m.actor, m.token.jti);
  c.header("Cache-Control", "no-store");
  return c.json(payload);
}

async function uploadedText(c: Context<AppEnv>): Promise<string> {
  const type = c.req.header("content-type") ?? "";
  if (/^application\/json\b/i.test(type)) {
    const body = await readJson(c, uploadJson, MAX_REPORTED_CONFIG_BYTES + 1024);
    if (new TextEncoder().encode(body.toml).byteLength > MAX_REPORTED_CONFIG_BYTES) {
      throw new ApiError(
        413,
        "payload_too_large",
        `the configuration is larger than ${MAX_REPORTED_CONFIG_BYTES} bytes`,
      );
    }
    return body.toml;
  }
  if (!/^(application\/toml|text\/plain)\b/i.test(type)) {
    throw new ApiError(
      415,
      "unsupported_media_type",
      "send the configuration as application/toml or text/plain",
    );
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(
      await readBytes(c, MAX_REPORTED_CONFIG_BYTES),
    );
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(400, "invalid_encoding", "the configuration is not valid UTF-8");
  }
}
