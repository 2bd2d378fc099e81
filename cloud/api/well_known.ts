/** Discovery: JWKS, OpenID-style metadata (RFC 8414 as well), health. */
import { DEVICE_GRANT_TYPE } from "../auth/mod.ts";
import type { Services } from "../services.ts";
import type { Registry } from "./registry.ts";

/** The discovery document of the service. */
export function discovery(s: Services): Record<string, unknown> {
  const base = s.options.baseUrl;
  return {
    issuer: base,
    jwks_uri: `${base}/.well-known/jwks.json`,
    device_authorization_endpoint: `${base}/oauth/device/code`,
    token_endpoint: `${base}/oauth/token`,
    grant_types_supported: [DEVICE_GRANT_TYPE],
    response_types_supported: ["none"],
    token_endpoint_auth_methods_supported: ["none"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["RS256"],
    claims_supported: ["iss", "sub", "aud", "exp", "iat", "nbf", "jti", "user", "team"],
    service_documentation: `${base}/api/openapi.json`,
  };
}

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
