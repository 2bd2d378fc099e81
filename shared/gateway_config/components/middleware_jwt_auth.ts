/**
 * The `jwt_auth` middleware type: its options table, as the registry (components/mod.ts) lists it.
 */
import { z } from "zod";
import type { ComponentType } from "../component_type.ts";
import { field } from "../fields.ts";
import { httpUrl, int, text } from "../values.ts";
import { forwardCredentials, realmField } from "./middleware_fields.ts";

/** Signature algorithms `jwt_auth` may accept: asymmetric ones only. */
const JWT_ALGORITHM_NAMES = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
] as const;

/** `type = "jwt_auth"`: the type's option schema. */
export const jwtAuthMiddleware: ComponentType = {
  kind: "middleware",
  name: "jwt_auth",
  doc: "OAuth 2.0 bearer tokens that are JWTs, verified against the issuer's keys (a JWKS URL " +
    "or file): signature, `iss`, `aud`, expiry, required claims and scopes. `sub` becomes " +
    "`auth.subject`.",
  fields: {
    jwks_url: field("string", httpUrl(), "The issuer's JWKS (e.g. its `jwks_uri`).", {
      requiredWhen: "`jwks_path` is not set",
      example: "https://login.example.org/oauth2/jwks",
    }),
    jwks_path: field("string", text(), "A JWKS file of public keys, instead of `jwks_url`.", {
      path: "config",
      example: "issuer-keys.json",
    }),
    issuer: field("string", text(), "Required `iss` of tokens.", {
      required: true,
      example: "https://login.example.org",
    }),
    audience: field(
      "array of strings",
      z.array(text()).min(1, "at least one audience"),
      "Accepted `aud` values (a token must name one of them).",
      { required: true, example: ["https://gateway.example.org/fhir"] },
    ),
    algorithms: field(
      "array of strings",
      z.array(z.enum(JWT_ALGORITHM_NAMES)).min(1, "at least one algorithm"),
      "Accepted signature algorithms (asymmetric only: `none` and HMAC are never accepted).",
      { default: ["RS256", "ES256"], example: ["RS256", "PS256", "ES256", "EdDSA"] },
    ),
    clock_skew_secs: field(
      "integer",
      int(0, 300),
      "Seconds of clock difference tolerated for `exp` and `nbf`.",
      { default: 60, example: 30 },
    ),
    required_scopes: field(
      "array of strings",
      z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "a scope token")),
      "Scopes every token must carry (else 403 insufficient_scope).",
      { default: [], example: ["lab.orders"] },
    ),
    required_claims: field(
      "array of strings",
      z.array(z.string().min(1).max(100)),
      "Claims every token must carry (besides `iss`, `aud` and `exp`).",
      { default: [], example: ["sub"] },
    ),
    realm: realmField("fhir"),
    forward_credentials: forwardCredentials("the token"),
    smart: field(
      "boolean",
      z.boolean(),
      "Enforce SMART on FHIR scopes (v1 and v2) per resource type and interaction; `patient/` " +
        "scopes confine requests and answers to the token's `patient` compartment (FHIR R4 " +
        "CompartmentDefinition; fails closed, see docs/security.md).",
      { default: false, example: true },
    ),
    smart_shared_types: field(
      "array of strings",
      z.array(z.string().regex(/^[A-Z][A-Za-z]{0,63}$/, "a FHIR resource type")),
      "Resource types outside every patient compartment (Medication, Practitioner, …) that " +
        "`patient/` scopes may read and search, and that may appear in their answers.",
      { default: [], example: ["Medication", "Practitioner", "Organization"] },
    ),
  },
  rules: (o) => [
    ...((o.jwks_url === undefined) === (o.jwks_path === undefined)
      ? [{ key: "jwks_url", message: "set exactly one of `jwks_url` and `jwks_path`" }]
      : []),
    ...((o.smart_shared_types as unknown[] | undefined)?.length && o.smart !== true
      ? [{ key: "smart_shared_types", message: "`smart_shared_types` needs `smart = true`" }]
      : []),
  ],
};
