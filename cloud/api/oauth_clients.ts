/**
 * The client side of the MCP authorization flow: dynamic client registration (RFC 7591) and token
 * revocation (RFC 7009). Both take no account: registration makes a public client that can do
 * nothing until a signed-in user approves it on the consent page.
 */
import { cors } from "hono/cors";
import { z } from "zod";
import { registerClient, revokeToken } from "../auth/mod.ts";
import type { Services } from "../services.ts";
import { readBytes } from "./body.ts";
import { ApiError } from "./errors.ts";
import { clientIp } from "./middleware.ts";
import {
  oauthError,
  oauthLimited,
  TOKEN_ENDPOINT_429,
  tokenEndpointParams,
} from "./oauth_params.ts";
import type { Registry } from "./registry.ts";

/** Largest registration document. */
const MAX_REGISTRATION_BYTES = 16 * 1024;

/** Paths that browser-based MCP clients call across origins (no cookies are involved). */
export const OAUTH_CORS_PATHS = [
  "/.well-known/oauth-protected-resource/*",
  "/.well-known/oauth-protected-resource",
  "/.well-known/oauth-authorization-server",
  "/.well-known/openid-configuration",
  "/.well-known/jwks.json",
  "/oauth/register",
  "/oauth/token",
  "/oauth/revoke",
];

/** The registration document as documented (the handler checks it itself, with OAuth errors). */
const registrationBody = z.looseObject({
  redirect_uris: z.array(z.string()).min(1).max(10),
  client_name: z.string().optional(),
  client_uri: z.string().optional(),
  grant_types: z.array(z.string()).optional(),
  response_types: z.array(z.string()).optional(),
  token_endpoint_auth_method: z.string().optional(),
  scope: z.string().optional(),
});

const REGISTRATION_EXAMPLE = {
  client_name: "Claude Desktop",
  redirect_uris: ["http://127.0.0.1:33418/callback"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
};

/** Mounts `/oauth/register` and `/oauth/revoke`, and CORS on the flow's endpoints. */
export function mountOAuthClients(reg: Registry, s: Services): void {
  const openCors = cors({
    origin: "*",
    allowMethods: ["GET", "POST", "OPTIONS"],
    allowHeaders: ["Content-Type", "Authorization", "MCP-Protocol-Version"],
    maxAge: 600,
  });
  for (const path of OAUTH_CORS_PATHS) reg.use(path, openCors);

  reg.add({
    method: "post",
    path: "/oauth/register",
    tag: "MCP authorization",
    summary: "Register an MCP client (RFC 7591 dynamic client registration)",
    description:
      "Makes a public client (no secret; `token_endpoint_auth_method` is always `none`) with the authorization code and refresh token grants. `redirect_uris` (1-10): https URLs, http URLs of a loopback address (any port is accepted later, RFC 8252), or a native app's private-use scheme (`com.example.app:/cb`, `cursor://…`); never a scheme ending in `script` (`javascript:`, `vbscript:`, `x-javascript:`, any case), a scheme the browser handles itself (`data:`, `file:`, `blob:`, `about:`, `view-source:`, `filesystem:`, `ws:`, `wss:`, `intent:` and the like), plain http to another host, a fragment, user information, spaces or control characters. Refused URIs answer 400 `invalid_redirect_uri`. `client_name` is shown on the consent page as the client's own claim. A client never used is forgotten after a day, a used one after 90 days without use.",
    auth: ["none"],
    body: {
      schema: registrationBody,
      contentType: "application/json",
      example: REGISTRATION_EXAMPLE,
      description: "Client metadata (RFC 7591 §2); unsupported values are replaced.",
    },
    responses: {
      201: {
        description: "The registered client",
        example: {
          client_id: "mcpc_3q2bV9kq0pN1xY7rT5sWmA8d",
          client_id_issued_at: 1764108000,
          ...REGISTRATION_EXAMPLE,
          scope: "mcp",
        },
      },
      400: {
        description: "Bad metadata (`invalid_redirect_uri`, `invalid_client_metadata`)",
        example: {
          error: "invalid_redirect_uri",
          error_description:
            "http://example.com/cb: plain http is allowed only to a loopback address (127.0.0.1, [::1], localhost)",
        },
      },
      413: {
        description: "Metadata larger than 16 KiB",
        example: { error: "invalid_client_metadata", error_description: "body too large" },
      },
      429: {
        description: "Too many registrations from this address (Retry-After)",
        example: { error: "rate_limited", error_description: "too many requests: retry after 6 s" },
      },
    },
  }, async (c) => {
    const tooMany = oauthLimited(
      c,
      `oauth-register:${clientIp(c)}`,
      s.options.rateLimits.clientRegistrationPerIp,
    );
    if (tooMany) return tooMany;
    let bytes: Uint8Array;
    try {
      bytes = await readBytes(c, MAX_REGISTRATION_BYTES);
    } catch (err) {
      if (err instanceof ApiError) {
        return oauthError(c, 413, "invalid_client_metadata", err.message);
      }
      throw err;
    }
    let metadata: unknown;
    try {
      metadata = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      metadata = undefined;
    }
    if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) {
      return oauthError(c, 400, "invalid_client_metadata", "send the metadata as a JSON object");
    }
    const result = await registerClient(s, metadata as Record<string, unknown>);
    if (!result.ok) return oauthError(c, 400, result.error, result.description);
    c.header("Cache-Control", "no-store");
    return c.json(result.client, 201);
  });

  reg.add({
    method: "post",
    path: "/oauth/revoke",
    tag: "MCP authorization",
    summary: "Revoke an MCP client's refresh or access token (RFC 7009)",
    description:
      "Ends the grant the token belongs to (its access and refresh tokens stop working). Answers 200 whether or not the token was known, as RFC 7009 §2.2 asks. Users revoke grants on the tokens page of the web UI.",
    auth: ["none"],
    body: {
      contentType: "application/x-www-form-urlencoded",
      example: "token=gwr_…&token_type_hint=refresh_token&client_id=mcpc_3q2bV9kq0pN1xY7rT5sWmA8d",
      description: "`token`, `client_id`, optional `token_type_hint`.",
    },
    responses: {
      200: { description: "Revoked, or nothing to revoke", example: {} },
      400: {
        description: "Missing token or client_id",
        example: {
          error: "invalid_request",
          error_description: "token and client_id are required",
        },
      },
      429: TOKEN_ENDPOINT_429,
    },
  }, async (c) => {
    const p = await tokenEndpointParams(c, s);
    if (p instanceof Response) return p;
    if (!p.token || !p.client_id) {
      return oauthError(c, 400, "invalid_request", "token and client_id are required");
    }
    await revokeToken(s, p.token.slice(0, 4096), p.client_id.slice(0, 100));
    c.header("Cache-Control", "no-store");
    return c.json({});
  });
}
