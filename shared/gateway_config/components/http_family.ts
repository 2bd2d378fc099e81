/**
 * What the HTTP-family endpoints (`path_prefix`) and backends (`base_url` or `targets`, `auth`, TLS) share.
 */
import { z } from "zod";
import {
  BACKEND_TLS_FIELDS,
  backendAuthProblems,
  backendAuthSchema,
  serverNameProblems,
} from "../backend_auth.ts";
import type { BackendOwner, OptionSchema, RuleProblem } from "../component_type.ts";
import { field } from "../fields.ts";
import { httpUrl, pathPrefix } from "../values.ts";
import { bothOrNeither } from "./rules.ts";

/** `path_prefix` of HTTP-family endpoints. */
export const PATH_PREFIX_DOC = "Path the endpoint serves; requests under it are routed here.";

/** An HTTP-family endpoint whose `path_prefix` must be written. */
export const requiredPrefix = (example: string): OptionSchema => ({
  doc: "HTTP-family endpoint.",
  fields: {
    path_prefix: field("string", pathPrefix(), PATH_PREFIX_DOC, { required: true, example }),
  },
});

/** `base_url` or `targets`, not both, not neither. */
export function baseUrlOrTargets(
  options: Record<string, unknown>,
  owner: BackendOwner,
): RuleProblem[] {
  const hasUrl = options.base_url !== undefined;
  const hasTargets = owner.targets.length > 0;
  if (hasUrl && hasTargets) {
    return [{ key: "base_url", message: "use base_url or targets, not both" }];
  }
  if (!hasUrl && !hasTargets) {
    return [{ key: "base_url", message: "missing required key `base_url` (or list `targets`)" }];
  }
  return [];
}

/** `auth` of the HTTP-family backends: a table checked against BACKEND_AUTH. */
export const authField = () =>
  field(
    "table",
    backendAuthSchema(),
    "Credentials sent to the upstream; see `[backends.<name>.options.auth]`.",
    { example: { type: "bearer", token: "${FHIR_TOKEN}" } },
  );

/** Problems of `auth` across its keys, at `auth.<key>`. */
export function authRules(options: Record<string, unknown>): RuleProblem[] {
  const auth = options.auth as Record<string, unknown> | undefined;
  if (!auth) return [];
  return backendAuthProblems(auth).map(([key, message]) => ({ key: `auth.${key}`, message }));
}

/** An HTTP-family backend: `base_url` or `targets`, `auth`, TLS to the upstream. */
export const httpLike = (doc: string, example: string): OptionSchema<BackendOwner> => ({
  doc,
  fields: {
    base_url: field("string", httpUrl(), "Base URL of the upstream (http:// or https://).", {
      requiredWhen: "`targets` is empty (use one or the other)",
      example,
    }),
    upstream_protocol: field(
      "string",
      z.enum(["http1", "auto"]),
      "`http1`: the gateway's pooled HTTP/1.1 client (fastest for API traffic); `auto`: Deno's " +
        "fetch, which negotiates HTTP/2 with https upstreams and streams large downloads natively.",
      { default: "http1", example: "auto" },
    ),
    auth: authField(),
    ...BACKEND_TLS_FIELDS,
  },
  rules: (o, owner) => [
    ...baseUrlOrTargets(o, owner),
    ...authRules(o),
    ...bothOrNeither(o, "client_cert_path", "client_key_path"),
    ...serverNameProblems(o),
  ],
});
