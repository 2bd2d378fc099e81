/**
 * The token endpoints: the device flow of gwcli (RFC 8628) and the token endpoint's other grants,
 * the authorization code and refresh token grants of the MCP authorization flow (their
 * registration, consent and revocation live in oauth_clients.ts and the UI).
 */
import type { Context } from "hono";
import {
  DEVICE_CLIENTS,
  DEVICE_GRANT_TYPE,
  exchangeCode,
  type OAuthFailure,
  pollDeviceToken,
  refreshGrant,
  startDeviceAuthorization,
  type TokenAnswer,
} from "../auth/mod.ts";
import type { Services } from "../services.ts";
import type { AppEnv } from "./env.ts";
import { clientIp } from "./middleware.ts";
import {
  oauthError,
  oauthLimited,
  oauthParams,
  TOKEN_ENDPOINT_429,
  tokenEndpointParams,
} from "./oauth_params.ts";
import type { Registry } from "./registry.ts";

/** The grant types of the token endpoint. */
const GRANT_TYPES = [DEVICE_GRANT_TYPE, "authorization_code", "refresh_token"];

/** Answers a token request of the MCP flow. */
function tokenAnswer(c: Context<AppEnv>, result: TokenAnswer | OAuthFailure): Response {
  if (!result.ok) return oauthError(c, result.status ?? 400, result.error, result.description);
  c.header("Cache-Control", "no-store");
  c.header("Pragma", "no-cache");
  const { ok: _, ...body } = result;
  return c.json(body);
}

/** Mounts `/oauth/device/code` and `/oauth/token`. */
export function mountOAuth(reg: Registry, s: Services): void {
  reg.add({
    method: "post",
    path: "/oauth/device/code",
    tag: "Device login",
    summary: "Start a device login (RFC 8628 device authorization request)",
    description:
      "The device shows `user_code` and `verification_uri`; a signed-in user approves it in the browser while the device polls the token endpoint every `interval` seconds.",
    auth: ["none"],
    body: {
      contentType: "application/x-www-form-urlencoded",
      example: "client_id=gwcli",
      description: "`client_id` (required, `gwcli`), `scope` (optional, informative).",
    },
    responses: {
      200: {
        description: "Device and user codes",
        example: {
          device_code: "GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS",
          user_code: "WDJB-MJHT",
          verification_uri: "https://cloud.example.com/device",
          verification_uri_complete: "https://cloud.example.com/device?user_code=WDJB-MJHT",
          expires_in: 600,
          interval: 5,
        },
      },
      400: {
        description: "Missing client_id",
        example: { error: "invalid_request", error_description: "client_id is required" },
      },
      401: {
        description: "Unknown client",
        example: { error: "invalid_client", error_description: "unknown client_id" },
      },
      429: {
        description: "Too many requests from this address (Retry-After)",
        example: {
          error: "rate_limited",
          error_description: "too many requests: retry after 12 s",
        },
      },
    },
  }, async (c) => {
    const tooMany = oauthLimited(
      c,
      `device-code:${clientIp(c)}`,
      s.options.rateLimits.deviceCodePerIp,
    );
    if (tooMany) return tooMany;
    const p = await oauthParams(c);
    if (p instanceof Response) return p;
    if (!p.client_id) return oauthError(c, 400, "invalid_request", "client_id is required");
    if (!Object.hasOwn(DEVICE_CLIENTS, p.client_id)) {
      return oauthError(c, 401, "invalid_client", "unknown client_id");
    }
    const auth = await startDeviceAuthorization(s, p.client_id, p.scope?.slice(0, 200) ?? null);
    c.header("Cache-Control", "no-store");
    return c.json(auth);
  });

  reg.add({
    method: "post",
    path: "/oauth/token",
    tag: "Device login",
    summary: "Token endpoint: device login polls, MCP authorization codes and refresh tokens",
    description:
      "**Device flow** (`grant_type` = the device-code grant type, gwcli): answers 400 with `authorization_pending` until the user approves, `slow_down` when polled faster than the interval (which then grows by 5 s), `access_denied` when the user denied, `expired_token` after `expires_in`, and `invalid_grant` for an unknown or already used code. On approval: a user token (RS256 JWT, about 24 h).\n\n" +
      "**MCP clients** (`authorization_code` with `code`, `client_id`, `code_verifier`, `redirect_uri`, optional `resource`; `refresh_token` with `refresh_token`, `client_id`): an access token for `/mcp/cloud` only (1 h) and a refresh token that is replaced at every use (a replaced one presented again ends the grant). Public clients: no client secret.",
    auth: ["none"],
    body: {
      contentType: "application/x-www-form-urlencoded",
      example: `grant_type=${
        encodeURIComponent(DEVICE_GRANT_TYPE)
      }&device_code=GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS&client_id=gwcli`,
      description:
        "`grant_type` (the device-code grant type, `authorization_code` or `refresh_token`) and the parameters of that grant.",
    },
    responses: {
      200: {
        description:
          "The user token (device flow), or an MCP access token with `refresh_token` and `scope`",
        example: {
          access_token: "eyJhbGciOiJSUzI1NiIsImtpZCI6Ims…",
          token_type: "Bearer",
          expires_in: 86400,
        },
      },
      401: {
        description: "Unknown client_id (MCP grants)",
        example: { error: "invalid_client", error_description: "unknown client_id" },
      },
      400: {
        description:
          "Pending, slow down, denied, expired, a bad code, verifier or refresh token, or a bad request",
        example: {
          error: "authorization_pending",
          error_description: "waiting for the user to approve",
        },
      },
      429: TOKEN_ENDPOINT_429,
    },
  }, async (c) => {
    const p = await tokenEndpointParams(c, s);
    if (p instanceof Response) return p;
    if (p.grant_type === "authorization_code") return tokenAnswer(c, await exchangeCode(s, p));
    if (p.grant_type === "refresh_token") return tokenAnswer(c, await refreshGrant(s, p));
    if (p.grant_type !== DEVICE_GRANT_TYPE) {
      return oauthError(
        c,
        400,
        "unsupported_grant_type",
        `grant_type must be one of ${GRANT_TYPES.join(", ")}`,
      );
    }
    if (!p.device_code || !p.client_id) {
      return oauthError(c, 400, "invalid_request", "device_code and client_id are required");
    }
    const result = await pollDeviceToken(s, p.device_code, p.client_id);
    if (!result.ok) return oauthError(c, 400, result.error, result.description);
    c.header("Cache-Control", "no-store");
    c.header("Pragma", "no-cache");
    const { ok: _, ...body } = result;
    return c.json(body);
  });
}
