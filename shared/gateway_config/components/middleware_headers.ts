/**
 * The `headers` middleware type: its options table, as the registry (components/mod.ts) lists it.
 */
import { z } from "zod";
import type { ComponentType } from "../component_type.ts";
import { field } from "../fields.ts";
import { headerName } from "./middleware_fields.ts";

/** Headers the gateway owns (message framing, hop-by-hop): no rule may set or remove them. */
const GATEWAY_OWNED = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "proxy-connection",
]);

/** A header name a `headers` rule may touch. */
const ownHeaderName = headerName.refine((h) => !GATEWAY_OWNED.has(h.toLowerCase()), {
  message: "framing and hop-by-hop headers are the gateway's",
});

/** Header name -> value (no line breaks or NUL in values). */
const headerTable = z.record(
  ownHeaderName,
  z.string().max(8192).regex(/^[^\r\n\0]*$/, "no line breaks"),
);

/** `type = "headers"`: the type's option schema. */
export const headersMiddleware: ComponentType = {
  kind: "middleware",
  name: "headers",
  doc: "Set and remove request and response headers; `request_from_metadata` forwards " +
    "metadata such as `auth.subject`. Framing and hop-by-hop headers cannot be changed.",
  fields: {
    request_set: field("table of strings", headerTable, "Request headers to set.", {
      default: {},
      example: { "x-gateway": "edge-1" },
    }),
    request_remove: field(
      "array of strings",
      z.array(ownHeaderName),
      "Request headers to remove.",
      {
        default: [],
        example: ["cookie"],
      },
    ),
    request_from_metadata: field(
      "table of strings",
      z.record(ownHeaderName, z.string().min(1).max(100)),
      "Request header -> metadata key whose value it carries (removed when the key is unset).",
      { default: {}, example: { "x-authenticated-user": "auth.subject" } },
    ),
    response_set: field("table of strings", headerTable, "Response headers to set.", {
      default: {},
      example: { "strict-transport-security": "max-age=31536000" },
    }),
    response_remove: field(
      "array of strings",
      z.array(ownHeaderName),
      "Response headers to remove.",
      { default: [], example: ["server", "x-powered-by"] },
    ),
  },
};
