/**
 * Credentials and TLS identity of the HTTP-family backends (`http`, `fhir`, `dicomweb`, `http3`):
 * `[backends.<name>.options.auth]` and the TLS option keys. Secrets are `${VAR}` references (the
 * cloud refuses literal ones, the gateway redacts them from uploads); files are paths.
 */
import { z } from "zod";
import { field, type TableSpec } from "./fields.ts";
import { hostName, httpUrl, int, text } from "./values.ts";

/** Kinds of outbound credentials. */
export const BACKEND_AUTH_TYPES = [
  "bearer",
  "basic",
  "headers",
  "oauth2_client_credentials",
] as const;

/** How an OAuth 2.0 client authenticates at the token endpoint. */
export const CLIENT_AUTH_METHODS = [
  "client_secret_basic",
  "client_secret_post",
  "private_key_jwt",
] as const;

/** Algorithms of a `private_key_jwt` client assertion (SMART Backend Services: RS384, ES384). */
export const ASSERTION_ALGORITHMS = ["RS384", "ES384", "RS256", "ES256", "PS384", "EdDSA"] as const;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** `[backends.<name>.options.auth]`. */
export const BACKEND_AUTH: TableSpec = {
  type: field(
    "string",
    z.enum(BACKEND_AUTH_TYPES),
    "`bearer` (a token), `basic` (user and password), `headers` (static headers) or " +
      "`oauth2_client_credentials` (tokens from a token endpoint, cached and refreshed).",
    { required: true, example: "oauth2_client_credentials" },
  ),
  token: field("string", text(), "`bearer`: the token, as `${VAR}`.", {
    secret: true,
    example: "${FHIR_TOKEN}",
  }),
  token_file: field(
    "string",
    text(),
    "`bearer`: a file holding the token (re-read when it changes), instead of `token`.",
    { path: "config", example: "/run/secrets/fhir-token" },
  ),
  username: field("string", text(), "`basic`: the user name.", { example: "gateway" }),
  password: field("string", text(), "`basic`: the password, as `${VAR}`.", {
    secret: true,
    example: "${ARCHIVE_PASSWORD}",
  }),
  headers: field(
    "table of strings",
    z.record(z.string().regex(HEADER_NAME, "a header name"), z.string()),
    "`headers`: header names and values sent with every request (values may be `${VAR}`).",
    { example: { "X-Api-Key": "${VENDOR_API_KEY}" } },
  ),
  token_url: field("string", httpUrl(), "`oauth2_client_credentials`: the token endpoint.", {
    example: "https://auth.hospital.example/oauth2/token",
  }),
  client_id: field("string", text(), "`oauth2_client_credentials`: the client id.", {
    example: "edge-gateway",
  }),
  client_auth: field(
    "string",
    z.enum(CLIENT_AUTH_METHODS),
    "How the client authenticates at the token endpoint: `client_secret_basic`, " +
      "`client_secret_post`, or `private_key_jwt` (an RFC 7523 assertion signed with " +
      "`private_key_path`: SMART Backend Services).",
    { default: "client_secret_basic", example: "private_key_jwt" },
  ),
  client_secret: field(
    "string",
    text(),
    "`client_secret_basic` and `client_secret_post`: the secret, as `${VAR}`.",
    { secret: true, example: "${GATEWAY_CLIENT_SECRET}" },
  ),
  private_key_path: field(
    "string",
    text(),
    "`private_key_jwt`: the signing key, a PKCS#8 PEM file or a JWK (JSON) file.",
    { path: "config", example: "keys/backend-services.pem" },
  ),
  key_id: field(
    "string",
    text(),
    "`private_key_jwt`: `kid` of the assertion's header (default: the JWK's own `kid`).",
    { example: "gateway-2026" },
  ),
  signing_alg: field(
    "string",
    z.enum(ASSERTION_ALGORITHMS),
    "`private_key_jwt`: the assertion's algorithm.",
    { default: "RS384", example: "ES384" },
  ),
  scopes: field(
    "array of strings",
    z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "a scope token")),
    "`oauth2_client_credentials`: scopes asked for.",
    { default: [], example: ["system/Observation.rs", "system/Patient.r"] },
  ),
  audience: field(
    "string",
    text(),
    "`oauth2_client_credentials`: sent as `audience` (Auth0, Okta and others).",
    { example: "https://fhir.hospital.example" },
  ),
  resource: field(
    "string",
    httpUrl(),
    "`oauth2_client_credentials`: sent as `resource` (RFC 8707 resource indicator).",
    { example: "https://fhir.hospital.example/r4" },
  ),
  timeout_secs: field(
    "integer",
    int(1, 120),
    "`oauth2_client_credentials`: longest wait for the token endpoint.",
    { default: 10, example: 5 },
  ),
};

/** Which keys each type needs and allows (besides `type`). */
const KEYS_OF: Record<typeof BACKEND_AUTH_TYPES[number], { needs: string[][]; allows: string[] }> =
  {
    bearer: { needs: [["token", "token_file"]], allows: ["token", "token_file"] },
    basic: { needs: [["username"], ["password"]], allows: ["username", "password"] },
    headers: { needs: [["headers"]], allows: ["headers"] },
    oauth2_client_credentials: {
      needs: [["token_url"], ["client_id"]],
      allows: [
        "token_url",
        "client_id",
        "client_auth",
        "client_secret",
        "private_key_path",
        "key_id",
        "signing_alg",
        "scopes",
        "audience",
        "resource",
        "timeout_secs",
      ],
    },
  };

/** The whole `auth` table as one option value (its keys are checked against BACKEND_AUTH). */
export const backendAuthSchema = () =>
  z.strictObject(
    Object.fromEntries(
      Object.entries(BACKEND_AUTH).map((
        [k, f],
      ) => [k, k === "type" ? f.schema : f.schema.optional()]),
    ),
  );

/** Problems across the keys of an `auth` table, as `[key, message]` (keys relative to it). */
export function backendAuthProblems(auth: Record<string, unknown>): [string, string][] {
  const type = auth.type as typeof BACKEND_AUTH_TYPES[number];
  const spec = KEYS_OF[type];
  if (!spec) return [];
  const problems: [string, string][] = [];
  for (const key of Object.keys(auth)) {
    if (key !== "type" && !spec.allows.includes(key)) {
      problems.push([key, `does not apply to type = "${type}"`]);
    }
  }
  for (const alternatives of spec.needs) {
    const present = alternatives.filter((k) => auth[k] !== undefined);
    if (present.length === 0) {
      problems.push([
        alternatives[0],
        `missing \`${alternatives.join("` or `")}\` (required for type = "${type}")`,
      ]);
    } else if (present.length > 1) {
      problems.push([present[1], `use ${alternatives.join(" or ")}, not both`]);
    }
  }
  if (type === "oauth2_client_credentials") {
    const method = (auth.client_auth as string | undefined) ?? "client_secret_basic";
    if (method === "private_key_jwt") {
      if (auth.private_key_path === undefined) {
        problems.push([
          "private_key_path",
          "missing `private_key_path` (client_auth = private_key_jwt)",
        ]);
      }
      if (auth.client_secret !== undefined) {
        problems.push(["client_secret", "not used with client_auth = private_key_jwt"]);
      }
    } else {
      if (auth.client_secret === undefined) {
        problems.push(["client_secret", `missing \`client_secret\` (client_auth = ${method})`]);
      }
      for (const key of ["private_key_path", "key_id", "signing_alg"]) {
        if (auth[key] !== undefined) {
          problems.push([key, "applies only when client_auth = private_key_jwt"]);
        }
      }
    }
  }
  return problems;
}

/** TLS keys of the HTTP-family backends. */
export const BACKEND_TLS_FIELDS: TableSpec = {
  ca_path: field(
    "string",
    text(),
    "PEM CA certificates trusted for the upstream, besides the system's (a private CA).",
    { path: "config", example: "certs/hospital-ca.pem" },
  ),
  client_cert_path: field(
    "string",
    text(),
    "PEM client certificate chain presented to the upstream (mutual TLS); with `client_key_path`.",
    { path: "config", example: "certs/gateway-client.pem" },
  ),
  client_key_path: field("string", text(), "PEM private key of `client_cert_path`.", {
    path: "config",
    example: "certs/gateway-client-key.pem",
  }),
  server_name: field(
    "string",
    hostName(),
    "Name the upstream's certificate is checked against (and sent in SNI) when the host of " +
      "`base_url` is an address or another name. Pooled HTTP/1.1 client only, without a client " +
      "certificate (Deno's TLS client cannot do both).",
    { example: "fhir.hospital.internal" },
  ),
};

/** `server_name` needs the pooled client and no client certificate. */
export function serverNameProblems(o: Record<string, unknown>): { key: string; message: string }[] {
  if (o.server_name === undefined) return [];
  if (o.client_cert_path !== undefined) {
    return [{
      key: "server_name",
      message: "cannot be combined with client_cert_path (Deno's TLS client checks the host it " +
        "connects to when it presents a certificate): name the upstream by that host in base_url",
    }];
  }
  if (o.upstream_protocol === "auto") {
    return [{
      key: "server_name",
      message: 'applies only to the pooled client: not with upstream_protocol = "auto"',
    }];
  }
  return [];
}
