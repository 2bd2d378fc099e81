/**
 * The `cors` middleware type: its options table, as the registry (components/mod.ts) lists it.
 */
import { z } from "zod";
import type { ComponentType } from "../component_type.ts";
import { field } from "../fields.ts";
import { int } from "../values.ts";
import { headerName } from "./middleware_fields.ts";

/** A CORS origin: `*`, or `scheme://host[:port]` exactly as browsers send it. */
const corsOrigin = z.string().refine((v) => {
  if (v === "*") return true;
  try {
    return new URL(v).origin === v;
  } catch {
    return false;
  }
}, "an origin such as https://app.example.org (scheme, host, port; no path), or *");

/** `type = "cors"`: the type's option schema. */
export const corsMiddleware: ComponentType = {
  kind: "middleware",
  name: "cors",
  doc: "Cross-Origin Resource Sharing for browser clients: preflights answered by the gateway, " +
    "`Access-Control-Allow-Origin` on answers to allowed origins. List it before authentication.",
  fields: {
    allow_origins: field(
      "array of strings",
      z.array(corsOrigin).min(1, "at least one origin"),
      "Origins allowed (`https://app.example.org`), or `*` for any (not with credentials).",
      { required: true, example: ["https://viewer.example.org"] },
    ),
    allow_methods: field(
      "array of strings",
      z.array(z.string().regex(/^[A-Z]{1,20}$/, "an HTTP method in capitals")).min(1),
      "Methods a preflight may ask for.",
      {
        default: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
        example: ["GET", "POST"],
      },
    ),
    allow_headers: field(
      "array of strings",
      z.array(headerName),
      "Request headers a preflight may ask for (besides the CORS-safelisted ones).",
      { default: ["authorization"], example: ["authorization", "x-api-key"] },
    ),
    expose_headers: field(
      "array of strings",
      z.array(headerName),
      "Response headers the page may read.",
      { default: [], example: ["x-request-id", "etag"] },
    ),
    allow_credentials: field(
      "boolean",
      z.boolean(),
      "Let pages send cookies and credentials (`allow_origins` must then name origins).",
      { default: false, example: true },
    ),
    max_age_secs: field("integer", int(0, 86_400), "How long a browser may cache a preflight.", {
      default: 600,
      example: 3600,
    }),
  },
  rules: (o) =>
    o.allow_credentials === true && (o.allow_origins as string[]).includes("*")
      ? [{ key: "allow_origins", message: "with allow_credentials, name the origins (no `*`)" }]
      : [],
};
