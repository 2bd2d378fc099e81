/**
 * Discovery: JWKS, authorization server metadata (RFC 8414, also at the OpenID path), the MCP
 * resource's protected resource metadata (RFC 9728), health.
 */
import { DEVICE_GRANT_TYPE, MCP_RESOURCE_PATH, MCP_SCOPE, mcpResourceFor } from "../auth/mod.ts";
import type { Context } from "hono";
import type { Services } from "../services.ts";
import type { Registry } from "./registry.ts";

/** The discovery document of the service. */
export function discovery(s: Services): Record<string, unknown> {
  const base = s.options.baseUrl;
  return {
    issuer: base,
    jwks_uri: `${base}/.well-known/jwks.json`,
    authorization_endpoint: `${base}/oauth/authorize`,
    device_authorization_endpoint: `${base}/oauth/device/code`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    revocation_endpoint: `${base}/oauth/revoke`,
    grant_types_supported: ["authorization_code", "refresh_token", DEVICE_GRANT_TYPE],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    code_challenge_methods_supported: ["S256"],
    scopes_supported: [MCP_SCOPE],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    authorization_response_iss_parameter_supported: true,
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["RS256"],
    claims_supported: ["iss", "sub", "aud", "exp", "iat", "nbf", "jti", "user", "team"],
    service_documentation: `${base}/api/openapi.json`,
  };
}

/**
 * The protected resource metadata of `/mcp/cloud` (RFC 9728 §2), for a client that reached the
 * service at `authority` (its Host): the resource is named on the loopback alias it used, when the
 * base URL is loopback (mcpResourceFor); the authorization server stays the base URL.
 */
export function mcpResourceMetadata(s: Services, authority?: string): Record<string, unknown> {
  return {
    resource: mcpResourceFor(s, authority),
    authorization_servers: [s.options.baseUrl],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ["header"],
    resource_name: "Healthcare gateway cloud (MCP)",
  };
}

/** The authority the client used: Host, or a trusted proxy's X-Forwarded-Host. */
export function requestAuthority(c: Context, s: Services): string | undefined {
  return (s.options.trustProxy && c.req.header("x-forwarded-host")) || c.req.header("host");
}

/** Where the MCP resource's metadata is (RFC 9728 §3.1: the resource path after the well-known). */
export const MCP_RESOURCE_METADATA_PATH =
  `/.well-known/oauth-protected-resource${MCP_RESOURCE_PATH}`;

const JWKS_EXAMPLE = {
  keys: [{
    kty: "RSA",
    n: "0vx7agoebGcQSuuPiLJXZpt…",
    e: "AQAB",
    kid: "k3Jv1s7Q2aX9",
    alg: "RS256",
    use: "sig",
  }],
};

/** Mounts the discovery and health routes. */
export function mountWellKnown(reg: Registry, s: Services): void {
  reg.add({
    method: "get",
    path: "/.well-known/jwks.json",
    tag: "Discovery",
    summary: "Public keys that verify user and machine tokens (JWKS)",
    description:
      "Every published key has a `kid`; after a rotation the old key stays here until every token it signed has expired.",
    auth: ["none"],
    responses: { 200: { description: "The JWK set", example: JWKS_EXAMPLE } },
  }, async (c) => {
    c.header("Cache-Control", "public, max-age=300");
    return c.json(await s.keys.jwks());
  });
  for (
    const path of ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"]
  ) {
    reg.add({
      method: "get",
      path,
      tag: "Discovery",
      summary: path.endsWith("openid-configuration")
        ? "OpenID-style discovery metadata"
        : "OAuth 2.0 authorization server metadata (RFC 8414)",
      auth: ["none"],
      responses: {
        200: {
          description: "Metadata",
          example: discovery({ options: { baseUrl: "https://cloud.example.com" } } as Services),
        },
      },
    }, (c) => {
      c.header("Cache-Control", "public, max-age=300");
      return c.json(discovery(s));
    });
  }
  // The path-suffixed location (RFC 9728 §3.1) and the bare one, which clients try next.
  for (const path of [MCP_RESOURCE_METADATA_PATH, "/.well-known/oauth-protected-resource"]) {
    reg.add({
      method: "get",
      path,
      tag: "MCP authorization",
      summary: "OAuth 2.0 protected resource metadata of the MCP endpoint (RFC 9728)",
      description:
        "Named by the `resource_metadata` parameter of the `WWW-Authenticate` header of a 401 from `/mcp/cloud`: MCP clients learn here which authorization server to use (this service) and the resource indicator to ask tokens for.",
      auth: ["none"],
      responses: {
        200: {
          description: "Metadata",
          example: mcpResourceMetadata(
            { options: { baseUrl: "https://cloud.example.com" } } as Services,
          ),
        },
      },
    }, (c) => {
      // The document depends on the Host it was asked by (a loopback alias): caches must know.
      c.header("Cache-Control", "public, max-age=300");
      c.header("Vary", "Host");
      return c.json(mcpResourceMetadata(s, requestAuthority(c, s)));
    });
  }
  reg.add({
    method: "get",
    path: "/healthz",
    tag: "Discovery",
    summary: "Liveness: the process answers",
    auth: ["none"],
    responses: { 200: { description: "The process answers", example: { status: "ok" } } },
  }, (c) => c.json({ status: "ok" }));
  reg.add({
    method: "get",
    path: "/readyz",
    tag: "Discovery",
    summary: "Readiness: the KV store answers",
    auth: ["none"],
    responses: {
      200: { description: "Ready", example: { status: "ready" } },
      503: {
        description: "KV unreachable",
        example: { error: { code: "not_ready", message: "the KV store does not answer" } },
      },
    },
  }, async (c) => {
    try {
      await s.store.kv.get(["health"]);
      return c.json({ status: "ready" });
    } catch {
      return c.json({ error: { code: "not_ready", message: "the KV store does not answer" } }, 503);
    }
  });
}
