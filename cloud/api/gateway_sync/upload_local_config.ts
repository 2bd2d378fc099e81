/** The route PUT /api/gateway/config/local: Upload the gateway's local configuration (stored as its reported configuration). */
import type { Context } from "hono";
import {
  describeUrlCredentials,
  redactConfigText,
  validateConfigText,
} from "../../../shared/gateway_config/mod.ts";
import { MAX_REPORTED_CONFIG_BYTES } from "../../store/mod.ts";
import { urlCredentialMessage } from "../../resources/mod.ts";
import { readBytes, readJson } from "../body.ts";
import type { AppEnv } from "../env.ts";
import { ApiError } from "../errors.ts";
import { machineOf } from "../middleware.ts";
import { ability, machine, uploadJson } from "./common.ts";
import { type Route, route } from "../registry.ts";

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

/** PUT /api/gateway/config/local: its documentation, its middleware and its handler. */
export const uploadLocalConfigRoute: Route = route(
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
